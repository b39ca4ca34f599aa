"""Judge cost: judge calls per question on a cold, a reworded and a counterfactual run, and
cost per 100 questions at the price table's rates; plus plain DeepEval in two variants.

Runs against figure 1's judge simulator with its cold run as the baseline:
- reworded: every answer gets a sentence appended that states nothing ("That is all."):
  same facts, new text, so every metric reading the answer is judged again;
- reworded_equivalent: the reworded run with `judge.reuse_equivalent_answers: true`;
- counterfactual: the first `COUNTERFACTUAL` questions retrieve a passage stating another
  value and answer with it (genuine regressions, confirmed by `gate.confirm_runs`); the
  other questions are unchanged (verdict cache).

Plain DeepEval, the same test cases, metrics and judge, under `deepeval.evaluate`:
`stock` uses DeepEval's own `OpenAIModel` (a new SDK client per call), `one-client`
a `DeepEvalBaseLLM` holding one `AsyncOpenAI` client for the run, as a careful user
would write it. Each run must complete every test case with every metric and make
the judge calls it says, or the benchmark stops (a partial run is no figure).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks.simulators import SimulatedTarget, fact
from rag_ci.targets.base import WARMUP_ID_PREFIX

COUNTERFACTUAL = 10
REWORDING = " That is all."
PRICED_MODELS = ("gpt-4.1-mini", "claude-haiku-4-5")


class RewordedTarget(SimulatedTarget):
    @staticmethod
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        reply = SimulatedTarget.reply(request)
        return {**reply, "answer": reply["answer"] + REWORDING}


class CounterfactualTarget(SimulatedTarget):
    """The first COUNTERFACTUAL questions read a passage with another value, and repeat it."""

    @staticmethod
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        reply = SimulatedTarget.reply(request)
        if request["id"].startswith(WARMUP_ID_PREFIX):  # an unscored warm-up request
            return reply
        i = int(request["id"].split("-")[1])
        if i >= COUNTERFACTUAL:
            return reply
        _, sentence = fact(i)
        head, value = sentence.rstrip(".").rsplit(" is ", 1)
        number, unit = value.split(" ")
        other = f"{head} is {int(number) + 500} {unit}."
        contexts = [{**reply["contexts"][0], "text": f"Revised: {other}"}, *reply["contexts"][1:]]
        return {**reply, "answer": other, "contexts": contexts}


def check_ragci_complete(result, label: str) -> None:
    """Every question scored with its judge metrics, none lost to a judge error."""
    errors = [f"{q.id}/{n}: {m.error}" for q in result.questions for n, m in q.metrics.items() if m.error]
    unscored = [q.id for q in result.questions if not any(m.kind == "judge" for m in q.metrics.values())]
    if errors or unscored:
        raise RuntimeError(
            f"rag-ci {label} run incomplete: {len(errors)} metric errors {errors[:3]}, "
            f"{len(unscored)} questions without judge metrics"
        )


def cost_per_100(stats: dict[str, Any], questions: int) -> dict[str, float]:
    from rag_ci.judges.prices import PRICE_TABLE

    return {
        model: PRICE_TABLE[model].cost(stats["prompt_tokens"], stats["completion_tokens"]) * 100 / questions
        for model in PRICED_MODELS
    }


def judge_cost_runs(
    run_ragci, judge, config: Path, cold, workdir: Path, *, target_latency_s: float
) -> dict[str, Any]:
    """Reworded and counterfactual runs against the cold baseline; `run_ragci` is the harness's runner."""
    n = len(cold.questions)
    figures: dict[str, Any] = {}
    equivalent = config.with_name("rag-ci.equivalent.yml")
    equivalent.write_text(
        config.read_text(encoding="utf-8").replace(
            "  prices:", "  reuse_equivalent_answers: true\n  prices:"
        ),
        encoding="utf-8",
    )
    for label, target, project in (
        ("reworded", RewordedTarget(target_latency_s), config),
        ("counterfactual", CounterfactualTarget(target_latency_s), config),
        ("reworded_equivalent", RewordedTarget(target_latency_s), equivalent),
    ):
        judge.reset()
        result, wall = run_ragci(project, workdir / f"{label}.json", target=target, baseline=cold)
        check_ragci_complete(result, label)
        stats = judge.stats()
        figures[label] = {
            "judge_calls": stats["answered"],
            "judge_calls_per_question": stats["answered"] / n,
            "wall_s": wall,
            "kinds": stats["kinds"],
            "cost_per_100_questions_usd": cost_per_100(stats, n),
            "confirmed_metrics": sum(
                1 for q in result.questions for m in q.metrics.values() if m.confirm_runs
            ),
            "failing_questions": sum(1 for q in result.questions if q.verdict == "fail"),
        }
    return figures


# -- plain DeepEval, two variants --------------------------------------------------------------


def one_client_model(base_url: str, model_name: str = "gpt-4.1-mini"):
    """A DeepEvalBaseLLM holding one AsyncOpenAI client for the whole run."""
    from deepeval.models import DeepEvalBaseLLM
    from openai import AsyncOpenAI

    class OneClientOpenAI(DeepEvalBaseLLM):
        def __init__(self):
            self.client = AsyncOpenAI(base_url=base_url, api_key="simulated", max_retries=6)
            super().__init__(model_name)

        def load_model(self, *args, **kwargs):
            return self.client

        def generate(self, prompt: str, schema=None, **kwargs):
            raise NotImplementedError("async only")

        async def a_generate(self, prompt: str, schema=None, **kwargs):
            reply = await self.client.chat.completions.create(
                model=model_name,
                temperature=0,
                messages=[{"role": "user", "content": prompt}],
                response_format={"type": "json_object"},
            )
            text = reply.choices[0].message.content or ""
            return schema.model_validate_json(text) if schema is not None else text

        def get_model_name(self, *args, **kwargs) -> str:
            return model_name

    return OneClientOpenAI()


def check_deepeval_complete(result, cases: int, metrics: int, label: str) -> int:
    """Raises unless DeepEval returned every test case with every metric scored; returns passing cases."""
    results = list(result.test_results)
    scored = sum(
        1 for t in results for m in (t.metrics_data or []) if m.error is None and m.score is not None
    )
    if len(results) != cases or scored != cases * metrics:
        raise RuntimeError(
            f"deepeval.evaluate ({label}) did not finish: {len(results)}/{cases} test cases, "
            f"{scored}/{cases * metrics} metrics scored"
        )
    return sum(1 for t in results if t.success)


def deepeval_variants(
    judge_process, config: Path, concurrency: int, *, build_cases, build_metrics, run_deepeval, log
) -> dict[str, Any]:
    """`deepeval.evaluate` with DeepEval's stock model class and with a one-client model."""
    from deepeval.models import OpenAIModel

    out: dict[str, Any] = {}
    variants = {
        "stock": lambda url: OpenAIModel(
            model="gpt-4.1-mini", base_url=url, api_key="simulated", temperature=0
        ),
        "one_client": one_client_model,
    }
    for label, make_model in variants.items():
        with judge_process() as judge:
            cases = build_cases(config)
            metrics = build_metrics(config, make_model(judge.base_url))
            log(f"  deepeval.evaluate ({label}) on {len(cases)} test cases, max_concurrent={concurrency}")
            started = time.perf_counter()
            result, wall = run_deepeval(cases, metrics, concurrency)
            stats = judge.stats()
            passed = check_deepeval_complete(result, len(cases), len(metrics), label)
            out[label] = {
                "wall_s": wall,
                "judge_calls": stats["answered"],
                "judge_errors": stats["errors"],
                "passed_cases": passed,
                "max_in_flight": stats["max_in_flight"],
                "kinds": stats["kinds"],
                "judge_calls_per_question": stats["answered"] / len(cases),
                "process_s": time.perf_counter() - started,
            }
            log(f"    {wall:.2f}s, {stats['answered']} judge calls, {passed}/{len(cases)} passing")
    return out
