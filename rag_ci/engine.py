"""One run, wired: build and start the target, replay, score, write (rag_ci.project loads the project;
rag_ci.prepare runs the build steps).

This is the I/O shell around the pure core. It owns concurrency (a slot per
target call, the judge has its own limit), time-outs, the resume journal and
the atomic write of results.json.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rag_ci import __version__
from rag_ci.confirm_target import answer_with_noise_control
from rag_ci.core.scoring.aggregate import aggregate
from rag_ci.core.questionset.config import JUDGE_METRICS, Config
from rag_ci.core.comparison.identity import baseline_records
from rag_ci.core.comparison.policy import policy_of
from rag_ci.core.questionset.questions import Question
from rag_ci.core.scoring.results import MetricResult, QuestionResult, RunMeta, RunResult
from rag_ci.core.scoring.retrieval_metrics import score_retrieval
from rag_ci.core.scoring.settled import regressed_without_judge, settling_metrics
from rag_ci.core.questionset.routing import route, routing_leaks
from rag_ci.core.scoring.judge_scorer import JudgeScorer
from rag_ci.core.questionset.shards import select_shard, shard_label
from rag_ci.core.scoring.verdict import broken_run_reason, failure_stage, question_verdict
from rag_ci.core.questionset.documents import DocumentIndex
from rag_ci.corpus_files import corpus_folders, read_corpora
from rag_ci.errors import RagCiError, TargetError
from rag_ci.project import Project
from rag_ci.prepare import git, git_dirty, run_build_steps, verbose_from_env
from rag_ci.progress import make_progress
from rag_ci.redaction import Redactor
from rag_ci.files.journal import Journal, journal_path
from rag_ci.files.results_file import save_results
from rag_ci.targets import WARMUP_ID_PREFIX, Target, TargetReply, build_target, describe_target, parse_reply
from rag_ci.targets.base import arrived
from rag_ci.targets.breaker import TargetBreaker
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
    return RunContext(git_sha=git(root, "rev-parse", "HEAD") or None, git_ref=git(root, "rev-parse", "--abbrev-ref", "HEAD") or None)



class _Replay:
    """State of one replay: target, judge, baseline records, journal, progress."""

    def __init__(self, project: Project, target: Target, judge: JudgeScorer | None, baseline: RunResult | None,
                 redact: Redactor | None = None, confirm_each: frozenset[str] = frozenset()):
        self.project = project
        self.redact = redact or Redactor()
        self.config = project.config
        self.target = target
        self.judge = judge
        self.baseline = baseline_records(baseline, ((q.id, q.content_hash) for q in project.questions.questions))
        self.metric_configs = {n: c for n, c in self.config.metric_configs().items() if n not in JUDGE_METRICS}
        # Judge-free metrics whose drop settles a question (no judged flip of it is re-judged).
        self.settling = settling_metrics(policy_of(self.config), baseline.meta.policy if baseline else None)
        self.confirm_each = confirm_each
        parallel = min(self.config.target.concurrency, target.max_parallel or self.config.target.concurrency)
        self.parallel = parallel
        self.slots = asyncio.Semaphore(parallel)
        self.breaker = TargetBreaker(describe_target(self.config.target), max_wait_s=self.config.target.breaker_wait_s(),
                                     max_errors_at_start=self.config.target.breaker_errors_at_start(parallel))
        # Questions in flight (being answered or judged). Without a bound every question is
        # answered at once and then waits for the judge: all finish at the very end, so the
        # progress and the resume journal stay empty until then. Two judge-fulls of
        # questions keep every judge slot busy (each question has several calls ready).
        self.window = asyncio.Semaphore(parallel + 2 * (self.config.judge.concurrency if judge is not None else parallel))
        self.generators: set[str] = set()

    async def ask(self, request: dict, *, counts: bool = True) -> tuple[TargetReply | None, float | None, str | None]:
        """One target call under its time-out and the breaker: (reply, latency, error).
        `counts=False` (a warm-up request, a re-ask) keeps a failure out of the errors-at-start count."""
        timeout = self.config.target.timeout_s
        loop = asyncio.get_running_loop()
        started, clock = time.perf_counter(), loop.time()
        try:
            # asyncio.timeout (inside the breaker), not wait_for: the call runs in this task,
            # with no extra task (and no extra trip through the event loop's queue) per question.
            async with self.breaker.call(timeout):
                raw, arrived_at = arrived(await self.target.query(request))
            latency = arrived_at - started
            # The redaction boundary: nothing the target said is kept, judged or shown unredacted.
            reply = parse_reply(self.redact.tree(raw))
        except asyncio.TimeoutError:
            waited = loop.time() - clock
            if self.breaker.tripped:  # cut by the breaker, tripped by another call
                return None, None, self.breaker.cut_error()
            own = waited + 1e-3 >= timeout
            error = f"time-out: no answer within {timeout:g}s" if own else f"time-out: no answer after {waited:.1f}s"
            self.breaker.failed(clock, error, counts=counts, cut=not own)
            if self.breaker.tripped and not own:
                return None, None, self.breaker.cut_error()
            return None, None, error
        except TargetError as exc:
            error = self.redact(str(exc))
            self.breaker.failed(clock, error, counts=counts)
            return None, time.perf_counter() - started, error
        self.breaker.succeeded()
        return reply, latency, None

    async def warm_up(self, questions: list[Question], count: int) -> list[float | None]:
        """Send `count` unscored requests (the first questions', under ids of their own) and
        wait for them: a target's cold first calls (loading a model, opening connections)
        are not timed as the first questions' latency. Their latencies (None: failed)."""
        if count <= 0 or not questions:
            return []

        async def one(i: int) -> float | None:
            question = questions[i % len(questions)]
            request = {"id": f"{WARMUP_ID_PREFIX}{i + 1}", "question": question.question, "corpora": route(question, self.project.corpora)}
            try:
                async with self.slots:
                    _, latency, error = await self.ask(request, counts=False)
            except Exception as exc:  # noqa: BLE001 - a warm-up is unscored: whatever it raises, the run goes on
                print(f"[rag-ci] warm-up request failed: {self.redact(f'{type(exc).__name__}: {exc}')[:300]}",
                      file=sys.stderr, flush=True)
                return None
            return None if error else latency

        started = time.perf_counter()
        latencies = await asyncio.gather(*(one(i) for i in range(count)))
        answered = [x for x in latencies if x is not None]
        spread = f", {min(answered):.2f}–{max(answered):.2f} s each" if answered else ""
        failed = f"; {count - len(answered)} failed" if len(answered) < count else ""
        print(f"[rag-ci] warm-up: {count} unscored request{'s' if count != 1 else ''} in {time.perf_counter() - started:.1f}s"
              f"{spread}{failed} (target.warmup)", file=sys.stderr, flush=True)
        return [None if x is None else round(x, 6) for x in latencies]

    async def answer(self, question: Question, judged: dict | None = None, *, again: bool = False) -> QuestionResult:
        """Ask once, score. `judged` remembers this question's judge verdicts by answer and
        contexts, so a re-asked question whose answer repeats costs no judge call. `again`:
        a re-ask or another sample, not counted among the questions the breaker counts."""
        routed = route(question, self.project.corpora)
        request = {"id": question.id, "question": question.question, "corpora": routed}
        error = answer = usage = None
        contexts: list = []
        latency = None
        async with self.slots:
            if self.breaker.tripped:  # the target stopped answering: nothing more is sent
                error = self.breaker.not_asked_error()
            else:
                raw, latency, error = await self.ask(request, counts=not again)
                if raw is not None:
                    answer, contexts, usage = raw.answer, list(raw.contexts), raw.usage
        # Answers of concurrent calls arrive together; yielding once lets the questions
        # waiting for the slot just freed send their requests before this one is scored,
        # so the target never idles while the event loop scores a batch of answers.
        await asyncio.sleep(0)
        leaks = routing_leaks(contexts, routed) if error is None else []
        metrics: dict[str, MetricResult] = {}
        if error is None and not leaks:  # a leaked context is never scored as if it were fine
            metrics = score_retrieval(question, answer or "", contexts, self.metric_configs)
            if self.judge is not None:
                if usage is not None and usage.model and usage.model not in self.generators:
                    self.judge.check_generator(usage.model)  # raises: same family stops the run
                seen = (answer or "", tuple(c.text for c in contexts))
                if judged is not None and seen in judged:
                    metrics.update({n: m.model_copy(update={"judge_cost_usd": 0.0}) for n, m in judged[seen].items()})
                else:
                    base = self.baseline.get(question.id)
                    scored = await self.judge.score(question, answer or "", contexts, base, confirm_each=question.id in self.confirm_each,
                                                    settled=regressed_without_judge(metrics, base, question.content_hash, self.settling))
                    metrics.update(scored)
                    if judged is not None:
                        judged[seen] = scored
        if usage is not None and usage.model:
            self.generators.add(usage.model)
        verdict = question_verdict(error, leaks, metrics)
        return QuestionResult(
            id=question.id,
            question=question.question,
            question_hash=question.content_hash,
            corpora=routed,
            tags=list(question.tags),
            expect=question.expect,
            reference=question.reference,
            keywords=list(question.keywords),
            request=request,
            answer=answer,
            contexts=contexts,
            latency_s=None if latency is None else round(latency, 6),
            usage=usage,
            error=error,
            leaks=leaks,
            metrics=metrics,
            verdict=verdict,
            failure_stage=failure_stage(metrics) if verdict == "fail" else None,
            unstable=any(m.unstable for m in metrics.values()),
        )


def redact_judged(record: QuestionResult, redact: Redactor) -> QuestionResult:
    """`record` with the judge's own words redacted: each metric's error and reason and the
    replies kept for reuse. A judge (or the gateway before it) may quote the key it was
    given ("Incorrect API key provided: sk-…"), and those texts reach every report."""
    if not redact or not record.metrics:
        return record
    metrics = {}
    for name, metric in record.metrics.items():
        clean = {"error": redact(metric.error) if metric.error else metric.error,
                 "reason": redact(metric.reason) if metric.reason else metric.reason,
                 "judge_replies": redact.tree(metric.judge_replies)}
        changed = {k: v for k, v in clean.items() if v != getattr(metric, k)}
        metrics[name] = metric.model_copy(update=changed) if changed else metric
    if all(metrics[n] is m for n, m in record.metrics.items()):
        return record
    return record.model_copy(update={"metrics": metrics})


def _redacted(exc: RagCiError, redact: Redactor) -> RagCiError:
    text = str(exc)
    clean = redact(text)
    return exc if clean == text else RagCiError(clean)


def run_redactor(config: Config, context: RunContext, environ: Mapping[str, str] | None = None) -> Redactor:
    """The run's one redaction boundary (rag_ci.redaction): every secret rag-ci knows of."""
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
    (`gate.confirm_target_runs`, rag_ci/confirm_target.py). `run_context` defaults to
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


async def run_project(project: Project, options: RunOptions, *, target: Target | None = None,
                      judge: JudgeScorer | None = None) -> RunResult:
    """Build, start, replay every question, score, and write results.json atomically.

    `target` and `judge` are injectable (tests, benchmarks); by default they are
    built from the config. One failing question never stops the run; a judge of
    the generator's family does (before any judge call on that answer).
    """
    output, baseline, resume, full = options.output, options.baseline, options.resume, options.full
    shard, build, samples = options.shard, options.build, options.samples
    run_context, progress = options.run_context, options.progress
    config = project.config
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    context = run_context or git_context(project.root)
    dirty = git_dirty(project.root, context.git_sha)  # before the build steps, which may write tracked files
    questions = select_shard(project.questions.questions, shard)
    header = {
        "config": config.fingerprint(),
        "questions": project.questions.content_hash,
        "full": full,
        **({"samples": samples} if samples > 1 else {}),
        "shard": list(shard) if shard else None,
    }
    journal = Journal(journal_path(output), header)
    finished = journal.read_finished() if resume else {}
    wanted = {q.id: q.content_hash for q in questions}
    kept = [r for r in finished.values() if wanted.get(r.id) == r.question_hash]
    done_ids = {r.id for r in kept}
    todo = [q for q in questions if q.id not in done_ids]
    if resume:
        print(f"[rag-ci] resume: {len(kept)} questions already done, {len(todo)} to go", file=sys.stderr)

    redact = run_redactor(config, context)
    # The documents as they are for this run: what each question's sources name (DESIGN §2a).
    try:
        documents = read_corpora(corpus_folders(project.root, project.corpora)).index
    except RagCiError as exc:  # the RAG never reads these folders: say so, run without the fingerprints
        print(f"[rag-ci] warning: {exc}; the documents' fingerprints are not recorded", file=sys.stderr)
        documents = DocumentIndex(())
    if judge is None and config.judge_enabled:
        from rag_ci.judges.build import build_judge

        judge = build_judge(config, baseline=baseline, full=full, env={**os.environ, **context.judge_keys})
    if judge is not None and judge.fingerprint.provider == "fake":
        print("[rag-ci] fake judge — its metrics are a dry run, never a gate: the DeepEval metrics are scored by a fixed policy, "
              "offline; they show the judge tier runs, not how good the answers are (docs/judges.md)", file=sys.stderr)
    if judge is not None and todo:  # may start importing DeepEval while the target is built and started
        judge.expect(todo, baseline_records(baseline, ((q.id, q.content_hash) for q in project.questions.questions)))
    try:
        verbose = options.verbose if options.verbose is not None else verbose_from_env(os.environ)
        if build and config.target.build and todo:
            await run_build_steps(config.target.build, project.root, target_env(config.target), redact=redact, verbose=verbose)
        target = target or build_target(config.target, project.root, verbose=verbose)
    except RagCiError as exc:
        raise _redacted(exc, redact) from None
    replay = _Replay(project, target, judge, baseline, redact, options.confirm_each)
    by_id = {q.id: q for q in questions}

    def with_fingerprints(record: QuestionResult) -> QuestionResult:
        """The record with its cited documents' fingerprints as they are for this run (DESIGN §2a)."""
        return record.model_copy(update={"source_fingerprints": documents.fingerprints(by_id[record.id].sources)})

    records: dict[str, QuestionResult] = {r.id: with_fingerprints(r) for r in kept}
    bar = make_progress(len(todo), progress)
    journal.open(kept)
    completed = False
    warmup: list[float | None] = []
    try:
        if todo:
            try:
                await target.start()
            except RagCiError as exc:  # its message carries the target's last output lines
                raise _redacted(exc, redact) from None
            warmup = await replay.warm_up(todo, config.target.warmup_requests(replay.parallel))

        async def one(question: Question) -> None:
            try:
                async with replay.window:
                    record = await answer_with_noise_control(replay, question, samples=samples,
                                                             runs=config.gate.confirm_target_runs)
                    if judge is not None:  # the reasons this record's report prints, now it is complete
                        record = await judge.explain(record, replay.baseline.get(question.id))
            except RagCiError:
                raise
            except Exception as exc:  # a bug on one question must not lose the others
                record = QuestionResult(
                    id=question.id, question=question.question, question_hash=question.content_hash,
                    corpora=route(question, project.corpora), tags=list(question.tags), request={},
                    error=redact(f"internal error: {type(exc).__name__}: {exc}"), verdict="error",
                )
            # Fingerprinted as each question ends: a copy of every record at the end of the run
            # held both copies at once (+40 MiB at 50,000 questions).
            record = with_fingerprints(redact_judged(record, redact))
            records[question.id] = record
            journal.append(record)
            bar.advance(record.verdict)

        try:
            async with asyncio.TaskGroup() as group:
                for question in todo:
                    group.create_task(one(question))
        except ExceptionGroup as group_error:
            # Only a RagCiError escapes `one` (e.g. a same-family judge): report it plainly.
            first = group_error.exceptions[0]
            raise (_redacted(first, redact) if isinstance(first, RagCiError) else first) from None
        completed = True
    finally:
        bar.close()
        diagnostics = redact(target.diagnostics()) if any(r.verdict == "error" for r in records.values()) else None
        await target.stop()
        if judge is not None:
            await judge.aclose()
        journal.close(remove=False)

    ordered = [records[q.id] for q in questions if q.id in records]
    generators = sorted({m for m in [config.target.generator_model, *replay.generators] if m})
    meta = RunMeta(
        rag_ci_version=__version__,
        git_sha=context.git_sha,
        git_dirty=dirty,
        git_ref=context.git_ref,
        pr_number=context.pr_number,
        started_at=started_at,
        finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        question_set_version=project.questions.version,
        question_set_hash=project.questions.content_hash,
        config_fingerprint=config.fingerprint(),
        target_kind=config.target.kind,
        generator_models=generators,
        judge=judge.fingerprint if judge is not None else None,
        metric_thresholds=config.thresholds(),
        policy=policy_of(config),
        shard=shard_label(shard) if shard else None,
        question_ids=[q.id for q in project.questions.questions] if shard else None,
        full=full,
        diagnostics=diagnostics[-4000:] if diagnostics else None,
        warmup_latency_s=warmup,
        # Mostly errors: kept for diagnosis, but never compared, never a baseline (docs/gate.md).
        # A target that stopped answering is broken whatever the error share (the rest was never asked).
        broken=replay.breaker.broken_reason([r.error for r in ordered]) or broken_run_reason(ordered, config.gate.max_error_rate),
        corpus_fingerprints=documents.corpus_fingerprints(),
    )
    result = RunResult(meta=meta, questions=ordered, aggregates=aggregate(ordered))
    save_results(output, result)
    if completed:
        journal.close(remove=True)
    return result
