"""The judge inside a real engine run: family check on reported models, cache across runs."""

import asyncio
import textwrap
import uuid

import pytest

from fakes.judge_setup import JUDGE_MODELS
from rag_ci.errors import RagCiError
from rag_ci.files.project import load_project
from rag_ci.run.engine import RunOptions, run_project

RAG = """
DOCS = {{"a": ("a/x.md#0", "The delay is 10 ms on CAN."), "b": ("b/y.md#0", "The delay is 20 ms on LIN.")}}

def answer(request):
    if "CEO" in request["question"]:
        return {{"answer": "I could not find this in the documents.", "contexts": [], "usage": {{"model": "{model}"}}}}
    contexts = [{{"text": DOCS[c][1], "doc_id": c, "source": DOCS[c][0]}} for c in request["corpora"] if c in DOCS]
    text = " ".join(c["text"] for c in contexts) or "I could not find this in the documents."
    return {{"answer": text, "contexts": contexts, "usage": {{"model": "{model}"}}}}
"""
QUESTIONS = """
version: 1
questions:
  - {id: Q1, question: What is the delay on CAN?, reference: The delay is 10 ms on CAN., doc_id: a, sources: [a/x.md]}
  - {id: Q2, question: What is the delay on LIN?, reference: The delay is 20 ms on LIN., doc_id: b, sources: [b/y.md]}
  - {id: OOS, question: Who is the CEO?, expect: refusal}
"""


def project(tiny_project, tmp_path, server, reported_model, generator_family=None):
    module = f"gen_rag_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(RAG.format(model=reported_model))
    family = f"\n  generator_family: {generator_family}" if generator_family else ""
    target = f"target:\n  kind: python\n  entry: {module}:answer\n  path: ['.']{family}\n"
    judge = textwrap.dedent(f"""
        judge:
          provider: openai
          model: {JUDGE_MODELS["openai"]}
          base_url: {server.base_url}
          backoff_s: 0.01
        """)
    return load_project(tiny_project(target, QUESTIONS, judge))


@pytest.fixture(autouse=True)
def _openai_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")


def test_a_generator_of_the_judges_family_stops_the_run_before_any_judge_call(
    tiny_project, tmp_path, fake_judge
):
    server = fake_judge("openai")
    proj = project(tiny_project, tmp_path, server, reported_model="gpt-4o-mini-2024-07-18")
    with pytest.raises(RagCiError) as excinfo:
        asyncio.run(
            run_project(proj, RunOptions(output=tmp_path / "results.json", progress=False, build=False))
        )
    message = str(excinfo.value)
    assert "gpt-4o-mini-2024-07-18" in message and JUDGE_MODELS["openai"] in message
    assert server.requests == 0


def test_an_unknown_generator_family_asks_for_the_override(tiny_project, tmp_path, fake_judge):
    server = fake_judge("openai")
    proj = project(tiny_project, tmp_path, server, reported_model="house-model-3")
    with pytest.raises(RagCiError, match="target.generator_family"):
        asyncio.run(
            run_project(proj, RunOptions(output=tmp_path / "results.json", progress=False, build=False))
        )
    assert server.requests == 0


def test_an_engine_run_records_judge_metrics_and_a_rerun_costs_no_judge_call(
    tiny_project, tmp_path, fake_judge
):
    server = fake_judge("openai")
    proj = project(tiny_project, tmp_path, server, reported_model="llama3.1:8b")
    first = asyncio.run(
        run_project(proj, RunOptions(output=tmp_path / "base.json", progress=False, build=False))
    )
    assert first.meta.judge is not None and first.meta.judge.model == JUDGE_MODELS["openai"]
    assert all(q.verdict == "pass" for q in first.questions), [
        (q.id, q.verdict, q.metrics) for q in first.questions
    ]
    assert first.by_id()["Q1"].metrics["correctness"].passed is True
    cold = server.requests
    assert cold > 0
    second = asyncio.run(
        run_project(
            proj, RunOptions(output=tmp_path / "head.json", baseline=first, progress=False, build=False)
        )
    )
    assert server.requests == cold
    assert all(m.cached for q in second.questions for m in q.metrics.values() if m.kind == "judge")


# A question whose answer already fails a judge-free metric its baseline passed
# (keyword coverage here) is a regression whatever the judge says, as after one confirmed flip.
SETTLE_RAG = """
def answer(request):
    context = {"text": "The delay is 10 ms on CAN.", "doc_id": "a", "source": "a/x.md#0"}
    return {"answer": "The delay is %s on CAN.", "contexts": [context], "usage": {"model": "llama3.1:8b"}}
"""
SETTLE_QUESTIONS = """
version: 1
questions:
  - {id: Q1, question: What is the delay on CAN?, reference: The delay is 10 ms on CAN., doc_id: a, keywords: [10 ms]}
"""


def settle_project(tiny_project, tmp_path, server, said):
    module = f"settle_rag_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(SETTLE_RAG % said)
    judge = textwrap.dedent(f"""
        metrics:
          keyword_coverage: {{threshold: 0.6}}
          correctness: {{}}
          completeness: {{}}
        judge:
          provider: openai
          model: {JUDGE_MODELS["openai"]}
          base_url: {server.base_url}
          backoff_s: 0.01
        """)
    return load_project(
        tiny_project(
            f"target:\n  kind: python\n  entry: {module}:answer\n  path: ['.']\n", SETTLE_QUESTIONS, judge
        )
    )


def wrong_answer_run(tiny_project, tmp_path, server, confirm_each=frozenset()):
    base = asyncio.run(
        run_project(
            settle_project(tiny_project, tmp_path, server, "10 ms"),
            RunOptions(output=tmp_path / "base.json", progress=False, build=False),
        )
    )
    assert base.questions[0].verdict == "pass"
    server.reset()
    return asyncio.run(
        run_project(
            settle_project(tiny_project, tmp_path, server, "17 ms"),
            RunOptions(
                output=tmp_path / "head.json",
                baseline=base,
                progress=False,
                build=False,
                **({"confirm_each": confirm_each} if confirm_each else {}),
            ),
        )
    ).questions[0]


def test_a_question_regressed_on_a_judge_free_metric_has_its_judged_flips_kept_unconfirmed(
    tiny_project, tmp_path, fake_judge
):
    server = fake_judge("openai")
    head = wrong_answer_run(tiny_project, tmp_path, server)
    assert head.metrics["keyword_coverage"].passed is False
    assert head.metrics["correctness"].passed is False and head.metrics["completeness"].passed is False
    assert [head.metrics[m].confirm_runs for m in ("correctness", "completeness")] == [[], []]
    assert server.requests == 2  # the two fresh verdicts: no confirmation, no reason (GEval carries one)


def test_a_question_the_accepted_file_names_has_each_judged_flip_confirmed(
    tiny_project, tmp_path, fake_judge
):
    # accepted.yml may accept the keyword drop only: then a judged flip gates on its own, and
    # must be confirmed as if nothing else had regressed.
    server = fake_judge("openai")
    head = wrong_answer_run(tiny_project, tmp_path, server, confirm_each=frozenset({"Q1"}))
    # Each confirmed on both sides (a lead of 3 at the default disagreement): the head's answer
    # fails three times, the baseline's stored answer passes twice more.
    assert [head.metrics[m].confirm_runs for m in ("correctness", "completeness")] == [
        [False] * 3,
        [False] * 3,
    ]
    assert [head.metrics[m].baseline_votes for m in ("correctness", "completeness")] == [
        [True] * 3,
        [True] * 3,
    ]
    assert server.requests == 2 + 2 * (2 + 2)
