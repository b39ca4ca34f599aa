"""One run, wired: build and start the target, replay, score, write (rag_ci.files.project loads the project;
rag_ci.run.prepare runs the build steps; rag_ci.run.replay asks and scores each question).

This is the I/O shell around the pure core. It owns concurrency (a slot per
target call, the judge has its own limit), time-outs, the resume journal and
the atomic write of results.json.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from rag_ci import __version__
from rag_ci.core.comparison.identity import baseline_records
from rag_ci.core.comparison.policy import policy_of
from rag_ci.core.config import Config
from rag_ci.core.questionset.documents import DocumentIndex
from rag_ci.core.questionset.questions import Question
from rag_ci.core.questionset.routing import route
from rag_ci.core.questionset.shards import select_shard, shard_label
from rag_ci.core.questionset.turns import live_units, whole_conversations
from rag_ci.core.results import QuestionResult, RunMeta, RunResult
from rag_ci.core.scoring.aggregate import aggregate
from rag_ci.core.scoring.judge_scorer import JudgeScorer
from rag_ci.core.scoring.verdict import broken_run_reason
from rag_ci.errors import RagCiError
from rag_ci.files.corpus_files import corpus_folders, read_corpora
from rag_ci.files.journal import Journal, journal_path
from rag_ci.files.project import Project
from rag_ci.files.results_file import save_results
from rag_ci.run.judge_stop import journal_unless_unjudged, raise_if_stopped
from rag_ci.run.prepare import git, git_dirty, run_build_steps, verbose_from_env
from rag_ci.run.replay import Replay, early_time_outs_to_reask, redact_judged
from rag_ci.run.turn_replay import answer_in_turn
from rag_ci.run.verdict_spans import export_verdicts
from rag_ci.runtime.progress import make_progress
from rag_ci.safety.logsafe import neutralise
from rag_ci.safety.redaction import Redactor
from rag_ci.targets import Target, build_target
from rag_ci.targets.git_credentials import refuse_persisted_credentials
from rag_ci.targets.processes import declared_secrets, target_env


@dataclass(frozen=True)
class RunContext:
    git_sha: str | None = None
    git_ref: str | None = None
    pr_number: int | None = None
    # Judge keys handed over as arguments (the action's inputs), by the variable the provider
    # reads (OPENAI_API_KEY...): they never enter os.environ, where the target could inherit them.
    judge_keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    # Other values to redact from whatever the target says (the GitHub token).
    secrets: tuple[str, ...] = field(default=(), repr=False)


def git_context(root: Path) -> RunContext:
    return RunContext(
        git_sha=git(root, "rev-parse", "HEAD") or None,
        git_ref=git(root, "rev-parse", "--abbrev-ref", "HEAD") or None,
    )


def _redacted(exc: RagCiError, redact: Redactor) -> RagCiError:
    text = str(exc)
    clean = redact(text)
    return exc if clean == text else RagCiError(clean)


def run_redactor(config: Config, context: RunContext, environ: Mapping[str, str] | None = None) -> Redactor:
    """The run's one redaction boundary (rag_ci.safety.redaction): every secret rag-ci knows of."""
    environ = os.environ if environ is None else environ
    try:
        declared = declared_secrets(config.target, environ)
    except RagCiError:  # an unresolvable ${NAME}: reported where the target starts
        declared = []
    return Redactor.from_environment(
        environ,
        declared=[*context.judge_keys.values(), *context.secrets, *declared],
        variables=[config.judge.api_key_env] if config.judge.api_key_env else [],
    )


@dataclass(frozen=True)
class RunOptions:
    """How one run goes: where it writes, what it compares with, which slice, how many samples.

    `baseline` is compared with and re-asked against even when `full` ignores its
    verdict cache. `samples` > 1 answers every question that many times (the baseline's
    pass rates, `baseline.samples`); otherwise a flip against the baseline is re-asked
    (`gate.confirm_target_runs`, rag_ci/run/confirm_target.py). `run_context` defaults to
    the project's git commit; `build: False` skips `target.build`; `verbose` shows the
    build steps' and the image build's output (default: RAG_CI_VERBOSE / RUNNER_DEBUG).
    """

    output: Path
    baseline: RunResult | None = None
    resume: bool = False
    full: bool = False
    run_context: RunContext | None = None
    progress: bool = True
    shard: tuple[int, int] | None = None
    build: bool = True
    samples: int = 1
    # Build steps' and image build's output in the log; None: from the environment (verbose_from_env).
    verbose: bool | None = None
    # Questions whose every judged pass → fail flip is confirmed on its own: the accepted
    # file's (rag_ci.gate.PinnedProject.confirm_each).
    confirm_each: frozenset[str] = frozenset()


async def run_project(
    project: Project, options: RunOptions, *, target: Target | None = None, judge: JudgeScorer | None = None
) -> RunResult:
    """Build, start, replay every question, score, and write results.json atomically.

    `target` and `judge` are injectable (tests, benchmarks); by default they are
    built from the config. One failing question never stops the run; a judge of
    the generator's family does (before any judge call on that answer).
    """
    config = project.config
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    context = options.run_context or git_context(project.root)
    dirty = git_dirty(project.root, context.git_sha)  # before the build steps, which may write tracked files
    questions = select_shard(project.questions.questions, options.shard)
    journal, kept, todo = _resume(project, options, questions)
    redact = run_redactor(config, context)
    documents = _documents(project)
    judge = _judge(project, options, context, judge, todo)
    try:
        # before any of the RAG's code runs
        refuse_persisted_credentials(project.root, target_env(config.target))
        verbose = options.verbose if options.verbose is not None else verbose_from_env(os.environ)
        if options.build and config.target.build and todo:
            await run_build_steps(
                config.target.build, project.root, target_env(config.target), redact=redact, verbose=verbose
            )
        target = target or build_target(config.target, project.root, verbose=verbose)
    except RagCiError as exc:
        raise _redacted(exc, redact) from None
    replay = Replay(project, target, judge, options.baseline, redact, options.confirm_each)
    by_id = {q.id: q for q in questions}

    def with_fingerprints(record: QuestionResult) -> QuestionResult:
        """The record with its cited documents' fingerprints as they are for this run (docs/questions.md)."""
        return record.model_copy(
            update={"source_fingerprints": documents.fingerprints(by_id[record.id].sources)}
        )

    records: dict[str, QuestionResult] = {r.id: with_fingerprints(r) for r in kept}
    journal.open(kept)
    completed, warmup, diagnostics = await _replay_all(
        replay, todo, options, records, journal, with_fingerprints
    )
    ordered = [records[q.id] for q in questions if q.id in records]
    meta = _meta(
        project,
        options,
        context,
        replay,
        ordered,
        started_at=started_at,
        dirty=dirty,
        warmup=warmup,
        diagnostics=diagnostics,
        corpus_fingerprints=documents.corpus_fingerprints(),
    )
    result = RunResult(meta=meta, questions=ordered, aggregates=aggregate(ordered))
    save_results(options.output, result)
    export_verdicts(result)  # only when OTEL_EXPORTER_OTLP_ENDPOINT is set for rag-ci (docs/traces.md)
    raise_if_stopped(judge, redact)  # the journal stays for `--resume`
    if completed:
        journal.close(remove=True)
    return result


def _resume(
    project: Project, options: RunOptions, questions: list[Question]
) -> tuple[Journal, list[QuestionResult], list[Question]]:
    """The run's journal, the finished questions a `--resume` keeps from it, and the questions still to ask."""
    samples, shard = options.samples, options.shard
    header = {
        "config": project.config.fingerprint(),
        "questions": project.questions.content_hash,
        "full": options.full,
        **({"samples": samples} if samples > 1 else {}),
        "shard": list(shard) if shard else None,
    }
    journal = Journal(journal_path(options.output), header)
    finished = journal.read_finished() if options.resume else {}
    wanted = {q.id: q.content_hash for q in questions}
    kept = [r for r in finished.values() if wanted.get(r.id) == r.question_hash]
    kept = whole_conversations(kept, questions)  # a live conversation is resumed whole or re-asked whole
    done_ids = {r.id for r in kept}
    todo = [q for q in questions if q.id not in done_ids]
    if options.resume:
        print(f"[rag-ci] resume: {len(kept)} questions already done, {len(todo)} to go", file=sys.stderr)
    return journal, kept, todo


def _documents(project: Project) -> DocumentIndex:
    """The documents as they are for this run: what each question's sources name (docs/questions.md)."""
    try:
        return read_corpora(corpus_folders(project.root, project.corpora)).index
    except RagCiError as exc:  # the RAG never reads these folders: say so, run without the fingerprints
        print(
            neutralise(f"[rag-ci] warning: {exc}; the documents' fingerprints are not recorded"),
            file=sys.stderr,
        )
        return DocumentIndex(())


def _judge(
    project: Project,
    options: RunOptions,
    context: RunContext,
    judge: JudgeScorer | None,
    todo: list[Question],
) -> JudgeScorer | None:
    """The run's judge (the config's, unless one was handed in), told which answers to expect."""
    config, baseline = project.config, options.baseline
    if judge is None and config.judge_enabled:
        from rag_ci.judges.build import build_judge

        judge = build_judge(
            config, baseline=baseline, full=options.full, env={**os.environ, **context.judge_keys}
        )
    if judge is not None and judge.fingerprint.provider == "fake":
        print(
            "[rag-ci] fake judge — its metrics are a dry run, never a gate: the DeepEval metrics are scored by a fixed policy, "
            "offline; they show the judge tier runs, not how good the answers are (docs/judges.md)",
            file=sys.stderr,
        )
    if judge is not None and todo:  # may start importing DeepEval while the target is built and started
        judge.expect(
            todo, baseline_records(baseline, ((q.id, q.content_hash) for q in project.questions.questions))
        )
    return judge


async def _replay_all(
    replay: Replay,
    todo: list[Question],
    options: RunOptions,
    records: dict[str, QuestionResult],
    journal: Journal,
    finish: Callable[[QuestionResult], QuestionResult],
) -> tuple[bool, list[float | None], str | None]:
    """Start the target, warm it up, ask every question of `todo` into `records` and the journal,
    stop the target. (Whether every question was asked, the warm-up latencies, the target's
    diagnostics when a question errored.)"""
    config, judge, redact = replay.config, replay.judge, replay.redact
    bar = make_progress(len(todo), options.progress)
    completed = False
    warmup: list[float | None] = []
    try:
        if todo:
            try:
                await replay.target.start()
            except RagCiError as exc:  # its message carries the target's last output lines
                raise _redacted(exc, redact) from None
            warmup = await replay.warm_up(todo, config.target.warmup_requests(replay.parallel))

        async def one(question: Question, unit: list[Question], *, counted: bool = True) -> None:
            try:
                async with replay.window:
                    # A live turn is asked with the RAG's own earlier answers (docs/conversations.md).
                    record = await answer_in_turn(replay, question, unit, records, samples=options.samples)
                    if judge is not None:  # the reasons this record's report prints, now it is complete
                        record = await judge.explain(record, replay.baseline.get(question.id))
            except RagCiError:
                raise
            except Exception as exc:  # a bug on one question must not lose the others
                record = QuestionResult(
                    id=question.id,
                    question=question.question,
                    question_hash=question.content_hash,
                    corpora=route(question, replay.project.corpora),
                    tags=list(question.tags),
                    request={},
                    error=redact(f"internal error: {type(exc).__name__}: {exc}"),
                    verdict="error",
                )
            # Fingerprinted as each question ends: a copy of every record at the end of the run
            # held both copies at once (+40 MiB at 50,000 questions).
            record = finish(redact_judged(record, redact))
            records[question.id] = record = journal_unless_unjudged(judge, record, redact, journal)
            if counted:
                bar.advance(record.verdict)

        async def in_order(unit: list[Question], counted: bool) -> None:
            for question in unit:
                await one(question, unit, counted=counted)

        async def all_of(batch: list[Question], counted: bool = True) -> None:
            try:
                async with asyncio.TaskGroup() as group:
                    for unit in live_units(batch):  # a live conversation's turns one after another
                        group.create_task(in_order(unit, counted))
            except ExceptionGroup as group_error:
                # Only a RagCiError escapes `one` (e.g. a same-family judge): report it plainly.
                first = group_error.exceptions[0]
                raise (_redacted(first, redact) if isinstance(first, RagCiError) else first) from None

        await all_of(todo)
        await all_of(early_time_outs_to_reask(replay, records, todo), counted=False)
        completed = True
    finally:
        bar.close()
        diagnostics = (
            redact(replay.target.diagnostics())
            if any(r.verdict == "error" for r in records.values())
            else None
        )
        await replay.target.stop()
        if judge is not None:
            await judge.aclose()
        journal.close(remove=False)
    return completed, warmup, diagnostics


def _meta(
    project: Project,
    options: RunOptions,
    context: RunContext,
    replay: Replay,
    ordered: list[QuestionResult],
    *,
    started_at: str,
    dirty: bool | None,
    warmup: list[float | None],
    diagnostics: str | None,
    corpus_fingerprints: dict[str, str],
) -> RunMeta:
    config, shard = project.config, options.shard
    generators = sorted({m for m in [config.target.generator_model, *replay.generators] if m})
    return RunMeta(
        rag_ci_version=__version__,
        git_sha=context.git_sha,
        git_dirty=dirty,
        git_ref=context.git_ref,
        pr_number=context.pr_number,
        started_at=started_at,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        question_set_version=project.questions.version,
        question_set_hash=project.questions.content_hash,
        config_fingerprint=config.fingerprint(),
        target_kind=config.target.kind,
        contexts_from="retrieve" if getattr(config.target, "retrieve", None) is not None else None,
        generator_models=generators,
        judge=replay.judge.fingerprint if replay.judge is not None else None,
        metric_thresholds=config.thresholds(),
        policy=policy_of(config),
        shard=shard_label(shard) if shard else None,
        question_ids=[q.id for q in project.questions.questions] if shard else None,
        full=options.full,
        diagnostics=diagnostics[-4000:] if diagnostics else None,
        warmup_latency_s=warmup,
        # Mostly errors: kept for diagnosis, but never compared, never a baseline (docs/gate.md).
        # A target that stopped answering is broken whatever the error share (the rest was never asked).
        broken=replay.breaker.broken_reason([r.error for r in ordered])
        or broken_run_reason(ordered, config.gate.max_error_rate),
        corpus_fingerprints=corpus_fingerprints,
    )
