"""The GitHub Action: decide what to do from the event, do it, report, set the exit code.

`main()` wires the real things (environment, PyGithub, the engine); `action()` takes them
as arguments so tests can hand it a GitHub connected to a fake server, or a canned run.

    pull_request            -> pr:         run, compare with the baseline, comment, gate
    merge_group             -> merge-queue: the same against the queue's base, no comment
    push to default branch  -> baseline:   run (verdict cache from the last baseline), history
    workflow_dispatch/cron  -> full:       run without cache, compare, history
      with `rebaseline`     -> rebaseline: run without cache nor comparison, history
    workflow_run            -> comment:    post the comment a fork PR's run saved (fork-safe)

What each mode does is one frozen `Plan` in rag_ci.action.modes; rag_ci.action.evaluation
runs the steps of an evaluating mode and asks the plan at each one. A run that may become
the baseline refuses the fake judge before any question is asked.

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
import os
import traceback
from pathlib import Path

from rag_ci.action import annotations as check_annotations  # not `annotations`: the __future__ feature's name
from rag_ci.action.baseline import in_actions_words
from rag_ci.action.comment_mode import comment_mode
from rag_ci.action.evaluation import Evaluate, Evaluation
from rag_ci.action.modes import PLANS, resolve_mode
from rag_ci.action.settings import JUDGE_KEY_VARIABLES, TOKEN_VARIABLES, Settings
from rag_ci.action.sticky_comment import replace_comment_with_not_evaluated
from rag_ci.core.reporting.alerts import headline_cause
from rag_ci.core.reporting.view import code_block
from rag_ci.core.results import RunResult
from rag_ci.errors import RagCiError, ValidationError
from rag_ci.files.project import Project
from rag_ci.gate import EXIT_ERROR, EXIT_PASS, EXIT_REGRESSION
from rag_ci.github.client import GitHubError, GitHubRepo, connect
from rag_ci.github.workflow import Runner
from rag_ci.run.engine import RunContext, RunOptions, run_project
from rag_ci.runtime.signals import terminate_like_interrupt
from rag_ci.safety.redaction import Redactor

__all__ = ["EXIT_ERROR", "EXIT_PASS", "EXIT_REGRESSION", "action", "main", "resolve_mode"]


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
        report_not_evaluated(settings, github, runner, exc)
        return EXIT_ERROR


def report_not_evaluated(
    settings: Settings, github: GitHubRepo, runner: Runner, exc: RagCiError | GitHubError
) -> None:
    """Why nothing was evaluated, everywhere the user looks: the log, the check run, the job
    summary, the step's `verdict` output and the PR comment."""
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
        # a fence: inert
        check_annotations.publish(
            settings,
            github,
            runner,
            [],
            conclusion="failure",
            # The cause's first clause in the title (plain text: GitHub shows it as typed), whole below.
            title="rag-ci: not evaluated — " + headline_cause(message, limit=100),
            summary="Nothing was evaluated:\n\n" + code_block(message[:60000]),
        )
    runner.add_summary("## rag-ci: error\n\n```\n" + message.replace("```", "'''") + "\n```")
    runner.set_outputs({"verdict": "error"})
    # Never leave an older verdict on the PR while this push's check is red.
    replace_comment_with_not_evaluated(settings, github, runner, message)
