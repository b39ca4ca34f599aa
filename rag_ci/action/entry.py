"""The GitHub Action: decide what to do from the event, do it, report, set the exit code.

`main()` wires the real things (environment, PyGithub, the engine); `action()` takes them
as arguments so tests can hand it a GitHub connected to a fake server, or a canned run.

    pull_request            -> pr:         run, compare with the baseline, comment, gate
    merge_group             -> merge-queue: the same against the queue's base, no comment
    push to default branch  -> baseline:   run (verdict cache from the last baseline), history
    workflow_dispatch/cron  -> full:       run without cache, compare, history
      with `rebaseline`     -> rebaseline: run without cache nor comparison, history
    workflow_run            -> comment:    post the comment a fork PR's run saved (fork-safe)

What each mode does is one frozen `Plan` in rag_ci.action.modes; this module runs the
steps and asks the plan at each one. A run that may become the baseline refuses the
fake judge before any question is asked.

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
import functools
import os
import traceback
from collections.abc import Callable
from pathlib import Path

from rag_ci.action import annotations as check_annotations  # not `annotations`: the __future__ feature's name
from rag_ci.action.baseline import (
    ACTIONS_REBASELINE_HINT,
    FoundBaseline,
    find_baseline,
    in_actions_words,
    missing_history_line,
    store_baseline_copy,
)
from rag_ci.action.baseline_traces import bootstrap_notice, history_lines_of
from rag_ci.action.comment_mode import comment_mode
from rag_ci.action.modes import PLANS, Plan, resolve_mode
from rag_ci.action.outputs import (
    COMMENT_FILE,
    REPORT_HTML,
    RESULTS_FILE,
    step_outputs,
    summary_report,
    write_reports,
)
from rag_ci.action.runner_files import kept_from_the_target, undone_words
from rag_ci.action.settings import JUDGE_KEY_VARIABLES, TOKEN_VARIABLES, Settings
from rag_ci.core.comparison.history import HISTORY_FILE, dump_line, history_line
from rag_ci.core.reporting.render import Commits, render_markdown, render_not_evaluated
from rag_ci.core.reporting.view import code_block
from rag_ci.core.results import RunResult
from rag_ci.errors import RagCiError, ValidationError
from rag_ci.files.accepted_file import accepted_path, read_accepted
from rag_ci.files.project import Project, load_project
from rag_ci.files.results_file import save_results
from rag_ci.gate import (
    EXIT_ERROR,
    EXIT_PASS,
    EXIT_REGRESSION,
    Acceptance,
    BaseConfig,
    GateOptions,
    GateOutcome,
    History,
    PinnedProject,
    Uncompared,
    Verdict,
    accepted_in_force,
    decide,
    needs_base_config,
    prepare,
    refuse_a_fake_judge,
)
from rag_ci.github.client import CannotWrite, GitHubError, GitHubRepo, connect
from rag_ci.github.comments import COMMENT_MARKER, comment_body
from rag_ci.github.workflow import Runner
from rag_ci.run.engine import RunContext, RunOptions, run_project
from rag_ci.runtime.signals import terminate_like_interrupt
from rag_ci.safety.redaction import Redactor
from rag_ci.targets.processes import protect_output_dir

__all__ = ["EXIT_ERROR", "EXIT_PASS", "EXIT_REGRESSION", "action", "main", "resolve_mode"]

TREND_POINTS = 10
AUDIT_DIR, AUDIT_FRACTION = "audit", 0.1  # the full run's audit sample, inside the output folder

# (project, output, baseline, full, context, confirm_each) -> the run; the real one starts the user's RAG.
Evaluate = Callable[[Project, Path, "RunResult | None", bool, RunContext, frozenset[str]], RunResult]


def run_engine(
    project: Project,
    output: Path,
    baseline: RunResult | None,
    full: bool,
    context: RunContext,
    confirm_each: frozenset[str] = frozenset(),
) -> RunResult:
    # A run that is not for a pull request may become the baseline: it samples each
    # question `baseline.samples` times so the baseline knows each pass rate (docs/noise.md).
    samples = project.config.baseline.samples if context.pr_number is None else 1
    return asyncio.run(
        run_project(
            project,
            RunOptions(
                output=output,
                baseline=baseline,
                full=full,
                run_context=context,
                progress=True,
                samples=samples,
                confirm_each=confirm_each,
            ),
        )
    )


def main() -> int:
    terminate_like_interrupt()
    try:
        settings = Settings.from_environ(os.environ)
    except RagCiError as exc:
        # Reported where the user looks, through the runner's own files (never invalid).
        runner_for(Settings.runner_only(os.environ)).error(str(exc), title="rag-ci: invalid input")
        return EXIT_ERROR
    runner = runner_for(settings)
    for secret in settings.secrets():
        runner.mask(secret.reveal())
    _prepare_process_environment(settings)
    github = connect(
        settings.api_url, settings.github_token, settings.repository, comment_author=settings.comment_author
    )
    try:
        return action(settings, github, runner)
    except Exception:  # a bug: show it, but exit 2, not 1, which means "regression"
        runner.info(traceback.format_exc())  # through the runner: redacted and inert
        runner.error(
            "rag-ci stopped on an internal error (traceback above); please report it.", title="rag-ci"
        )
        try:
            replace_comment_with_not_evaluated(
                settings, github, runner, "rag-ci stopped on an internal error (the traceback is in the log)"
            )
        except Exception:
            traceback.print_exc()
        return EXIT_ERROR


def runner_for(settings: Settings) -> Runner:
    """The runner's side of this step, as the settings found it (summary, outputs, masking);
    it redacts the token and the judge keys from everything it writes."""
    return Runner(
        step_summary=settings.step_summary,
        github_output=settings.github_output,
        in_actions=settings.in_actions,
        redact=Redactor(secret.reveal() for secret in settings.secrets()),
    )


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


def action(settings: Settings, github: GitHubRepo, runner: Runner, *, evaluate: Evaluate = run_engine) -> int:
    try:
        mode = resolve_mode(settings)
        if mode is None:
            runner.notice(
                f"rag-ci evaluates pushes to the default branch only; nothing to do on {settings.ref}."
            )
            return EXIT_PASS
        runner.info(f"[rag-ci] mode: {mode} (event: {settings.event_name})")
        plan = PLANS[mode]
        if not plan.evaluates:
            return comment_mode(settings, github, runner)
        return Evaluation(settings, github, runner, evaluate).run(plan)
    except (RagCiError, GitHubError) as exc:
        message = in_actions_words(str(exc))
        if isinstance(exc, ValidationError):  # each problem at its file and line (rag_ci.action.annotations)
            found = check_annotations.for_problems(settings, exc.problems)
            check_annotations.publish(
                settings,
                github,
                runner,
                found,
                conclusion="failure",
                title=f"rag-ci: not evaluated — {len(found)} problem(s) in the configuration or question set",
                summary="Fix the annotated lines and push again; nothing was evaluated.",
            )
        else:
            runner.error(message, title="rag-ci")
            # A required `rag-ci gate` check (a merge queue's too) must not wait for ever: it completes as a
            # failure, after a GitHub error as well (the call that failed may pass by now).
            check_annotations.publish(
                settings,
                github,
                runner,
                [],
                conclusion="failure",
                title="rag-ci: not evaluated",
                summary="Nothing was evaluated:\n\n" + code_block(message[:60000]),
            )  # a fence: inert
        runner.add_summary("## rag-ci: error\n\n```\n" + message.replace("```", "'''") + "\n```")
        runner.set_outputs({"verdict": "error"})
        # Never leave an older verdict on the PR while this push's check is red.
        replace_comment_with_not_evaluated(settings, github, runner, message)
        return EXIT_ERROR


def replace_comment_with_not_evaluated(
    settings: Settings, github: GitHubRepo, runner: Runner, cause: str
) -> None:
    """A run that stopped before it could evaluate replaces the PR comment with "⛔ not evaluated —
    <cause>" and a link to the run, so the comment never shows the previous push's verdict."""
    try:
        mode = resolve_mode(settings)
    except RagCiError:
        return
    if mode is None or not PLANS[mode].comment or settings.pr_number is None:
        return
    commits = Commits(head_sha=settings.pr_head_sha or settings.sha, head_url=settings.run_url)
    post_or_save_comment(
        settings,
        github,
        runner,
        comment_body(render_not_evaluated(cause, run_url=settings.run_url, commits=commits)),
    )


def post_or_save_comment(settings: Settings, github: GitHubRepo, runner: Runner, body: str) -> str:
    """Post (or edit) the sticky comment; when the token cannot, save it for the fork-safe
    workflow_run to post (docs/action.md). Returns the comment's URL, or "" when saved."""
    s = settings
    assert s.pr_number is not None
    try:
        url = github.upsert_comment(s.pr_number, body, COMMENT_MARKER)
        runner.info(f"[rag-ci] comment: {url}")
        return url
    except GitHubError as exc:
        path = s.output_path / COMMENT_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        why = (
            "the token is read-only (a pull request from a fork?)"
            if isinstance(exc, CannotWrite)
            else str(exc)
        )
        runner.warning(
            f"Could not comment on the pull request: {why}. The report is in the step summary, and the comment "
            f"was saved to {s.relative_to_workspace(path)}: upload it as the `{s.comment_artifact}` artifact and "
            "post it from a workflow_run workflow (docs/action.md, 'Pull requests from forks').",
            title="rag-ci: comment not posted",
        )
        return ""


class Evaluation:
    """One evaluating run (pr, baseline, full, rebaseline): find the baseline, let the gate
    (rag_ci.gate) run and decide under the mode's options, then report where GitHub shows it."""

    def __init__(self, settings: Settings, github: GitHubRepo, runner: Runner, evaluate: Evaluate):
        self.settings, self.github, self.runner, self.evaluate = settings, github, runner, evaluate
        self.output = settings.output_path
        self.history = History()
        protect_output_dir(self.output, project_dir=settings.project_dir)

    def options(self, plan: Plan) -> GateOptions:
        s = self.settings
        uncompared = plan.gate.uncompared
        return dataclasses.replace(
            plan.gate,
            uncompared=Uncompared(
                uncompared.verdict,
                (uncompared.notice or "").format(branch=s.branch, artifact=s.baseline_artifact),
            ),
            bootstrap=Uncompared(Verdict.BOOTSTRAP, bootstrap_notice(s)),
            # `fail-on-regression: false` turns the gate off for this run; the report then says
            # "gate disabled" instead of announcing a failure the check does not have.
            fail_on=None if s.fail_on_regression else "never",
            rebaseline_hint=ACTIONS_REBASELINE_HINT,
        )

    def run(self, plan: Plan) -> int:
        s = self.settings
        project = load_project(s.config_path)
        options = self.options(plan)
        refuse_a_fake_judge(project, None, options)  # before the baseline is even looked for
        found = find_baseline(
            plan,
            s,
            self.github,
            self.runner,
            history_lines=functools.partial(history_lines_of, s, self.github),
        )
        baseline = found.result if found is not None else None
        commits = self.commits(found)
        # Read from the pull request's own checkout on purpose (docs/accepted.md): its diff is
        # what reviewers approve, and the comment lists every acceptance at the top.
        accepted = self.accepted(project) if options.compare else ()
        base_config = self.base_config() if needs_base_config(project, baseline, options) else None
        pinned = prepare(project, baseline, accepted=accepted, options=options, base_config=base_config)
        head = self.replay(pinned, baseline, plan)
        self.history = self.read_history(
            comparing=options.compare and baseline is not None and not head.meta.broken
        )
        outcome = decide(pinned, baseline, head, accepted=accepted, history=self.history, options=options)
        head = outcome.head
        if outcome.carried:  # the run gained the baseline's last good verdicts of its errored questions
            save_results(self.output / RESULTS_FILE, head)
            self.runner.info(
                f"[rag-ci] kept the last known good verdict of {len(outcome.carried)} errored question(s): "
                f"{', '.join(outcome.carried[:20])}"
            )
        if plan.history and s.on_default_branch and outcome.verdict != Verdict.BROKEN:
            self.append_history(head, project)
            if missing := missing_history_line(s, self.history.entries):
                self.runner.notice(missing, title="rag-ci: history")
        if plan.produces_baseline and s.on_default_branch and outcome.exit_code == EXIT_PASS:
            store_baseline_copy(
                s, self.github, self.runner, self.output / RESULTS_FILE
            )  # outlives the artifact

        report = functools.partial(
            render_markdown,
            head,
            outcome.comparison,
            notice=outcome.notice,
            links=self.links(),
            trend=self.history.trend(TREND_POINTS) if plan.trend else None,
            calibration=list(outcome.calibration),
            commits=commits,
            measured=outcome.measured,
            report_url=self.report_url(),
            report_path=s.relative_to_workspace(self.output / REPORT_HTML),
        )
        markdown = report(
            summary_url=s.run_url
        )  # the comment's length; where it cuts rows, it points to the summary
        reports = write_reports(
            self.output,
            head,
            outcome.comparison,
            markdown,
            calibration=list(outcome.calibration),
            history=self.history.entries,
            commits=commits,
        )
        # The job summary holds the whole report (1 MiB), every row the comment had to cut.
        self.runner.add_summary(summary_report(lambda limit: report(max_chars=limit)))
        if plan.audit_sample and outcome.verdict != Verdict.BROKEN:
            self.write_audit_sample(head, baseline)
        comment_url = self.post_comment(comment_body(markdown)) if plan.comment else ""
        if outcome.comparison is not None or plan.check_run:
            self.annotate(project, outcome, plan, comment_url)
        if outcome.verdict == Verdict.INCOMPATIBLE:
            self.runner.error(outcome.notice or "", title="rag-ci: baseline not comparable")
        if outcome.verdict == Verdict.BROKEN:
            self.runner.error(f"this run is not a result: {head.meta.broken}", title="rag-ci: broken run")
        if outcome.verdict == Verdict.UNCALIBRATED:
            self.runner.error(outcome.notice or "", title="rag-ci: judge not calibrated")
        self.runner.set_outputs(
            step_outputs(
                s, outcome.verdict, outcome.comparison, self.output / RESULTS_FILE, reports, comment_url
            )
        )
        if self.history.problems:  # skipped, never fatal
            self.runner.warning(
                f"{HISTORY_FILE} on {s.data_branch}: skipped {len(self.history.problems)} unreadable line(s): "
                + "; ".join(self.history.problems[:10]),
                title="rag-ci: history",
            )
        if outcome.gate_off:
            self.runner.warning(
                "regressions, worse questions or routing leaks found; not failing because the gate is off (fail-on-regression or gate.fail_on)"
            )
        return outcome.exit_code

    def annotate(self, project: Project, outcome: GateOutcome, plan: Plan, comment_url: str = "") -> None:
        """Each question that fails the gate at its line of questions.yml, each changed cited
        document at the document: on the log, and in the check run of a pull request."""
        head = outcome.head
        params = dict(head.meta.policy.metrics) if head.meta.policy else None
        found = (
            []
            if outcome.comparison is None
            else check_annotations.for_comparison(
                self.settings,
                project,
                outcome.comparison,
                params=params,
                gate_on=not outcome.gate_off,
                github=self.github,
                comment_url=comment_url,
            )
        )
        if not plan.check_run:
            check_annotations.show(self.runner, found)
            return
        title, summary = check_annotations.check_text(head, outcome.comparison, found, self.settings.run_url)
        check_annotations.publish(
            self.settings,
            self.github,
            self.runner,
            found,
            title=title,
            summary=summary,
            conclusion=check_annotations.conclusion_of(outcome.exit_code, gate_off=outcome.gate_off),
        )

    def replay(self, pinned: PinnedProject, baseline: RunResult | None, plan: Plan) -> RunResult:
        """The run itself: the user's RAG replays the (pinned) question set into the output folder."""
        s = self.settings
        if pinned.policy_changes:
            self.runner.info(
                "[rag-ci] this PR changes the gate (previewed, not applied): "
                + "; ".join(pinned.policy_changes)
            )
        if pinned.notice:
            self.runner.info(f"[rag-ci] {pinned.notice}")
        context = RunContext(
            git_sha=s.sha,
            git_ref=s.ref,
            pr_number=s.gated_pr_number,
            judge_keys={name: key.reveal() for name, key in s.judge_keys.items()},
            secrets=tuple(secret.reveal() for secret in s.secrets()),
        )
        project = pinned.project
        before = os.lstat(self.output)
        self.runner.group(f"rag-ci: replaying {len(project.questions.questions)} questions")
        try:
            # The baseline feeds the verdict cache (unless the plan turns it off) and the
            # re-asking of flipped questions (in every mode).
            with kept_from_the_target(
                os.environ, project.root
            ) as undone:  # the runner's command files (runner_files.py)
                head = self.evaluate(
                    project,
                    self.output / RESULTS_FILE,
                    baseline,
                    not plan.use_cache,
                    context,
                    pinned.confirm_each,
                )
        finally:
            self.runner.end_group()
        if undone:
            self.runner.warning(undone_words(undone), title="rag-ci: the target wrote the runner's files")
        after = os.lstat(self.output)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            raise RagCiError(
                f"the output folder {s.output_dir} was replaced while the target ran; not trusting what is in it"
            )
        return head

    def base_config(self) -> BaseConfig:
        """rag-ci.yml on the pull request's base, where the gate takes the judge from when no
        baseline recorded one (rag_ci.gate.pin): a PR must not choose where the judge key goes."""
        s = self.settings
        ref = s.pr_base_sha or s.pr_base_ref or s.default_branch or "main"
        where = f"{s.config_in_repository} at {s.pr_base_ref or ref}" + (
            f" ({ref[:12]})" if ref == s.pr_base_sha else ""
        )
        try:
            return BaseConfig(where, text=self.github.file_at(ref, s.config_in_repository))
        except GitHubError as exc:
            return BaseConfig(where, problem=str(exc))

    def accepted(self, project: Project) -> tuple[Acceptance, ...]:
        path = accepted_path(project.config, self.settings.config_path)
        entries = read_accepted(path, required=False, name=self.settings.relative_to_workspace(path))
        if entries:
            self.runner.info(
                f"[rag-ci] {len(entries)} accepted regression entr{'y' if len(entries) == 1 else 'ies'} in {path}"
            )
        return entries

    def commits(self, found: FoundBaseline | None) -> Commits:
        """What this run compares: the baseline's commit, branch and run → the PR's head commit and this run."""
        s = self.settings
        base_url = (
            f"{s.server_url}/{s.repository}/actions/runs/{found.run_id}"
            if found is not None and found.run_id
            else None
        )
        return Commits(
            base_sha=found.sha if found else None,
            base_branch=found.described() if found else None,
            base_url=base_url,
            head_sha=s.pr_head_sha or s.sha,
            head_url=s.run_url,
            head_label="the merge queue's commit" if s.merge_group else None,
        )

    def report_url(self) -> str | None:
        """Where the full HTML report is: the run page's artifacts."""
        url = self.settings.run_url
        return f"{url}#artifacts" if url else None

    def links(self) -> dict[str, str]:
        url = self.settings.run_url
        return {"workflow run": url, "HTML report (artifact)": f"{url}#artifacts"} if url else {}

    def read_history(self, *, comparing: bool) -> History:
        """The data branch's history; when the run is compared, its known-flaky marks vouched for:
        only the lines the action wrote (verified commits of its account) count."""
        try:
            history = History.of_text(self.github.read_data_file(self.settings.data_branch, HISTORY_FILE))
        except GitHubError as exc:
            self.runner.warning(
                f"history not read (no trend, no known-flaky questions, no judge calibration): {exc}"
            )
            return History.of_text(None)
        if not comparing or not history.marked:
            return history.with_vouched(set())
        try:
            return history.with_vouched(
                self.github.lines_written_by_us(self.settings.data_branch, HISTORY_FILE, history.marked)
            )
        except GitHubError as exc:
            self.runner.warning(
                f"could not check who wrote the history's known-flaky marks, so none is used: {exc}"
            )
            return history.with_vouched(set())

    def write_audit_sample(self, head: RunResult, baseline: RunResult | None) -> None:
        """A full run (before a release) leaves a blind audit sample in the report artifact."""
        from rag_ci.files.audit_sample import PAGE_FILE, write_audit_sample

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

    def append_history(self, head: RunResult, project: Project) -> None:
        s = self.settings
        try:
            accepted = accepted_in_force(self.accepted(project), head)
        except RagCiError as exc:
            self.runner.warning(f"accepted file not recorded in the history: {exc}")
            accepted = []
        line = dump_line(history_line(head, run_url=s.run_url, event=s.event_name, accepted=accepted))
        try:
            self.github.append_data_line(
                s.data_branch, HISTORY_FILE, line, message=f"rag-ci: history for {(s.sha or 'unknown')[:12]}"
            )
            self.runner.info(f"[rag-ci] appended a line to {HISTORY_FILE} on branch {s.data_branch}")
        except GitHubError as exc:
            self.runner.warning(f"history not recorded: {exc}", title="rag-ci: history")

    def post_comment(self, body: str) -> str:
        return post_or_save_comment(self.settings, self.github, self.runner, body)
