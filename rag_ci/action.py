"""The GitHub Action: decide what to do from the event, do it, report, set the exit code.

`main()` wires the real things (environment, PyGithub, the engine); `action()` takes them
as arguments so tests can hand it a GitHub connected to a fake server, or a canned run.

    pull_request            -> pr:       run, compare with the baseline, comment, gate
    push to default branch  -> baseline: run (verdict cache from the last baseline), history
    workflow_dispatch/cron  -> full:     run without cache, compare, history; or re-baseline
    workflow_run            -> comment:  post the comment a fork PR's run saved (fork-safe)

A pull request is gated by the baseline's recorded policy (gate, metrics, judge), not by
the rag-ci.yml it may have edited; its own changes are previewed in the comment.

Exit codes: 0 pass (also bootstrap: no baseline artifact at all), 1 the gate fails: a
regression, a question that got worse or a routing leak (with `fail-on-regression`), 2 the
action could not do its job (bad input, GitHub unreachable, a corrupt, unreadable or broken
baseline artifact, a baseline of another schema, a full run whose metrics are not all
comparable with the baseline) or the run is broken: more errors than `gate.max_error_rate`
allows, and then it is neither a baseline nor a history line.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import tempfile
import traceback
from datetime import datetime, timezone
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rag_ci.core.calibration_status import statuses_from_history, uncalibrated_reason
from rag_ci.core.carry import carry_forward
from rag_ci.core.compare import REBASELINE_HINT, Comparison, compare
from rag_ci.accepted_file import accepted_path, read_accepted
from rag_ci.action_outputs import COMMENT_FILE, REPORT_HTML, RESULTS_FILE, annotate_regressions, step_outputs, write_reports
from rag_ci.core.accepted import apply_accepted, in_force
from rag_ci.core.history import HISTORY_FILE, dump_line, history_line, known_flaky, parse_history, trend_summary
from rag_ci.core.policy import PinnedPolicy, pin_to_baseline
from rag_ci.core.render import render_markdown
from rag_ci.core.results import RunResult
from rag_ci.engine import Project, RunContext, load_project, run_project
from rag_ci.errors import IncompatibleBaseline, RagCiError
from rag_ci.github.client import CannotWrite, GitHubError, GitHubRepo, connect
from rag_ci.github.comments import COMMENT_MARKER, comment_body, untrusted_comment_body
from rag_ci.github.workflow import Runner
from rag_ci.signals import terminate_like_interrupt
from rag_ci.settings import JUDGE_KEY_VARIABLES, TOKEN_VARIABLES, Settings
from rag_ci.storage import load_results, save_results
from rag_ci.targets.processes import protect_output_dir, set_project_dir

EXIT_PASS, EXIT_REGRESSION, EXIT_ERROR = 0, 1, 2
# What the core's neutral REBASELINE_HINT means for a repository using the action.
ACTIONS_REBASELINE_HINT = (
    "Re-baseline: run the rag-ci workflow on the base branch with `workflow_dispatch` and "
    "`rebaseline: true` (or run `rag-ci run` on main and replace the baseline artifact)."
)
TREND_POINTS = 10
AUDIT_DIR, AUDIT_FRACTION = "audit", 0.1  # the full run's audit sample, inside the output folder

# (project, output, baseline, full, context) -> the run; the real one starts the user's RAG.
Evaluate = Callable[[Project, Path, "RunResult | None", bool, RunContext], RunResult]


def run_engine(project: Project, output: Path, baseline: RunResult | None, full: bool, context: RunContext) -> RunResult:
    # A run that is not for a pull request may become the baseline: it samples each
    # question `baseline.samples` times so the baseline knows each pass rate (docs/noise.md).
    samples = project.config.baseline.samples if context.pr_number is None else 1
    return asyncio.run(run_project(project, output=output, baseline=baseline, full=full, run_context=context,
                                   progress=True, samples=samples))


def main() -> int:
    terminate_like_interrupt()
    runner = Runner(
        step_summary=Path(os.environ["GITHUB_STEP_SUMMARY"]) if os.environ.get("GITHUB_STEP_SUMMARY") else None,
        github_output=Path(os.environ["GITHUB_OUTPUT"]) if os.environ.get("GITHUB_OUTPUT") else None,
        in_actions=os.environ.get("GITHUB_ACTIONS") == "true",
    )
    try:
        settings = Settings.from_environ(os.environ)
    except RagCiError as exc:
        runner.error(str(exc), title="rag-ci: invalid input")
        return EXIT_ERROR
    for secret in settings.secrets():
        runner.mask(secret.reveal())
    _prepare_process_environment(settings)
    github = connect(settings.api_url, settings.github_token, settings.repository)
    try:
        return action(settings, github, runner)
    except Exception:  # a bug: show it, but exit 2, not 1, which means "regression"
        traceback.print_exc()
        runner.error("rag-ci stopped on an internal error (traceback above); please report it.", title="rag-ci")
        return EXIT_ERROR


def _prepare_process_environment(settings: Settings) -> None:
    """Once `Settings` holds them, the credentials leave this process's environment: the
    judge keys reach the judge's SDK client as arguments (RunContext.judge_keys), and
    nothing the user's RAG (pull-request code) could inherit or find in os.environ is left.
    The runner's INPUT_* copies of every input go too."""
    for name in [n for n in os.environ if n.startswith("INPUT_")]:
        os.environ.pop(name, None)
    for name in (*JUDGE_KEY_VARIABLES, *TOKEN_VARIABLES):
        os.environ.pop(name, None)
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")


def in_actions_words(message: str) -> str:
    """A core message with its re-baseline hint told the action's way."""
    return message.replace(REBASELINE_HINT, ACTIONS_REBASELINE_HINT)


def resolve_mode(settings: Settings) -> str | None:
    """The mode to run, or None when this event has nothing to do (explained by the caller)."""
    if settings.mode != "auto":
        return settings.mode
    event = settings.event_name
    if event == "pull_request":
        return "pr"
    if event == "pull_request_target":
        raise RagCiError(
            "rag-ci does not run on `pull_request_target` by itself: that event has a write token and "
            "secrets, and evaluating the PR's code there hands both to it. Run on `pull_request`, and post "
            "fork comments from a `workflow_run` workflow (docs/action.md). Set `mode: pr` to override."
        )
    if event == "push":
        return "baseline" if settings.on_default_branch else None
    if event in ("workflow_dispatch", "schedule"):
        return "full"
    if event == "workflow_run":
        return "comment"
    raise RagCiError(f"rag-ci does not know what to do on `{event or 'no event'}`; set the `mode` input (pr, baseline, full, comment)")


def action(settings: Settings, github: GitHubRepo, runner: Runner, *, evaluate: Evaluate = run_engine) -> int:
    try:
        mode = resolve_mode(settings)
        if mode is None:
            runner.notice(f"rag-ci evaluates pushes to the default branch only; nothing to do on {settings.ref}.")
            return EXIT_PASS
        runner.info(f"[rag-ci] mode: {mode} (event: {settings.event_name})")
        if mode == "comment":
            return comment_mode(settings, github, runner)
        return Evaluation(settings, github, runner, evaluate).run(mode)
    except (RagCiError, GitHubError) as exc:
        message = in_actions_words(str(exc))
        runner.error(message, title="rag-ci")
        runner.add_summary("## rag-ci: error\n\n```\n" + message.replace("```", "'''") + "\n```")
        runner.set_outputs({"verdict": "error"})
        return EXIT_ERROR


@dataclass
class Outcome:
    verdict: str  # pass | fail | bootstrap | incompatible | rebaseline | baseline | broken
    comparison: Comparison | None = None
    notice: str | None = None


class Evaluation:
    """One evaluating run (pr, baseline or full): the steps they share, in order."""

    def __init__(self, settings: Settings, github: GitHubRepo, runner: Runner, evaluate: Evaluate):
        self.settings, self.github, self.runner, self.evaluate = settings, github, runner, evaluate
        self.output = settings.output_path
        set_project_dir(settings.project_dir)
        protect_output_dir(self.output)

    def run(self, mode: str) -> int:
        s = self.settings
        project = load_project(s.config_path)
        if mode == "pr":
            if s.pr_number is None or not s.pr_base_ref:
                raise RagCiError("mode pr needs a pull_request event (no pull_request in the event payload)")
            base_branch = s.pr_base_ref
            prefer = lambda: self.github.merge_base(base_branch, s.pr_head_sha) if s.pr_head_sha else None  # noqa: E731
        else:
            base_branch = s.default_branch or s.branch or "main"
            prefer = lambda: s.push_before_sha  # noqa: E731
        skip_baseline = mode == "full" and s.rebaseline
        if skip_baseline:
            baseline = None
        elif mode == "baseline":
            baseline = self.cache_baseline(base_branch, prefer)
        else:
            baseline = self.fetch_baseline(base_branch, prefer)
        pinned = None
        if mode == "pr" and baseline is not None:
            # The PR is gated by the baseline's policy, never by the rag-ci.yml it may have edited.
            pinned = pin_to_baseline(project.config, baseline.meta)
            project = dataclasses.replace(project, config=pinned.config)
            if pinned.changes:
                self.runner.info("[rag-ci] this PR changes the gate (previewed, not applied): " + "; ".join(pinned.changes))
        context = RunContext(
            git_sha=s.sha, git_ref=s.ref, pr_number=s.pr_number,
            judge_keys={name: key.reveal() for name, key in s.judge_keys.items()},
            secrets=tuple(secret.reveal() for secret in s.secrets()),
        )
        before = os.lstat(self.output)
        self.runner.group(f"rag-ci: replaying {len(project.questions.questions)} questions")
        try:
            # The baseline feeds the verdict cache (not in a full run: `full` turns the cache off)
            # and the re-asking of flipped questions (in every mode).
            head = self.evaluate(project, self.output / RESULTS_FILE, baseline, mode == "full", context)
        finally:
            self.runner.end_group()
        after = os.lstat(self.output)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            raise RagCiError(f"the output folder {s.output_dir} was replaced while the target ran; not trusting what is in it")
        if mode in ("baseline", "full") and baseline is not None and not head.meta.broken:
            head = self.carry_forward(baseline, head)

        if head.meta.broken:
            # The cause quotes the target's and the judge's errors: the report shows it escaped.
            outcome = Outcome("broken", notice=(
                "It is not compared" + (", not uploaded as the baseline and not recorded in the history." if mode != "pr" else ".")
                + f" Fix what made more than {project.config.gate.max_error_rate:.0%} of the questions error (judge key, "
                "judge or target availability) and re-run; the failing questions are listed below."
            ))
        elif mode == "baseline":
            outcome = Outcome("baseline", notice=f"Baseline run on `{s.branch}`: this run's results.json becomes the baseline once the workflow uploads it as the `{s.baseline_artifact}` artifact.")
        elif skip_baseline:
            outcome = Outcome("rebaseline", notice=f"Re-baseline: full evaluation without comparison; this run's results.json becomes the baseline once the workflow uploads it as `{s.baseline_artifact}`.")
        else:
            outcome = self.judge(head, baseline, project, mode, pinned)
        calibration = self.calibration(head)
        if mode == "full" and outcome.verdict != "broken" and project.config.gate.require_calibration:
            reason = uncalibrated_reason(calibration)
            if reason:
                outcome = Outcome("uncalibrated", outcome.comparison,
                                  f"gate.require_calibration: this full run's judge is not calibrated against human labels: {reason}. "
                                  "Label the audit sample (docs/judges.md, \"Calibrating your judge\") and record it with "
                                  "`rag-ci calibrate --record`.")
        if mode in ("baseline", "full") and s.on_default_branch and outcome.verdict != "broken":
            self.append_history(head, project)

        markdown = render_markdown(head, outcome.comparison, notice=outcome.notice, links=self.links(),
                                   trend=self.trend() if mode == "pr" else None, calibration=calibration,
                                   report_url=self.report_url(), report_path=s.relative_to_workspace(self.output / REPORT_HTML))
        reports = write_reports(self.output, head, outcome.comparison, markdown, calibration=calibration,
                                        history=self.history() or [])
        self.runner.add_summary(markdown)
        if mode == "full" and outcome.verdict != "broken":
            self.write_audit_sample(head, baseline)
        comment_url = self.post_comment(comment_body(markdown)) if mode == "pr" else ""
        if outcome.comparison is not None:
            annotate_regressions(self.runner, outcome.comparison)
        if outcome.verdict == "incompatible":
            self.runner.error(outcome.notice or "", title="rag-ci: baseline not comparable")
        if outcome.verdict == "broken":
            self.runner.error(f"this run is not a result: {head.meta.broken}", title="rag-ci: broken run")
        if outcome.verdict == "uncalibrated":
            self.runner.error(outcome.notice or "", title="rag-ci: judge not calibrated")
        self.runner.set_outputs(step_outputs(s, outcome.verdict, outcome.comparison, self.output / RESULTS_FILE, reports, comment_url))
        return self.exit_code(mode, outcome)

    def fetch_baseline(self, branch: str, prefer: Callable[[], str | None]) -> RunResult | None:
        """The baseline, or None when there is none yet (bootstrap).

        An artifact that exists but cannot be read (no results.json in it, corrupt JSON,
        another schema) raises: passing as "bootstrap" would let a PR through ungated."""
        s = self.settings
        artifact = self.github.find_baseline(s.baseline_artifact, branch, prefer)
        if artifact is None:
            self.runner.info(f"[rag-ci] no baseline artifact '{s.baseline_artifact}' from a successful run on {branch}")
            return None
        self.runner.info(f"[rag-ci] baseline: artifact #{artifact.id} from run {artifact.run_id} at {(artifact.head_sha or '?')[:12]}")
        where = f"the `{s.baseline_artifact}` artifact #{artifact.id} (run {artifact.run_id})"
        with tempfile.TemporaryDirectory(prefix="rag-ci-baseline-") as tmp:
            path = self.github.download_file(artifact, RESULTS_FILE, Path(tmp) / RESULTS_FILE)
            if path is None:
                raise RagCiError(f"The baseline is unusable: {where} holds no {RESULTS_FILE}.\n{ACTIONS_REBASELINE_HINT}")
            try:
                baseline = load_results(path, what="baseline")
            except RagCiError as exc:  # another schema version, or a damaged file
                raise RagCiError(f"The baseline is unusable: {where}: {exc}\n{ACTIONS_REBASELINE_HINT}") from None
        if baseline.meta.broken:  # uploaded by hand, or by an older rag-ci: never compare with it
            raise RagCiError(f"The baseline is unusable: {where} is a broken run, not a result: {baseline.meta.broken}\n{ACTIONS_REBASELINE_HINT}")
        return baseline

    def cache_baseline(self, branch: str, prefer: Callable[[], str | None]) -> RunResult | None:
        """On main the previous baseline only saves judge calls: without it the run is
        slower, not wrong, so a problem getting it is a warning."""
        try:
            return self.fetch_baseline(branch, prefer)
        except GitHubError as exc:
            self.runner.warning(f"previous baseline not used as verdict cache: {exc}")
        except RagCiError as exc:
            self.runner.info(f"[rag-ci] previous baseline not used as verdict cache: {exc}")
        return None

    def carry_forward(self, baseline: RunResult, head: RunResult) -> RunResult:
        """Keep the last known good verdict of the questions this run errored on, so an
        outage on main does not exempt them from the gate on the next pull requests."""
        carried = carry_forward(baseline, head)
        if carried is not head:
            save_results(self.output / RESULTS_FILE, carried)
            ids = [q.id for q in carried.questions if q.carried is not None]
            self.runner.info(f"[rag-ci] kept the last known good verdict of {len(ids)} errored question(s): {', '.join(ids[:20])}")
        return carried

    def judge(self, head: RunResult, baseline: RunResult | None, project: Project, mode: str, pinned: PinnedPolicy | None) -> Outcome:
        s = self.settings
        if baseline is None:
            return Outcome(
                "bootstrap",
                notice=f"bootstrap: no baseline yet (no `{s.baseline_artifact}` artifact from a successful run on the base branch). "
                "This run passes; the next run on the default branch creates the baseline.",
            )
        # `fail-on-regression: false` turns the gate off for this run; the report then says
        # "gate disabled" instead of announcing a failure the check does not have. (In a PR,
        # gate.fail_on is already the baseline's: project was pinned to its policy.)
        fail_on = project.config.gate.fail_on if s.fail_on_regression else "never"
        try:
            comparison = compare(baseline, head, fail_on=fail_on, gate=project.config.gate, known_flaky=self.known_flaky())
        except IncompatibleBaseline as exc:
            return Outcome("incompatible", notice=f"Not compared: {in_actions_words(str(exc))}")
        notice = None
        if pinned is not None:
            comparison = dataclasses.replace(comparison, policy_changes=pinned.changes)
            notice = pinned.notice
        # Read from the pull request's own checkout on purpose (docs/accepted.md): its diff is
        # what reviewers approve, and the comment lists every acceptance at the top.
        comparison = apply_accepted(comparison, self.accepted(project), {q.id: q.question_hash for q in head.questions})
        if mode == "full" and comparison.not_comparable:
            names = ", ".join(n.name for n in comparison.not_comparable)
            return Outcome("incompatible", comparison,
                           f"Not fully compared: the definition of {names} changed since the baseline.\n{ACTIONS_REBASELINE_HINT}")
        return Outcome(comparison.verdict, comparison, notice)

    def exit_code(self, mode: str, outcome: Outcome) -> int:
        if outcome.verdict == "uncalibrated":
            return EXIT_ERROR  # gate.require_calibration: the instrument is unchecked, not the RAG worse
        if outcome.verdict == "broken":
            # Not 1: nothing regressed, the run could not measure. On main, the failed step
            # also keeps the workflow from uploading it as the baseline.
            return EXIT_ERROR
        if outcome.verdict == "fail":
            return EXIT_REGRESSION
        if outcome.comparison is not None and outcome.comparison.gating:
            self.runner.warning("regressions, worse questions or routing leaks found; not failing because the gate is off (fail-on-regression or gate.fail_on)")
        if outcome.verdict == "incompatible":
            # A PR cannot fix a baseline of another schema, and a scheduled re-evaluation that
            # cannot compare must not quietly pass: stop, and let a human re-baseline on purpose.
            return EXIT_ERROR
        return EXIT_PASS

    def accepted(self, project: Project):
        path = accepted_path(project.config, self.settings.config_path)
        entries = read_accepted(path, required=False)
        if entries:
            self.runner.info(f"[rag-ci] {len(entries)} accepted regression entr{'y' if len(entries) == 1 else 'ies'} in {path}")
        return entries

    def report_url(self) -> str | None:
        """Where the full HTML report is: the run page's artifacts."""
        url = self.settings.run_url
        return f"{url}#artifacts" if url else None

    def links(self) -> dict[str, str]:
        url = self.settings.run_url
        return {"workflow run": url, "HTML report (artifact)": f"{url}#artifacts"} if url else {}

    def history(self) -> list[dict] | None:
        """The history on the data branch, read once per run; None when unreadable (warned)."""
        if not hasattr(self, "_history"):
            text = self.history_text()
            self._history = parse_history(text) if text else None
        return self._history

    def history_text(self) -> str | None:
        if not hasattr(self, "_history_text"):
            try:
                self._history_text = self.github.read_data_file(self.settings.data_branch, HISTORY_FILE)
            except GitHubError as exc:
                self.runner.warning(f"history not read (no trend, no known-flaky questions, no judge calibration): {exc}")
                self._history_text = None
        return self._history_text

    def calibration(self, head: RunResult) -> list:
        """The judge's human calibration (docs/judges.md), from the records in the history."""
        if head.meta.judge is None:
            return []
        return statuses_from_history(head, self.history_text(), datetime.now(timezone.utc).date())

    def write_audit_sample(self, head: RunResult, baseline: RunResult | None) -> None:
        """A full run (before a release) leaves a blind audit sample in the report artifact."""
        from rag_ci.audit_sample import PAGE_FILE, write_audit_sample

        folder = self.output / AUDIT_DIR
        try:
            sample = write_audit_sample(head, folder, AUDIT_FRACTION, seed=0, baseline=baseline)
        except (OSError, RagCiError) as exc:
            self.runner.warning(f"audit sample not written: {exc}", title="rag-ci: audit sample")
            return
        where = f"`{AUDIT_DIR}/{PAGE_FILE}` in the `rag-ci-report` artifact"
        link = f"[{where}]({self.settings.run_url}#artifacts)" if self.settings.run_url else where
        self.runner.add_summary(
            f"### Audit sample\n\n{len(sample.items)} answers ({AUDIT_FRACTION:.0%} of each corpus × verdict, plus this "
            f"run's regressions, gains and unstable verdicts) to label by hand: {link}. Then "
            "`rag-ci calibrate labels.yml results.json --record --history eval_history.jsonl` (docs/judges.md)."
        )

    def trend(self) -> dict | None:
        entries = self.history()
        return trend_summary(entries, last=TREND_POINTS) if entries else None

    def known_flaky(self) -> dict[str, float]:
        return known_flaky(self.history() or [])

    def append_history(self, head: RunResult, project: Project) -> None:
        s = self.settings
        try:
            accepted = in_force(self.accepted(project), {q.id: q.question_hash for q in head.questions})
        except RagCiError as exc:
            self.runner.warning(f"accepted file not recorded in the history: {exc}")
            accepted = []
        line = dump_line(history_line(head, run_url=s.run_url, event=s.event_name, accepted=accepted))
        try:
            self.github.append_data_line(s.data_branch, HISTORY_FILE, line, message=f"rag-ci: history for {(s.sha or 'unknown')[:12]}")
            self.runner.info(f"[rag-ci] appended a line to {HISTORY_FILE} on branch {s.data_branch}")
        except GitHubError as exc:
            self.runner.warning(f"history not recorded: {exc}", title="rag-ci: history")

    def post_comment(self, body: str) -> str:
        s = self.settings
        assert s.pr_number is not None
        try:
            url = self.github.upsert_comment(s.pr_number, body, COMMENT_MARKER)
            self.runner.info(f"[rag-ci] comment: {url}")
            return url
        except GitHubError as exc:
            path = self.output / COMMENT_FILE
            path.write_text(body, encoding="utf-8")
            why = "the token is read-only (a pull request from a fork?)" if isinstance(exc, CannotWrite) else str(exc)
            self.runner.warning(
                f"Could not comment on the pull request: {why}. The report is in the step summary, and the comment "
                f"was saved to {s.relative_to_workspace(path)}: upload it as the `{s.comment_artifact}` artifact and "
                "post it from a workflow_run workflow (docs/action.md, 'Pull requests from forks').",
                title="rag-ci: comment not posted",
            )
            return ""


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
        runner.info(f"[rag-ci] run {run['id']} saved no `{settings.comment_artifact}` artifact: it commented itself.")
        return EXIT_PASS
    numbers = [p.get("number") for p in run.get("pull_requests") or [] if p.get("number")]
    head_repo = run.get("head_repository") or {}
    pr_number = numbers[0] if numbers else github.open_pr_for_head(
        (head_repo.get("owner") or {}).get("login", ""), run.get("head_branch", ""), run.get("head_sha")
    )
    if pr_number is None:
        runner.warning("comment mode: no open pull request matches the triggering run; nothing posted.")
        return EXIT_PASS
    with tempfile.TemporaryDirectory(prefix="rag-ci-comment-") as tmp:
        path = github.download_file(artifact, COMMENT_FILE, Path(tmp) / COMMENT_FILE)
        if path is None:
            runner.warning(f"the `{settings.comment_artifact}` artifact holds no {COMMENT_FILE}; nothing posted.")
            return EXIT_PASS
        try:
            body = untrusted_comment_body(path.read_text(encoding="utf-8", errors="replace"))
        except ValueError as exc:
            raise RagCiError(str(exc)) from None
    url = github.upsert_comment(int(pr_number), body, COMMENT_MARKER)
    runner.info(f"[rag-ci] comment: {url}")
    runner.set_outputs({"comment-url": url})
    return EXIT_PASS

