"""One evaluating run of the action (pr, merge-queue, baseline, full, rebaseline): find the
baseline, let the gate (rag_ci.gate) pin, run and decide under the mode's plan, keep what the
run leaves (results, history line, baseline copy), then report where GitHub shows it.

rag_ci.action.entry wires it and hands it the run itself (`Evaluate`), so tests can hand a
canned one.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable
from pathlib import Path

from rag_ci.action import annotations as check_annotations  # not `annotations`: the __future__ feature's name
from rag_ci.action.baseline import (
    ACTIONS_REBASELINE_HINT,
    FoundBaseline,
    find_baseline,
    missing_history_line,
    refused_note,
    store_baseline_copy,
)
from rag_ci.action.baseline_traces import bootstrap_notice, history_lines_of
from rag_ci.action.history import append_history, read_history, warn_skipped_history_lines, write_audit_sample
from rag_ci.action.modes import Plan
from rag_ci.action.outputs import REPORT_HTML, RESULTS_FILE, step_outputs, summary_report, write_reports
from rag_ci.action.runner_files import kept_from_the_target, undone_words
from rag_ci.action.settings import Settings
from rag_ci.action.sticky_comment import post_or_save_comment
from rag_ci.core.reporting.comment_when import posts_new_comment
from rag_ci.core.reporting.render import Commits, render_markdown
from rag_ci.core.results import RunResult
from rag_ci.errors import RagCiError
from rag_ci.files.accepted_file import accepted_path, read_accepted
from rag_ci.files.project import Project, load_project
from rag_ci.files.results_file import save_results
from rag_ci.gate import (
    EXIT_PASS,
    Acceptance,
    BaseConfig,
    GateOptions,
    GateOutcome,
    History,
    PinnedProject,
    Uncompared,
    Verdict,
    decide,
    needs_base_config,
    prepare,
    refuse_a_fake_judge,
)
from rag_ci.github.client import GitHubError, GitHubRepo
from rag_ci.github.comments import comment_body
from rag_ci.github.workflow import Runner
from rag_ci.run.engine import RunContext
from rag_ci.targets.processes import protect_output_dir

TREND_POINTS = 10

# (project, output, baseline, full, context, confirm_each) -> the run; the real one starts the user's RAG.
Evaluate = Callable[[Project, Path, "RunResult | None", bool, RunContext, frozenset[str]], RunResult]


class Evaluation:
    """One evaluating run (pr, baseline, full, rebaseline): find the baseline, let the gate
    (rag_ci.gate) run and decide under the mode's options, then report where GitHub shows it."""

    def __init__(self, settings: Settings, github: GitHubRepo, runner: Runner, evaluate: Evaluate):
        self.settings, self.github, self.runner, self.evaluate = settings, github, runner, evaluate
        self.output = settings.output_path
        self.history = History()
        self.refused = (
            ""  # the note on candidates refused as the baseline (rag_ci.action.baseline.refused_note)
        )
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
        self.refused = refused_note(found.refused) if found is not None else ""
        commits = self.commits(found)
        # Read from the pull request's own checkout on purpose (docs/accepted.md): its diff is
        # what reviewers approve, and the comment lists every acceptance at the top.
        accepted = self.accepted(project) if options.compare else ()
        base_config = self.base_config() if needs_base_config(project, baseline, options) else None
        pinned = prepare(project, baseline, accepted=accepted, options=options, base_config=base_config)
        head = self.replay(pinned, baseline, plan)
        self.history = read_history(
            s,
            self.github,
            self.runner,
            comparing=options.compare and baseline is not None and not head.meta.broken,
        )
        outcome = decide(pinned, baseline, head, accepted=accepted, history=self.history, options=options)
        self.keep(project, outcome, plan)
        return self.publish(project, outcome, plan, baseline, commits)

    def keep(self, project: Project, outcome: GateOutcome, plan: Plan) -> None:
        """What the run leaves beyond its report: its results with the carried verdicts, its
        history line and the baseline's copy on the data branch (the plan and the branch permitting)."""
        s, head = self.settings, outcome.head
        if outcome.carried:  # the run gained the baseline's last good verdicts of its errored questions
            save_results(self.output / RESULTS_FILE, head)
            self.runner.info(
                f"[rag-ci] kept the last known good verdict of {len(outcome.carried)} errored question(s): "
                f"{', '.join(outcome.carried[:20])}"
            )
        if plan.history and s.on_default_branch and outcome.verdict != Verdict.BROKEN:
            append_history(s, self.github, self.runner, head, lambda: self.accepted(project))
            if missing := missing_history_line(s, self.history.entries):
                self.runner.notice(missing, title="rag-ci: history")
        if plan.produces_baseline and s.on_default_branch and outcome.exit_code == EXIT_PASS:
            # outlives the artifact
            store_baseline_copy(s, self.github, self.runner, self.output / RESULTS_FILE)

    def publish(
        self, project: Project, outcome: GateOutcome, plan: Plan, baseline: RunResult | None, commits: Commits
    ) -> int:
        """The report where GitHub shows it (files, job summary, comment, annotations, check run,
        step outputs); returns the exit code."""
        s, head = self.settings, outcome.head
        report = functools.partial(
            render_markdown,
            head,
            outcome.comparison,
            notice=outcome.notice,
            links=self.links(),
            # the history is the default branch's: a pull request into a release branch shows none
            trend=self.history.trend(TREND_POINTS) if plan.trend and self.on_default_base() else None,
            calibration=list(outcome.calibration),
            commits=commits,
            measured=outcome.measured,
            report_url=self.report_url(),
            report_path=s.relative_to_workspace(self.output / REPORT_HTML),
            made_baseline=not plan.gate.compare,  # baseline and rebaseline: "new baseline", not "no baseline"
        )
        # the comment's length; where it cuts rows, it points to the summary
        markdown = report(summary_url=s.run_url) + self.refused
        reports = write_reports(
            self.output,
            head,
            outcome.comparison,
            markdown,
            calibration=list(outcome.calibration),
            history=self.history.entries,
            commits=commits,
            junit=s.junit,
        )
        # The job summary holds the whole report (1 MiB), every row the comment had to cut.
        self.runner.add_summary(summary_report(lambda limit: report(max_chars=limit)))
        if plan.audit_sample and outcome.verdict != Verdict.BROKEN:
            write_audit_sample(s, self.runner, self.output, head, baseline)
        comment_url = self.post_comment(comment_body(markdown), outcome) if plan.comment else ""
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
        warn_skipped_history_lines(s, self.runner, self.history)  # skipped, never fatal
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
        title, summary = check_annotations.check_text(
            head,
            outcome.comparison,
            found,
            self.settings.run_url,
            files_of="the files of the merge queue's commit"
            if self.settings.merge_group
            else "the pull request's files",
            made_baseline=not plan.gate.compare,
        )
        check_annotations.publish(
            self.settings,
            self.github,
            self.runner,
            found,
            title=title,
            summary=summary + self.refused,
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

    def on_default_base(self) -> bool:
        s = self.settings
        return (s.pr_base_ref or s.default_branch) == s.default_branch

    def report_url(self) -> str | None:
        """Where the full HTML report is: the run page's artifacts."""
        url = self.settings.run_url
        return f"{url}#artifacts" if url else None

    def links(self) -> dict[str, str]:
        url = self.settings.run_url
        return {"workflow run": url, "HTML report (artifact)": f"{url}#artifacts"} if url else {}

    def post_comment(self, body: str, outcome: GateOutcome) -> str:
        failed = outcome.exit_code != EXIT_PASS or outcome.gate_off
        create = posts_new_comment(self.settings.comment, failed=failed, comparison=outcome.comparison)
        return post_or_save_comment(self.settings, self.github, self.runner, body, create=create)
