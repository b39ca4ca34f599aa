"""`questions generate --estimate`: the writer calls, tokens and dollars a plan takes, from the
prompts DeepEval would render; nothing is called."""

from __future__ import annotations

from dataclasses import dataclass

from rag_ci.core.questionset.draft_plan import Plan
from rag_ci.drafting.writer_prompts import OUT_OF_SCOPE_STYLE, QUALITY_RETRIES, VAGUE_FORMAT
from rag_ci.judges.prices import Price


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
