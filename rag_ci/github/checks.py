"""The rag-ci check run (Checks API): every annotation of a run, on the pull request's diff.

Workflow commands show 10 annotations per step; a check run holds them all, 50 per request:
POST check-runs with the first 50 (and the conclusion), then PATCH check-runs/{id} with each
further 50 (GitHub appends them). Its name is fixed, `CHECK_RUN_NAME`, so branch protection
can require it (docs/action.md). It needs `permissions: checks: write`; without it GitHub
answers 403 and the caller says so in one quiet line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from github.Repository import Repository

CHECK_RUN_NAME = "rag-ci gate"
BATCH = 50  # the Checks API takes at most 50 annotations per request
SUMMARY_LIMIT = 65535  # output.summary and output.text, in characters
_LEVELS = {"failure", "warning", "notice"}


def annotation_json(level: str, title: str, message: str, path: str, line: int) -> dict[str, Any]:
    """One annotation as the Checks API takes it: a path and a line are required. A finding
    about a file as a whole has no line: it is no check-run annotation (rag_ci.action.annotations
    names it in the summary), never one at line 1, which GitHub shows outside the diff."""
    assert level in _LEVELS and line >= 1
    return {
        "path": path,
        "start_line": line,
        "end_line": line,
        "annotation_level": level,
        "title": title[:255],
        "message": message[: 64 * 1024],
    }


def publish_check_run(
    repo: Repository,
    *,
    head_sha: str,
    conclusion: str,
    title: str,
    summary: str,
    annotations: Sequence[dict[str, Any]],
    details_url: str | None = None,
) -> str:
    """Create the completed check run with every annotation (in batches); returns its URL.
    Calls: POST check-runs, then one PATCH check-runs/{id} per further 50 annotations."""

    def output(batch: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return {"title": title[:255], "summary": summary[:SUMMARY_LIMIT], "annotations": list(batch)}

    extra: dict[str, Any] = {"details_url": details_url} if details_url else {}
    check = repo.create_check_run(
        name=CHECK_RUN_NAME,
        head_sha=head_sha,
        status="completed",
        conclusion=conclusion,
        output=output(annotations[:BATCH]),
        **extra,
    )
    for start in range(BATCH, len(annotations), BATCH):
        check.edit(output=output(annotations[start : start + BATCH]))
    return check.html_url or check.url
