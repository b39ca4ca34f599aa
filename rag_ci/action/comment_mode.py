"""The action's `comment` mode (workflow_run): post the comment a fork PR's run could not.

A pull request from a fork runs with a read-only token, so it saves its comment as an
artifact; a `workflow_run` workflow, which has a write token and runs none of the fork's
code, posts it here (docs/action.md, "Pull requests from forks").
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from rag_ci.action.outputs import COMMENT_FILE
from rag_ci.action.settings import Settings
from rag_ci.errors import RagCiError
from rag_ci.gate import EXIT_PASS
from rag_ci.github.client import GitHubRepo
from rag_ci.github.comments import COMMENT_MARKER, untrusted_comment_body
from rag_ci.github.workflow import Runner


def comment_mode(settings: Settings, github: GitHubRepo, runner: Runner) -> int:
    """workflow_run: post the comment that a PR run could not post (read-only fork token).

    Trust: the run id, head owner/branch/sha come from the event GitHub wrote, never from
    the artifact; the artifact's text is the fork's, so it is checked and defused."""
    run = settings.event.get("workflow_run") or {}
    if run.get("event") != "pull_request":
        runner.notice("comment mode: the triggering run was not a pull_request run; nothing to post.")
        return EXIT_PASS
    artifact = github.run_artifact(int(run["id"]), settings.comment_artifact)
    if artifact is None:
        runner.info(
            f"[rag-ci] run {run['id']} saved no `{settings.comment_artifact}` artifact: it commented itself."
        )
        return EXIT_PASS
    numbers = [p.get("number") for p in run.get("pull_requests") or [] if p.get("number")]
    head_repo = run.get("head_repository") or {}
    pr_number = (
        numbers[0]
        if numbers
        else github.open_pr_for_head(
            (head_repo.get("owner") or {}).get("login", ""), run.get("head_branch", ""), run.get("head_sha")
        )
    )
    if pr_number is None:
        runner.warning("comment mode: no open pull request matches the triggering run; nothing posted.")
        return EXIT_PASS
    with tempfile.TemporaryDirectory(prefix="rag-ci-comment-") as tmp:
        path = github.download_file(artifact, COMMENT_FILE, Path(tmp) / COMMENT_FILE)
        if path is None:
            runner.warning(
                f"the `{settings.comment_artifact}` artifact holds no {COMMENT_FILE}; nothing posted."
            )
            return EXIT_PASS
        try:
            body = untrusted_comment_body(
                path.read_text(encoding="utf-8", errors="replace"), _origin(run, head_repo)
            )
        except ValueError as exc:
            raise RagCiError(str(exc)) from None
    url = github.upsert_comment(int(pr_number), body, COMMENT_MARKER)
    runner.info(f"[rag-ci] comment: {url}")
    runner.set_outputs({"comment-url": url})
    return EXIT_PASS


def _origin(run: dict, head_repo: dict) -> str:
    """'workflow run 77 on contributor/rag@1111111', from the event GitHub wrote (never the artifact),
    reduced to characters that cannot format the banner."""
    repo = re.sub(r"[^A-Za-z0-9._/-]", "", str(head_repo.get("full_name") or "a fork"))[:100]
    sha = re.sub(r"[^0-9a-f]", "", str(run.get("head_sha") or ""))[:7] or "unknown"
    return f"workflow run {int(run['id'])} on {repo}@{sha}"
