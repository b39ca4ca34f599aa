"""One replay's questions: each asked of the target under its time-out and the breaker, then scored.

The engine (rag_ci.run.engine) wires a run around it: the target, the judge, the journal and the file.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import time
from collections.abc import Mapping
from typing import Any

from rag_ci.core.comparison.identity import baseline_records
from rag_ci.core.comparison.policy import policy_of
from rag_ci.core.config import JUDGE_METRICS
from rag_ci.core.questionset.questions import Question
from rag_ci.core.questionset.routing import route, routing_leaks
from rag_ci.core.questionset.turns import conversation_request
from rag_ci.core.results import MetricResult, QuestionResult, RunResult
from rag_ci.core.scoring.judge_scorer import JudgeScorer
from rag_ci.core.scoring.retrieval_metrics import score_retrieval
from rag_ci.core.scoring.settled import regressed_without_judge, settling_metrics
from rag_ci.core.scoring.verdict import cut_at_word, failure_stage, question_verdict
from rag_ci.core.traces.context import trace_link, traceparent
from rag_ci.errors import TargetError
from rag_ci.files.project import Project
from rag_ci.safety.logsafe import neutralise
from rag_ci.safety.redaction import Redactor
from rag_ci.targets import WARMUP_ID_PREFIX, Target, TargetReply, describe_target, parse_reply
from rag_ci.targets.base import arrived
from rag_ci.targets.breaker import TargetBreaker

OWN_TIME_OUT = "time-out: no answer within "


def new_traceparent() -> str:
    """A `traceparent` opening a new trace: random trace and span ids (W3C trace context)."""
    return traceparent(secrets.token_hex(16), secrets.token_hex(8))


class Replay:
    """State of one replay: target, judge, baseline records, journal, progress."""

    def __init__(
        self,
        project: Project,
        target: Target,
        judge: JudgeScorer | None,
        baseline: RunResult | None,
        redact: Redactor | None = None,
        confirm_each: frozenset[str] = frozenset(),
    ):
        self.project = project
        self.redact = redact or Redactor()
        self.config = project.config
        self.target = target
        self.judge = judge
        self.baseline = baseline_records(
            baseline, ((q.id, q.content_hash) for q in project.questions.questions)
        )
        self.metric_configs = {
            n: c for n, c in self.config.metric_configs().items() if n not in JUDGE_METRICS
        }
        # Judge-free metrics whose drop settles a question (no judged flip of it is re-judged).
        self.settling = settling_metrics(policy_of(self.config), baseline.meta.policy if baseline else None)
        self.confirm_each = confirm_each
        parallel = min(self.config.target.concurrency, target.max_parallel or self.config.target.concurrency)
        self.parallel = parallel
        self.slots = asyncio.Semaphore(parallel)
        self.breaker = TargetBreaker(
            describe_target(self.config.target),
            max_wait_s=self.config.target.breaker_wait_s(),
            max_errors_at_start=self.config.target.breaker_errors_at_start(parallel),
        )
        # Questions in flight (being answered or judged). Without a bound every question is
        # answered at once and then waits for the judge: all finish at the very end, so the
        # progress and the resume journal stay empty until then. Two judge-fulls of
        # questions keep every judge slot busy (each question has several calls ready).
        self.window = asyncio.Semaphore(
            parallel + 2 * (self.config.judge.concurrency if judge is not None else parallel)
        )
        self._max_parallel = target.max_parallel
        self.generators: set[str] = set()
        # Questions that timed out before the target had answered anything: a cold start
        # more often than the question's fault (two of four made a small run "broken");
        # re-asked once at the end of the run, when the target has answered since.
        self.early_time_outs: set[str] = set()

    async def ask(
        self, request: dict, *, counts: bool = True, watched: bool = True
    ) -> tuple[TargetReply | None, float | None, str | None]:
        """One target call under its time-out and the breaker: (reply, latency, error).
        `counts=False` (a re-ask) keeps a failure out of the errors-at-start count;
        `watched=False` (a warm-up request) keeps its outcome from the breaker altogether."""
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
        except TimeoutError:
            waited = loop.time() - clock
            if self.breaker.tripped:  # cut by the breaker, tripped by another call
                return None, None, self.breaker.cut_error()
            own = waited + 1e-3 >= timeout
            error = f"{OWN_TIME_OUT}{timeout:g}s" if own else f"time-out: no answer after {waited:.1f}s"
            if not watched:
                return None, None, error
            self.breaker.failed(clock, error, counts=counts, cut=not own)
            if self.breaker.tripped and not own:
                return None, None, self.breaker.cut_error()
            return None, None, error
        except TargetError as exc:
            error = self.redact(str(exc))
            if watched:
                self.breaker.failed(clock, error, counts=counts)
            return None, time.perf_counter() - started, error
        if watched:
            self.breaker.succeeded()
        if self.target.max_parallel != self._max_parallel:
            self._widen()
        return reply, latency, None

    def _widen(self) -> None:
        """More calls at once, now that the target takes them: a command target whose replies
        carry ids is asked many requests per process (rag_ci/targets/by_id.py)."""
        self._max_parallel = self.target.max_parallel
        concurrency = self.config.target.concurrency
        wider = min(concurrency, self._max_parallel or concurrency) - self.parallel
        if wider <= 0:
            return
        self.parallel += wider
        for _ in range(wider):
            self.slots.release()
        for _ in range(wider if self.judge is not None else 3 * wider):  # the window: see __init__
            self.window.release()

    async def warm_up(self, questions: list[Question], count: int) -> list[float | None]:
        """Send `count` unscored requests (the first questions', under ids of their own) and
        wait for them: a target's cold first calls (loading a model, opening connections)
        are not timed as the first questions' latency. Their latencies (None: failed or
        skipped). The breaker never sees them, and once one failed the rest are skipped:
        a target that hangs on warm-ups costs one time-out, and its first question decides."""
        if count <= 0 or not questions:
            return []
        failures: list[str] = []

        async def one(i: int) -> float | None:
            question = questions[i % len(questions)]
            request = traced_request(
                f"{WARMUP_ID_PREFIX}{i + 1}", question.question, route(question, self.project.corpora)
            )
            try:
                async with self.slots:
                    if failures:
                        return None
                    _, latency, error = await self.ask(request, watched=False)
            except Exception as exc:
                print(
                    neutralise(
                        f"[rag-ci] warm-up request failed: {cut_at_word(self.redact(f'{type(exc).__name__}: {exc}'), 300)}"
                    ),
                    file=sys.stderr,
                    flush=True,
                )
                failures.append(type(exc).__name__)
                return None
            if error:
                failures.append(error)
            return None if error else latency

        started = time.perf_counter()
        latencies = await asyncio.gather(*(one(i) for i in range(count)))
        print(
            neutralise(
                warmup_line(
                    count, time.perf_counter() - started, latencies, [self.redact(f) for f in failures]
                )
            ),
            file=sys.stderr,
            flush=True,
        )
        return [None if x is None else round(x, 6) for x in latencies]

    async def answer(
        self, question: Question, judged: dict | None = None, *, again: bool = False
    ) -> QuestionResult:
        """Ask once, score. `judged` remembers this question's judge verdicts by answer and
        contexts, so a re-asked question whose answer repeats costs no judge call. `again`:
        a re-ask or another sample, not counted among the questions the breaker counts."""
        routed = route(question, self.project.corpora)
        # A conversation's turn also carries `messages` and `conversation_id` (docs/conversations.md).
        request = traced_request(question.id, question.question, routed)
        request.update(conversation_request(question))
        error = answer = usage = None
        stages: dict[str, float] = {}
        contexts: list = []
        latency = None
        async with self.slots:
            if self.breaker.tripped:  # the target stopped answering: nothing more is sent
                error = self.breaker.not_asked_error()
            else:
                cold = not self.breaker.answered  # sent before any call succeeded: maybe a cold start
                raw, latency, error = await self.ask(request, counts=not again)
                if cold and not again and error is not None and error.startswith(OWN_TIME_OUT):
                    self.early_time_outs.add(question.id)
                if raw is not None:
                    answer, contexts, usage = raw.answer, list(raw.contexts), raw.usage
                    stages = dict(raw.stages)
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
                    metrics.update(
                        {n: m.model_copy(update={"judge_cost_usd": 0.0}) for n, m in judged[seen].items()}
                    )
                else:
                    base = self.baseline.get(question.id)
                    scored = await self.judge.score(
                        question,
                        answer or "",
                        contexts,
                        base,
                        confirm_each=question.id in self.confirm_each,
                        settled=regressed_without_judge(metrics, base, question.content_hash, self.settling),
                    )
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
            **self.trace_fields(request, stages),
            error=error,
            leaks=leaks,
            metrics=metrics,
            verdict=verdict,
            failure_stage=failure_stage(metrics) if verdict == "fail" else None,
            unstable=any(m.unstable for m in metrics.values()),
        )

    def trace_fields(self, request: dict[str, Any], stages: dict[str, float]) -> dict[str, Any]:
        """The question's trace in its result: its id, its link (`report.trace_url`), its stages."""
        trace_id = str(request["traceparent"])[3:35]
        url = self.config.report.trace_url
        return {
            "trace_id": trace_id,
            "trace_url": trace_link(url, trace_id) if url else None,
            "stage_latency_s": stages,
        }


def traced_request(question_id: str, text: str, corpora: list[str]) -> dict[str, Any]:
    """The request of one ask, in a fresh W3C trace: the RAG's spans for this answer join it
    (docs/traces.md)."""
    return {"id": question_id, "question": text, "corpora": corpora, "traceparent": new_traceparent()}


def early_time_outs_to_reask(
    replay: Replay, records: Mapping[str, QuestionResult], todo: list[Question]
) -> list[Question]:
    """The questions that timed out before the target first answered, once it has answered
    since (a cold start, not an outage: a tripped breaker re-asks nothing), still in error."""
    if replay.breaker.tripped or not replay.breaker.answered:
        return []
    return [q for q in todo if q.id in replay.early_time_outs and records[q.id].verdict == "error"]


def redact_judged(record: QuestionResult, redact: Redactor) -> QuestionResult:
    """`record` with the judge's own words redacted: each metric's error and reason and the
    replies kept for reuse. A judge (or the gateway before it) may quote the key it was
    given ("Incorrect API key provided: sk-…"), and those texts reach every report."""
    if not redact or not record.metrics:
        return record
    metrics = {}
    for name, metric in record.metrics.items():
        clean = {
            "error": redact(metric.error) if metric.error else metric.error,
            "reason": redact(metric.reason) if metric.reason else metric.reason,
            "judge_replies": redact.tree(metric.judge_replies),
        }
        changed = {k: v for k, v in clean.items() if v != getattr(metric, k)}
        metrics[name] = metric.model_copy(update=changed) if changed else metric
    if all(metrics[n] is m for n, m in record.metrics.items()):
        return record
    return record.model_copy(update={"metrics": metrics})


def warmup_line(count: int, seconds: float, latencies: list[float | None], failures: list[str]) -> str:
    """'[rag-ci] warm-up: 3 unscored requests in 1.2s; 1 failed (…), 2 skipped (target.warmup)'; the
    first failure cut between words, never inside one ("(request i)")."""
    answered = [x for x in latencies if x is not None]
    spread = f", {min(answered):.2f}–{max(answered):.2f} s each" if answered else ""
    failed = (
        f"; {len(failures)} failed ({cut_at_word(' '.join(failures[0].split()), 160)}), "
        f"{count - len(answered) - len(failures)} skipped"
        if failures
        else ""
    )
    return f"[rag-ci] warm-up: {count} unscored request{'s' if count != 1 else ''} in {seconds:.1f}s{spread}{failed} (target.warmup)"
