"""Where the scorer gets its DeepEval model: imported and built off the event loop, once.

Importing DeepEval (and the provider SDK) takes seconds of CPU: `prefetch` starts it in a
thread when the run will surely judge, `deepeval_model` waits for it (or starts it) on the
first judge call, and a fully cached run never imports it at all.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
from collections.abc import Mapping

from rag_ci.core.questionset.questions import Question
from rag_ci.core.results import JudgeFingerprint, QuestionResult
from rag_ci.judges.client import JudgeClient
from rag_ci.judges.metrics import JudgeMetricSpec
from rag_ci.judges.spend_cap import estimate_line, estimate_usd
from rag_ci.safety.logsafe import neutralise


class DeepEvalModelLoading:
    """The part of `DeepEvalJudgeScorer` (rag_ci.judges.scorer) that loads its DeepEval model."""

    fingerprint: JudgeFingerprint
    specs: dict[str, JudgeMetricSpec]
    client: JudgeClient
    _model: object | None
    _model_lock: asyncio.Lock | None
    _prefetch: concurrent.futures.Future | None
    _preload: tuple[str, ...]
    full: bool

    @property
    def stopped(self) -> str | None:
        """Why the judge makes no call any more (its spend cap, refused credentials), or None."""
        return self.client.stopped

    def _print_estimate(self, questions: list[Question], baseline: Mapping[str, QuestionResult]) -> None:
        """Under a spend cap, what judging these questions may cost, before the first call."""
        cap = self.client.cap
        if cap is None:
            return
        work, cached = [], 0
        for question in questions:
            old = None if self.full else baseline.get(question.id)
            specs = [s for s in self.specs.values() if s.applies_to(question)]
            judged = [s.deepeval_class for s in specs if not _cached(question, old, s.name)]
            cached += len(specs) - len(judged)
            work.append((question.question + (question.reference or ""), judged))
        cost, calls = estimate_usd(cap.price, work)
        line = estimate_line(cap.role, cap.cap_usd, cost, calls, len(questions), cached)
        print(neutralise(line), file=sys.stderr)

    async def deepeval_model(self):
        """The DeepEvalBaseLLM adapter, built when something must first be judged.

        Importing DeepEval takes seconds of CPU; done on the event loop it would stall
        every in-flight target request (and time them out), so it runs in a thread.
        A fully cached run never imports it at all.
        """
        if self._model is None:
            if self._model_lock is None:
                self._model_lock = asyncio.Lock()
            async with self._model_lock:
                if self._model is None:
                    if self._prefetch is not None:
                        self._model = await asyncio.wrap_future(self._prefetch)
                    else:
                        self._model = await asyncio.to_thread(
                            _load_deepeval_model, self.client, self.fingerprint.model, self._preload
                        )
        return self._model

    def prefetch(self) -> None:
        """Start importing DeepEval and the provider SDK now, in a worker thread, and build
        the SDK client there.

        Called when the run will surely judge (no verdict cache, or `expect` finds a question
        that will be judged whatever its answer): the import (a second or more of CPU) then
        overlaps with building and starting the target instead of delaying the first judge
        call. A run that may be fully cached does not call it: the import would compete with
        its target for the interpreter (a warm re-run of the example: 3.9 s → 5.5 s), so it
        starts on the first answer the verdict cache cannot serve.
        """
        if self._prefetch is not None or self._model is not None:
            return
        future: concurrent.futures.Future = concurrent.futures.Future()

        def load() -> None:
            try:
                future.set_result(_load_deepeval_model(self.client, self.fingerprint.model, self._preload))
            except BaseException as exc:
                future.set_exception(exc)

        threading.Thread(target=load, name="rag-ci-deepeval-import", daemon=True).start()
        self._prefetch = future

    def expect(self, questions: list[Question], baseline: Mapping[str, QuestionResult]) -> None:
        """Start DeepEval's import now (`prefetch`) when one of the questions about to be asked
        will be judged whatever its answer: new or edited since the baseline, or a metric the
        baseline holds no verdict of. Otherwise the import starts on the first answer the
        verdict cache cannot serve (the first changed answer), and a run whose answers are
        all unchanged imports nothing."""
        self._print_estimate(questions, baseline)
        if self._prefetch is not None or self._model is not None:
            return
        for question in questions:
            old = baseline.get(question.id)
            if (
                old is None
                or old.question_hash != question.content_hash
                or any(
                    (m := old.metrics.get(s.name)) is None or m.error is not None or m.cache_key is None
                    for s in self.specs.values()
                    if s.applies_to(question)
                )
            ):
                self.prefetch()
                return


def _cached(question: Question, old: QuestionResult | None, name: str) -> bool:
    """Whether the baseline holds a verdict the cache may serve (if the answer is unchanged)."""
    if old is None or old.question_hash != question.content_hash:
        return False
    metric = old.metrics.get(name)
    return metric is not None and metric.error is None and metric.cache_key is not None


def _load_deepeval_model(client: JudgeClient, model_name: str, preload: tuple[str, ...]):
    from rag_ci.judges.deepeval_import import import_deepeval

    import_deepeval(preload)  # slow imports, off the event loop; before anything else imports DeepEval
    from rag_ci.judges.llm import RagCiJudgeModel

    # The SDK client too: building it loads the CA bundle and the HTTP transport's modules
    # (0.3-1 s of CPU), which on the first judge call would stall the event loop.
    client.warm_up()
    return RagCiJudgeModel(client, model_name)
