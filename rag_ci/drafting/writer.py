"""The writer: DeepEval's Synthesizer drafting questions through rag-ci's provider layer.

`rag-ci questions generate` plans jobs (rag_ci.core.questionset.draft_plan); each job is
one `Synthesizer.a_generate_goldens_from_contexts` call on the passages rag-ci cut (no
embedder, no DeepEval chunking), with DeepEval's filtration and one evolution. The model
DeepEval sees is `WriterModel`, which forwards every prompt to the same `JudgeClient` the
judge uses: the same providers, retries honouring Retry-After, one concurrency limit,
circuit breaker and priced tokens.

Where DeepEval 4.3.1 falls short, rag-ci works around it (docs/questions.md):
- its evolutions draw from the global `random`: every job gets its own Synthesizer with
  one evolution, chosen by the seeded plan, so a run does not depend on reply order;
- it sleeps 0.1 s, blocking its event loop, each time it removes a progress bar (a few per
  context): each job runs on a worker thread with its own loop, so those sleeps overlap
  and never stall the writer's calls, which all run on the caller's loop;
- it returns fewer goldens than asked, the same golden twice, and inputs that never passed
  its own filtration: rag-ci counts what came back per job, drops the rest with a reason
  (rag_ci.core.questionset.drafts, .dedupe) and says so in the summary.

The writer's parts: checking it before any call (rag_ci.drafting.writer_check), what it is
told (rag_ci.drafting.writer_prompts) and what a plan would cost (rag_ci.drafting.writer_estimate).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from rag_ci.core.config import WriterConfig
from rag_ci.core.questionset.draft_plan import Job, Plan
from rag_ci.core.questionset.drafts import Written
from rag_ci.drafting.writer_check import FAKE_WRITER_MODEL, WriterCheck, check_writer
from rag_ci.drafting.writer_prompts import OUT_OF_SCOPE_STYLE, QUALITY_RETRIES, VAGUE_FORMAT
from rag_ci.judges.build import api_key, model_price
from rag_ci.judges.call_context import CostMeter, for_this_task
from rag_ci.judges.client import JudgeCallError, JudgeClient
from rag_ci.judges.prices import Price
from rag_ci.judges.providers import provider_spec

# `questions generate` checks the writer before it builds one (check_writer, kept importable here).
__all__ = ["JobOutcome", "Writer", "check_writer"]

# A reply of the Synthesizer's prompts is a few questions or a short answer: 32,000 characters is
# far above any honest one, and keeps one runaway reply (issue 34: 8 MB per reply) from feeding
# every later prompt and the duplicate check for minutes.
MAX_REPLY_CHARS = 32_000
TIME_LIMIT_REACHED = "time limit reached"


@dataclass
class JobOutcome:
    written: list[Written] = field(default_factory=list)
    meter: CostMeter = field(default_factory=CostMeter)
    error: str | None = None


def _writer_model_class() -> type:
    """The DeepEval model class of the writer (defined on first use: DeepEval is imported then)."""
    from rag_ci.judges.env import prepare_deepeval_environment

    prepare_deepeval_environment()
    import deepeval.synthesizer.synthesizer  # noqa: F401 - imported here once, not by every job's thread at once
    from deepeval.models import DeepEvalBaseLLM

    class _WriterModel(DeepEvalBaseLLM):
        """What DeepEval's Synthesizer sees as its model, on a job's worker thread: every call
        runs on the writer loop (the caller's), through the shared JudgeClient, metered per job."""

        def __init__(
            self,
            client: JudgeClient,
            name: str,
            loop: asyncio.AbstractEventLoop,
            meter: CostMeter,
            deadline: float | None = None,
        ):
            self._client, self._name, self._loop, self._meter, self._deadline = (
                client,
                name,
                loop,
                meter,
                deadline,
            )
            super().__init__(name)

        def load_model(self, *args: Any, **kwargs: Any) -> JudgeClient:  # type: ignore[override]  # stored, not used as an LLM
            return self._client

        async def _metered(self, prompt: str, schema: type[BaseModel] | None) -> Any:
            for_this_task(meter=self._meter)  # this task's own context: the job's calls and cost
            left = None if self._deadline is None else self._deadline - self._loop.time()
            if left is not None and left <= 0:
                raise JudgeCallError(TIME_LIMIT_REACHED)
            try:
                async with asyncio.timeout(left):
                    # fresh: a writer asked the same prompt twice wants a second draft, not the first again.
                    reply = await self._client.call(prompt, schema, fresh=True)
            except TimeoutError:
                raise JudgeCallError(TIME_LIMIT_REACHED) from None
            size = len(reply.model_dump_json()) if isinstance(reply, BaseModel) else len(str(reply))
            if size > MAX_REPLY_CHARS:
                raise JudgeCallError(
                    f"a writer reply of {size:,} characters, over the {MAX_REPLY_CHARS:,} a reply may have"
                )
            return reply

        def generate(self, prompt: str, schema: type[BaseModel] | None = None, **kwargs: Any) -> Any:
            return asyncio.run_coroutine_threadsafe(self._metered(prompt, schema), self._loop).result()

        async def a_generate(self, prompt: str, schema: type[BaseModel] | None = None, **kwargs: Any) -> Any:
            return await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(self._metered(prompt, schema), self._loop)
            )

        def get_model_name(self, *args: Any, **kwargs: Any) -> str:
            return self._name

    return _WriterModel


def _synthesizer(job: Job, model: Any) -> Any:
    from deepeval.synthesizer import Synthesizer
    from deepeval.synthesizer.config import EvolutionConfig, FiltrationConfig, StylingConfig
    from deepeval.synthesizer.types import Evolution

    styling = None
    if job.kind == "vague":
        styling = StylingConfig(input_format=VAGUE_FORMAT)
    elif job.kind == "out_of_scope":
        styling = StylingConfig(**OUT_OF_SCOPE_STYLE)
    return Synthesizer(
        model=model,
        async_mode=True,
        max_concurrent=8,
        filtration_config=FiltrationConfig(critic_model=model, max_quality_retries=QUALITY_RETRIES),
        evolution_config=EvolutionConfig(num_evolutions=1, evolutions={Evolution(job.evolution): 1.0}),
        styling_config=styling,
    )


def _run_job(job: Job, model: Any) -> list[Written]:
    """On a worker thread: one DeepEval call on the job's context, in a loop of the thread's own."""
    from rich.progress import Progress

    synthesizer = _synthesizer(job, model)
    labels = [f"{p.corpus}/{p.path}" for p in job.passages]
    multi = len(labels) > 1
    goldens = asyncio.run(
        synthesizer.a_generate_goldens_from_contexts(
            contexts=[list(job.context)],
            include_expected_output=job.kind != "out_of_scope",
            max_goldens_per_context=job.goldens,
            source_files=[labels] if multi else [labels[0]] if labels else None,
            context_chunk_source_files=[labels] if multi else None,
            _progress=Progress(disable=True),
            _pbar_id=0,  # rag-ci shows its own bar
        )
    )
    out = []
    for golden in goldens[: job.goldens]:  # DeepEval keeps at most the number asked for, on the async path
        meta = golden.additional_metadata or {}
        out.append(
            Written(
                job=job.key,
                question=golden.input or "",
                reference=golden.expected_output,
                quality=meta.get("synthetic_input_quality"),
                used_sources=tuple(meta.get("used_source_files") or ()),
                evolutions=tuple(str(e) for e in meta.get("evolutions") or ()),
            )
        )
    return out


class Writer:
    """The writer model of one `questions generate` run: its client, price and label."""

    def __init__(self, writer: WriterConfig, check: WriterCheck, env: Mapping[str, str] | None = None):
        from rag_ci.drafting.fake_offline import deepeval_installed
        from rag_ci.judges.client import JudgeClient
        from rag_ci.judges.cloud_settings import cloud_settings, credentials_hint
        from rag_ci.judges.providers.base import ProviderSettings
        from rag_ci.judges.retry import RetryPolicy
        from rag_ci.judges.spend_cap import SpendCap

        if writer.provider == "fake":
            writer = writer.model_copy(update={"model": FAKE_WRITER_MODEL})
        # The fake writer without DeepEval: its policy applied directly (rag_ci.drafting.fake_offline).
        self.offline = writer.provider == "fake" and not deepeval_installed()
        spec = provider_spec(writer.provider)
        if not self.offline:
            spec.ensure_installed()
        environ = os.environ if env is None else env
        key = api_key(writer, spec, environ, role="writer")
        self.price: Price = model_price(writer, spec, role="writer")
        cloud = cloud_settings(writer, key, environ, role="writer")
        assert writer.model is not None
        settings = ProviderSettings(
            model=writer.model,
            temperature=writer.temperature,
            base_url=writer.base_url,
            api_key=key,
            timeout_s=writer.timeout_s,
            cloud=cloud,
        )
        policy = RetryPolicy(
            max_retries=writer.max_retries,
            backoff_s=writer.backoff_s,
            timeout_s=writer.timeout_s,
            max_wait_s=writer.max_wait_s,
        )
        self.client = JudgeClient(
            lambda: spec.create(settings),
            policy=policy,
            concurrency=writer.concurrency,
            price=self.price,
            concurrency_max=writer.concurrency_max,
            role="writer",
            cap=SpendCap(writer.max_cost_usd, self.price, "writer") if writer.max_cost_usd else None,
            credentials_hint=credentials_hint(writer.provider, "writer"),
        )
        self.config, self.label, self.model_name = writer, check.label, writer.model

    async def write(
        self,
        plan: Plan,
        on_job: Callable[[Job, JobOutcome], None] | None = None,
        time_limit_s: float | None = None,
    ) -> dict[str, JobOutcome]:
        """Every job of the plan; a job that fails is recorded with its error, the others go on.
        Past `time_limit_s` every call fails at once (TIME_LIMIT_REACHED): the jobs still running
        end, the finished ones keep what they drafted."""
        if self.offline:
            return _offline(plan, on_job)
        loop = asyncio.get_running_loop()
        deadline = None if time_limit_s is None else loop.time() + time_limit_s
        model_class = await asyncio.to_thread(_writer_model_class)  # DeepEval's import takes seconds
        outcomes: dict[str, JobOutcome] = {}
        # Threads only wait (for the writer loop, or DeepEval's sleeps): a few more than the
        # calls allowed in flight keep every slot of the client busy.
        pool = ThreadPoolExecutor(
            max_workers=max(2, min(len(plan.jobs), self.config.concurrency + 4)),
            thread_name_prefix="rag-ci-writer",
        )

        async def one(job: Job) -> None:
            outcome = JobOutcome()
            model = model_class(self.client, self.model_name, loop, outcome.meter, deadline)
            try:
                outcome.written = await loop.run_in_executor(pool, _run_job, job, model)
            except JudgeCallError as exc:
                outcome.error = str(exc)
            except Exception as exc:
                outcome.error = f"{type(exc).__name__}: {exc}"[:500]
            outcomes[job.key] = outcome
            if on_job is not None:
                on_job(job, outcome)

        try:
            await asyncio.gather(*(one(job) for job in plan.jobs))
        finally:
            pool.shutdown(wait=True)
            await self.client.aclose()
        return outcomes


def _offline(plan: Plan, on_job: Callable[[Job, JobOutcome], None] | None) -> dict[str, JobOutcome]:
    from rag_ci.drafting.fake_offline import draft_offline

    outcomes = {}
    for job in plan.jobs:
        outcomes[job.key] = outcome = JobOutcome(written=draft_offline(job))
        if on_job is not None:
            on_job(job, outcome)
    return outcomes
