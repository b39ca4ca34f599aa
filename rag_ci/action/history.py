"""What an evaluating run keeps beyond its report: the line it appends to the data branch's
history (its trend and the known-flaky marks), and the full run's blind audit sample.

Each function is handed the settings, the GitHub and the runner it works with, so this module
needs nothing of the evaluation (rag_ci.action.evaluation) that calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rag_ci.action.settings import Settings
from rag_ci.core.comparison.history import HISTORY_FILE, dump_line, history_line
from rag_ci.core.results import RunResult
from rag_ci.errors import RagCiError
from rag_ci.gate import Acceptance, History, accepted_in_force
from rag_ci.github.client import GitHubError, GitHubRepo
from rag_ci.github.workflow import Runner

AUDIT_DIR, AUDIT_FRACTION = "audit", 0.1  # the full run's audit sample, inside the output folder


def read_history(settings: Settings, github: GitHubRepo, runner: Runner, *, comparing: bool) -> History:
    """The data branch's history; when the run is compared, its known-flaky marks vouched for:
    only the lines the action wrote (verified commits of its account) count."""
    try:
        history = History.of_text(github.read_data_file(settings.data_branch, HISTORY_FILE))
    except GitHubError as exc:
        runner.warning(f"history not read (no trend, no known-flaky questions, no judge calibration): {exc}")
        return History.of_text(None)
    if not comparing or not history.marked:
        return history.with_vouched(set())
    try:
        return history.with_vouched(
            github.lines_written_by_us(settings.data_branch, HISTORY_FILE, history.marked)
        )
    except GitHubError as exc:
        runner.warning(f"could not check who wrote the history's known-flaky marks, so none is used: {exc}")
        return history.with_vouched(set())


def warn_skipped_history_lines(settings: Settings, runner: Runner, history: History) -> None:
    """A bad history line is skipped, never fatal: say which, once the run is reported."""
    if history.problems:
        runner.warning(
            f"{HISTORY_FILE} on {settings.data_branch}: skipped {len(history.problems)} unreadable line(s): "
            + "; ".join(history.problems[:10]),
            title="rag-ci: history",
        )


def append_history(
    settings: Settings,
    github: GitHubRepo,
    runner: Runner,
    head: RunResult,
    accepted: Callable[[], tuple[Acceptance, ...]],
) -> None:
    """Append this run's line to the data branch's history. `accepted` reads the accepted file
    when the line is written: a file that cannot be read leaves the line without its acceptances."""
    s = settings
    try:
        in_force = accepted_in_force(accepted(), head)
    except RagCiError as exc:
        runner.warning(f"accepted file not recorded in the history: {exc}")
        in_force = []
    line = dump_line(history_line(head, run_url=s.run_url, event=s.event_name, accepted=in_force))
    try:
        github.append_data_line(
            s.data_branch, HISTORY_FILE, line, message=f"rag-ci: history for {(s.sha or 'unknown')[:12]}"
        )
        runner.info(f"[rag-ci] appended a line to {HISTORY_FILE} on branch {s.data_branch}")
    except GitHubError as exc:
        runner.warning(f"history not recorded: {exc}", title="rag-ci: history")


def write_audit_sample(
    settings: Settings, runner: Runner, output: Path, head: RunResult, baseline: RunResult | None
) -> None:
    """A full run (before a release) leaves a blind audit sample in the report artifact."""
    from rag_ci.files import audit_sample

    folder = output / AUDIT_DIR
    try:
        sample = audit_sample.write_audit_sample(head, folder, AUDIT_FRACTION, seed=0, baseline=baseline)
    except (OSError, RagCiError) as exc:
        runner.warning(f"audit sample not written: {exc}", title="rag-ci: audit sample")
        return
    where = f"`{AUDIT_DIR}/{audit_sample.PAGE_FILE}` in the `rag-ci-report` artifact"
    link = f"[{where}]({settings.run_url}#artifacts)" if settings.run_url else where
    runner.add_summary(
        f"### Audit sample\n\n{len(sample.items)} answers ({AUDIT_FRACTION:.0%} of each corpus × verdict, plus this "
        f"run's regressions, gains and unstable verdicts) to label by hand: {link}. Then "
        "`rag-ci calibrate labels.yml results.json --record --history eval_history.jsonl` (docs/judges.md)."
    )
