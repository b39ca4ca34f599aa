"""Everything the GitHub Action reads from its environment, in one place.

The action's inputs reach the container as environment variables that action.yml maps
explicitly (`RAG_CI_*`), next to the `GITHUB_*` variables the runner sets and the event
payload at `GITHUB_EVENT_PATH`. `Settings.from_environ` turns all of it into one frozen
object; no other module reads `os.environ` for the action.

Secrets (the GitHub token, judge API keys) are held as `Secret`, whose repr and str never
show the value, so a log line, a traceback or an f-string cannot leak them by accident.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from rag_ci.core.config.providers import PROVIDERS
from rag_ci.core.reporting.comment_when import comment_when
from rag_ci.errors import RagCiError
from rag_ci.safety.secret import Secret

MODES = ("auto", "pr", "baseline", "full", "comment")

# Judge keys: action input env var -> the variable the judge libraries read. The action
# copies a non-empty input into the library's variable (and never overwrites a value the
# workflow already set with `env:` when the input is empty).
# One per provider the action takes a key input for (the provider table's `action_input`).
JUDGE_KEY_VARIABLES = {
    f"RAG_CI_{facts.api_key_env}": facts.api_key_env
    for facts in PROVIDERS.values()
    if facts.action_input and facts.api_key_env
}

# Where the GitHub token may sit in the environment. All of them are removed before the
# user's RAG starts: the target is pull-request code and has no business with the token.
# (`INPUT_GITHUB-TOKEN` is the copy the runner gives every Docker action for each input.)
TOKEN_VARIABLES = ("RAG_CI_GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "GITHUB_TOKEN")


def _bool(name: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("", "0", "false", "no", "off"):
        return False
    raise RagCiError(f"input {name}: expected true or false, got {value!r}")


def _login(name: str, value: str) -> str | None:
    """A GitHub login (`octocat`, `my-app[bot]`), or None when not given."""
    value = value.strip()
    if not value:
        return None
    if not re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?", value):
        raise RagCiError(f"input {name}: expected a GitHub login such as `my-app[bot]`, got {value!r}")
    return value


def _comment_when(value: str) -> str:
    try:
        return comment_when(value)
    except ValueError as exc:
        raise RagCiError(f"input {exc}") from None


def _relative_path(name: str, value: str) -> PurePosixPath:
    """A path inside the workspace: relative, and no `..` that climbs out of it."""
    path = PurePosixPath(value.strip() or ".")
    if path.is_absolute() or ".." in path.parts:
        raise RagCiError(
            f"input {name}: give a path relative to the repository root, without '..' (got {value!r})"
        )
    return path


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings:
    # --- action inputs -------------------------------------------------------------
    config: PurePosixPath = PurePosixPath("rag-ci.yml")  # relative to working_directory
    github_token: Secret = dataclasses.field(default_factory=lambda: Secret(""))
    judge_keys: Mapping[str, Secret] = dataclasses.field(default_factory=dict)  # library var -> key
    mode: str = "auto"
    rebaseline: bool = False
    fail_on_regression: bool = True
    baseline_artifact: str = "rag-ci-baseline"
    working_directory: PurePosixPath = PurePosixPath(".")
    data_branch: str = "rag-ci-data"
    output_dir: PurePosixPath = PurePosixPath("rag-ci-output")  # relative to the workspace
    comment_artifact: str = "rag-ci-comment"
    comment_author: str | None = None  # the login the token comments as (a GitHub App's `<slug>[bot]`)
    comment: str = "always"  # when a new PR comment is posted (rag_ci.core.reporting.comment_when)
    junit: bool = False  # also write junit.xml beside results.json
    # --- the runner's variables ----------------------------------------------------
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    repository: str = ""
    event_name: str = ""
    event: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    sha: str | None = None
    ref: str | None = None
    run_id: str | None = None
    run_attempt: str | None = None
    workspace: Path = Path(".")
    step_summary: Path | None = None
    github_output: Path | None = None
    in_actions: bool = False  # GITHUB_ACTIONS=true: workflow commands are read by a runner

    @classmethod
    def runner_only(cls, environ: Mapping[str, str]) -> Settings:
        """Only the runner's own channels (step summary, outputs, GITHUB_ACTIONS), which cannot
        be invalid: enough to report that the inputs are, where the user looks."""
        return cls(**_runner_channels(_getter(environ)))

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Settings:
        get = _getter(environ)
        mode = get("RAG_CI_MODE", "auto").strip().lower()
        if mode not in MODES:
            raise RagCiError(f"input mode: expected one of {', '.join(MODES)}, got {mode!r}")
        event_path = get("GITHUB_EVENT_PATH")
        return cls(
            config=_relative_path("config", get("RAG_CI_CONFIG", "rag-ci.yml")),
            github_token=Secret(get("RAG_CI_GITHUB_TOKEN") or get("GITHUB_TOKEN")),
            judge_keys={
                library_var: Secret(environ[input_var].strip())
                for input_var, library_var in JUDGE_KEY_VARIABLES.items()
                if environ.get(input_var, "").strip()
            },
            mode=mode,
            rebaseline=_bool("rebaseline", get("RAG_CI_REBASELINE")),
            fail_on_regression=_bool("fail-on-regression", get("RAG_CI_FAIL_ON_REGRESSION", "true")),
            baseline_artifact=get("RAG_CI_BASELINE_ARTIFACT", "rag-ci-baseline").strip(),
            working_directory=_relative_path("working-directory", get("RAG_CI_WORKING_DIRECTORY", ".")),
            data_branch=get("RAG_CI_DATA_BRANCH", "rag-ci-data").strip(),
            output_dir=_relative_path("output-dir", get("RAG_CI_OUTPUT_DIR", "rag-ci-output")),
            comment_artifact=get("RAG_CI_COMMENT_ARTIFACT", "rag-ci-comment").strip(),
            comment_author=_login("comment-author", get("RAG_CI_COMMENT_AUTHOR")),
            comment=_comment_when(get("RAG_CI_COMMENT", "always")),
            junit=_bool("junit", get("RAG_CI_JUNIT")),
            api_url=get("GITHUB_API_URL", "https://api.github.com").rstrip("/"),
            server_url=get("GITHUB_SERVER_URL", "https://github.com").rstrip("/"),
            repository=get("GITHUB_REPOSITORY"),
            event_name=get("GITHUB_EVENT_NAME"),
            event=_read_event(event_path) if event_path else {},
            sha=get("GITHUB_SHA") or None,
            ref=get("GITHUB_REF") or None,
            run_id=get("GITHUB_RUN_ID") or None,
            run_attempt=get("GITHUB_RUN_ATTEMPT") or None,
            workspace=Path(get("GITHUB_WORKSPACE", ".")),
            **_runner_channels(get),
        )

    # --- paths ---------------------------------------------------------------------
    @property
    def project_dir(self) -> Path:
        return self.workspace / self.working_directory

    @property
    def config_path(self) -> Path:
        return self.project_dir / self.config

    @property
    def output_path(self) -> Path:
        return self.workspace / self.output_dir

    def relative_to_workspace(self, path: Path) -> str:
        """Paths in step outputs must be relative: the container's /github/workspace is a
        different absolute path on the runner, where the next steps read them."""
        try:
            return path.relative_to(self.workspace).as_posix()
        except ValueError:
            return path.as_posix()

    # --- the event -----------------------------------------------------------------
    @property
    def pull_request(self) -> Mapping[str, Any]:
        return self.event.get("pull_request") or {}

    @property
    def pr_number(self) -> int | None:
        number = self.pull_request.get("number")
        return int(number) if number is not None else None

    @property
    def pr_base_ref(self) -> str | None:
        """The branch the pull request (or the merge queue) merges into."""
        if self.merge_group:
            return str(self.merge_group.get("base_ref") or "").removeprefix("refs/heads/") or None
        return (self.pull_request.get("base") or {}).get("ref")

    @property
    def pr_base_sha(self) -> str | None:
        """The base commit: a pull request's base, or the merge queue's (merge_group.base_sha)."""
        if self.merge_group:
            return self.merge_group.get("base_sha") or None
        return (self.pull_request.get("base") or {}).get("sha")

    @property
    def merge_group(self) -> Mapping[str, Any]:
        """A merge_group event's group: the queue's commit (head_sha), built on base_sha."""
        return (self.event.get("merge_group") or {}) if self.event_name == "merge_group" else {}

    @property
    def gated_pr_number(self) -> int | None:
        """The pull request this run gates: the event's, or the one a merge queue's branch names
        (`gh-readonly-queue/main/pr-123-<sha>`); recorded in results.json as a pull request's run."""
        if self.pr_number is not None:
            return self.pr_number
        match = re.search(r"/pr-(\d+)-[0-9a-f]+$", str(self.merge_group.get("head_ref") or ""))
        return int(match[1]) if match else None

    @property
    def config_in_repository(self) -> str:
        """The config's path from the repository root, as the contents API names it."""
        return (self.working_directory / self.config).as_posix()

    @property
    def pr_head_sha(self) -> str | None:
        return (self.pull_request.get("head") or {}).get("sha")

    @property
    def check_sha(self) -> str | None:
        """The commit the `rag-ci gate` check run goes on: a pull request's head, or the merge
        queue's commit (merge_group.head_sha), which is where a queue waits for required checks."""
        if self.pr_number is not None:
            return self.pr_head_sha
        return self.merge_group.get("head_sha") or None

    @property
    def pr_is_from_fork(self) -> bool:
        head_repo = (self.pull_request.get("head") or {}).get("repo") or {}
        return bool(head_repo) and head_repo.get("full_name") != self.repository

    @property
    def default_branch(self) -> str | None:
        default = (self.event.get("repository") or {}).get("default_branch")
        if default is None and self.event_name == "schedule":
            return self.branch  # scheduled runs are on the default branch; old payloads omit it
        return default

    @property
    def branch(self) -> str | None:
        """The branch this run is on, for push / workflow_dispatch / schedule."""
        if self.ref and self.ref.startswith("refs/heads/"):
            return self.ref[len("refs/heads/") :]
        return None

    @property
    def on_default_branch(self) -> bool:
        return self.branch is not None and self.branch == self.default_branch

    @property
    def push_before_sha(self) -> str | None:
        """The previous tip of the pushed branch: the baseline we want is from there."""
        before = self.event.get("before")
        return before if before and set(before) != {"0"} else None

    @property
    def run_url(self) -> str | None:
        if not (self.repository and self.run_id):
            return None
        url = f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
        return f"{url}/attempts/{self.run_attempt}" if self.run_attempt and self.run_attempt != "1" else url

    def secrets(self) -> list[Secret]:
        return [s for s in (self.github_token, *self.judge_keys.values()) if s]


def _getter(environ: Mapping[str, str]) -> Callable[..., str]:
    def get(name: str, default: str = "") -> str:
        value = environ.get(name, "")
        return value if value.strip() else default

    return get


def _runner_channels(get: Callable[..., str]) -> dict[str, Any]:
    return {
        "step_summary": Path(get("GITHUB_STEP_SUMMARY")) if get("GITHUB_STEP_SUMMARY") else None,
        "github_output": Path(get("GITHUB_OUTPUT")) if get("GITHUB_OUTPUT") else None,
        "in_actions": get("GITHUB_ACTIONS") == "true",
    }


def _read_event(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RagCiError(f"cannot read the event payload at GITHUB_EVENT_PATH={path}: {exc}") from None
    return data if isinstance(data, dict) else {}
