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
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from rag_ci.core.config import Config, WriterConfig
from rag_ci.core.questionset.draft_plan import Job, Plan
from rag_ci.core.questionset.drafts import Written
from rag_ci.errors import RagCiError
from rag_ci.judges.build import api_key, judge_family, model_price
from rag_ci.judges.call_context import CostMeter, for_this_task
from rag_ci.judges.client import JudgeCallError, JudgeClient
from rag_ci.judges.fake_writer import OUT_OF_SCOPE_MARKER, VAGUE_MARKER
from rag_ci.judges.families import FAKE_FAMILY, canonical_family, family_of
from rag_ci.judges.pinning import alias_problem
from rag_ci.judges.prices import Price
from rag_ci.judges.providers import provider_spec

FAKE_WRITER_MODEL = "rag-ci-fake-writer-1"
# A reply of the Synthesizer's prompts is a few questions or a short answer: 32,000 characters is
# far above any honest one, and keeps one runaway reply (issue 34: 8 MB per reply) from feeding
# every later prompt and the duplicate check for minutes.
MAX_REPLY_CHARS = 32_000
TIME_LIMIT_REACHED = "time limit reached"
QUALITY_RETRIES = 3  # DeepEval's FiltrationConfig.max_quality_retries default
# rag-ci's styling of the two kinds DeepEval has no evolution for (StylingConfig).
VAGUE_FORMAT = (
    f"A short, {VAGUE_MARKER} as a hurried user would type it into a chat: lower case, "
    "no greeting, leaves out the product and the exact terms"
)
OUT_OF_SCOPE_STYLE = {
    "scenario": "A user of an assistant that answers only from the documents described in the context asks "
    f"{OUT_OF_SCOPE_MARKER}, in the same everyday register",
    "task": "The assistant must say the documents do not cover it",
    "input_format": "One plain question, answerable in general but not from these documents",
}


@dataclass(frozen=True)
class WriterCheck:
    label: str  # PROVIDER:MODEL, as provenance records it
    family: str
    warnings: tuple[str, ...] = ()


def check_writer(config: Config, writer: WriterConfig, *, estimate: bool = False) -> WriterCheck:
    """Everything that can refuse the writer without calling it: a missing writer, an alias,
    an unknown family, and above all a writer of the judge's family (refused, naming both).
    For `--estimate` (nothing is called) an alias or an unknown family is a warning, to be
    settled before drafting; a writer of the judge's family is refused all the same."""
    if writer.provider == "none":
        raise RagCiError(
            "no writer: pass `--writer PROVIDER:MODEL[@BASE_URL]` (or `--writer fake` for a dry run), "
            "or add a `writer:` block to rag-ci.yml (the same fields as `judge:`)"
        )
    if writer.provider == "fake":
        if writer.model not in (None, FAKE_WRITER_MODEL):
            raise RagCiError(
                f"writer.model '{writer.model}': the fake writer has one model; leave writer.model out"
            )
        return WriterCheck(
            "fake",
            FAKE_FAMILY,
            (
                "fake writer: drafts written by a fixed policy, offline, for a dry run; "
                "review them as carefully as any",
            ),
        )
    provider_spec(writer.provider)
    assert writer.model is not None
    label, warnings = f"{writer.provider}:{writer.model}", []
    problem = alias_problem(writer.provider, writer.model)
    if problem and not writer.allow_alias:
        message = (
            f"writer.model {problem}. Pin an exact, dated/versioned id so the provenance says which model "
            f"wrote the drafts, or set `writer.allow_alias: true`"
        )
        if not estimate:
            raise RagCiError(message)
        warnings.append(f"{message} (before drafting; the estimate does not need it)")
    try:
        family = judge_family(writer, role="writer")
    except RagCiError as exc:
        if not estimate:
            raise
        return WriterCheck(
            label, "unknown", (*warnings, f"{exc} (before drafting; the estimate does not need it)")
        )
    judge = config.judge
    if judge.provider not in ("none", "fake"):
        theirs = judge_family(judge)
        if theirs == family:
            raise RagCiError(
                f"the writer '{writer.model}' and the judge '{judge.model}' are both of the {family} family: a judge "
                f"grades questions and references its own family wrote more kindly. Choose a writer of another family "
                f"(--writer or writer.provider / writer.model), or correct `writer.family` / `judge.family` if rag-ci "
                f"guessed a family wrong"
            )
    else:
        warnings.append(
            f"no judge configured: when you add one, choose it outside the writer's family ({family})"
        )
    target = config.target
    generator = (
        canonical_family(target.generator_family)
        if target.generator_family
        else family_of(target.generator_model or "")
    )
    if generator == family:
        warnings.append(
            f"the writer '{writer.model}' shares the RAG generator's family ({family}): its questions may be "
            f"phrased the way the generator answers best; a writer of another family tests it harder"
        )
    return WriterCheck(label, family, tuple(warnings))


_EVOLUTION_TEMPLATES = (
    "reasoning_evolution",
    "concretizing_evolution",
    "constrained_evolution",
    "hypothetical_scenario_evolution",
    "comparative_question_evolution",
    "multi_context_evolution",
    "in_breadth_evolution",
)


def prompt_templates() -> tuple[str, ...]:
    """The fixed text of every prompt the writer gets: rag-ci's styling and DeepEval's
    Synthesizer templates with empty inputs. A draft that quotes them is the prompt echoed
    back, not a question (rag_ci.core.questionset.draft_checks)."""
    from rag_ci.judges.env import prepare_deepeval_environment

    prepare_deepeval_environment()
    from deepeval.synthesizer.templates import EvolutionTemplate, FilterTemplate, SynthesizerTemplate

    style = OUT_OF_SCOPE_STYLE
    texts = [
        VAGUE_FORMAT,
        *style.values(),
        SynthesizerTemplate.generate_synthetic_inputs(
            context="",
            max_goldens_per_context="",
            scenario=style["scenario"],
            task=style["task"],
            input_format=style["input_format"],
        ),
        SynthesizerTemplate.rewrite_evolved_input(
            "", scenario=style["scenario"], task=style["task"], input_format=style["input_format"]
        ),
        SynthesizerTemplate.rewrite_synthetic_inputs("", "", ""),
        SynthesizerTemplate.generate_synthetic_expected_output("", "", None),
        FilterTemplate.evaluate_synthetic_inputs(""),
    ]
    texts += [getattr(EvolutionTemplate, name)(input="", context=[]) for name in _EVOLUTION_TEMPLATES]
    return tuple(texts)


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
        from rag_ci.judges.client import JudgeClient
        from rag_ci.judges.providers.base import ProviderSettings
        from rag_ci.judges.retry import RetryPolicy

        if writer.provider == "fake":
            writer = writer.model_copy(update={"model": FAKE_WRITER_MODEL})
        spec = provider_spec(writer.provider)
        spec.ensure_installed()
        key = api_key(writer, spec, os.environ if env is None else env, role="writer")
        self.price: Price = model_price(writer, spec, role="writer")
        assert writer.model is not None
        settings = ProviderSettings(
            model=writer.model,
            temperature=writer.temperature,
            base_url=writer.base_url,
            api_key=key,
            timeout_s=writer.timeout_s,
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


@dataclass(frozen=True)
class Estimate:
    calls: int  # when every question passes DeepEval's filtration at once
    max_calls: int  # when every one is rewritten QUALITY_RETRIES times
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: no price known for the model
    max_cost_usd: float | None


# Typical reply lengths, in tokens, per prompt kind (the estimate's assumption).
_REPLY_TOKENS = {"inputs": 30, "filter": 50, "rewrite": 25, "evolve": 25, "style": 25, "expected": 60}
_QUESTION = "What does the manual say about the part this passage describes, and when does it apply?"


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)  # about 4 characters a token (the fake servers count the same way)


def estimate(plan: Plan, price: Price | None) -> Estimate:
    """Calls, tokens and dollars the plan takes, from the prompts DeepEval would render; nothing
    is called. Without a price (a model rag-ci has no price for) the dollars are None."""
    from rag_ci.judges.env import prepare_deepeval_environment

    prepare_deepeval_environment()
    from deepeval.synthesizer.templates import EvolutionTemplate, FilterTemplate, SynthesizerTemplate

    calls = extra = tokens_in = tokens_out = extra_in = extra_out = 0
    for job in plan.jobs:
        context = list(job.context)
        styled = job.kind in ("vague", "out_of_scope")
        style = (
            OUT_OF_SCOPE_STYLE
            if job.kind == "out_of_scope"
            else {"input_format": VAGUE_FORMAT}
            if styled
            else {}
        )
        inputs = SynthesizerTemplate.generate_synthetic_inputs(
            context=str(context),
            max_goldens_per_context=str(job.goldens),
            scenario=style.get("scenario"),
            task=style.get("task"),
            input_format=style.get("input_format"),
        )
        per_golden = [
            (FilterTemplate.evaluate_synthetic_inputs(_QUESTION), "filter"),
            (EvolutionTemplate.reasoning_evolution(input=_QUESTION, context=context), "evolve"),
        ]
        if styled:
            per_golden.append(
                (
                    SynthesizerTemplate.rewrite_evolved_input(
                        _QUESTION, input_format=style.get("input_format")
                    ),
                    "style",
                )
            )
        if job.kind != "out_of_scope":
            per_golden.append(
                (
                    SynthesizerTemplate.generate_synthetic_expected_output(
                        _QUESTION, "\n".join(context), None
                    ),
                    "expected",
                )
            )
        calls += 1 + job.goldens * len(per_golden)
        tokens_in += _tokens(inputs) + job.goldens * sum(_tokens(p) for p, _ in per_golden)
        tokens_out += _REPLY_TOKENS["inputs"] * job.goldens + job.goldens * sum(
            _REPLY_TOKENS[k] for _, k in per_golden
        )
        rewrite = SynthesizerTemplate.rewrite_synthetic_inputs(context, _QUESTION, "x" * 200)
        retries = job.goldens * (QUALITY_RETRIES - 1)  # each retry: one more evaluation and one rewrite
        extra += 2 * retries + job.goldens
        extra_in += retries * (_tokens(per_golden[0][0]) + _tokens(rewrite)) + job.goldens * _tokens(rewrite)
        extra_out += (
            retries * (_REPLY_TOKENS["filter"] + _REPLY_TOKENS["rewrite"])
            + job.goldens * _REPLY_TOKENS["rewrite"]
        )
    if price is None:
        return Estimate(calls, calls + extra, tokens_in, tokens_out, None, None)
    cost = price.cost(tokens_in, tokens_out)
    return Estimate(calls, calls + extra, tokens_in, tokens_out, cost, cost + price.cost(extra_in, extra_out))
