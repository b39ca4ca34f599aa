"""The spend cap (`judge.max_cost_usd`): the judge's calls stop at the cap, the run keeps what it has,
exits 2, and `--resume` with a higher cap completes it as an uncapped run would have."""

import asyncio
import re
import textwrap

import pytest

from fakes.judge_setup import JUDGE_MODELS, judge_config
from rag_ci.errors import RagCiError
from rag_ci.files.journal import journal_path
from rag_ci.files.project import load_project
from rag_ci.judges.build import build_judge
from rag_ci.run.engine import RunOptions, run_project

RAG = """
DOCS = {"a": ("a/x.md#0", "The delay is 10 ms on CAN."), "b": ("b/y.md#0", "The delay is 20 ms on LIN.")}

def answer(request):
    contexts = [{"text": DOCS[c][1], "doc_id": c, "source": DOCS[c][0]} for c in request["corpora"] if c in DOCS]
    text = " ".join(c["text"] for c in contexts) or "I could not find this in the documents."
    return {"answer": text, "contexts": contexts, "usage": {"model": "llama3.1:8b"}}
"""
QUESTIONS = """
version: 1
questions:
  - {id: Q1, question: What is the delay on CAN?, reference: The delay is 10 ms on CAN., doc_id: a, sources: [a/x.md]}
  - {id: Q2, question: What is the delay on LIN?, reference: The delay is 20 ms on LIN., doc_id: b, sources: [b/y.md]}
  - {id: Q3, question: Which delay is on CAN?, reference: 10 ms., doc_id: a, sources: [a/x.md]}
  - {id: Q4, question: Which delay is on LIN?, reference: 20 ms., doc_id: b, sources: [b/y.md]}
"""
# One call at a time (answers are judged in the order they arrive), priced high so that the fake server's token counts make cents: the cap is reached in a few calls.
PRICES = "{input_per_mtok: 100.0, output_per_mtok: 100.0}"
ESTIMATE = re.compile(r"judge cost estimate: up to \$(?P<cost>[0-9.]+) for (?P<calls>\d+) calls")


def write_project(tiny_project, tmp_path, server, cap: float | None):
    module = tmp_path / "cap_rag.py"
    if not module.exists():
        module.write_text(RAG)
    cap_line = f"\n  max_cost_usd: {cap}" if cap is not None else ""
    judge = (
        textwrap.dedent(f"""
        judge:
          provider: openai
          model: {JUDGE_MODELS["openai"]}
          base_url: {server.base_url}
          backoff_s: 0.01
          concurrency: 1
          concurrency_max: 1
          prices: {PRICES}""")
        + cap_line
        + "\n"
    )
    target = "target:\n  kind: python\n  entry: cap_rag:answer\n  path: ['.']\n"
    return load_project(tiny_project(target, QUESTIONS, judge))


def run(project, output, **options):
    return asyncio.run(
        run_project(project, RunOptions(output=output, progress=False, build=False, **options))
    )


def judged(result):
    return {
        q.id: (q.verdict, {n: (m.score, m.passed) for n, m in q.metrics.items()}) for q in result.questions
    }


@pytest.fixture(autouse=True)
def _openai_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")


def test_a_capped_run_stops_at_the_cap_with_exit_2_and_resume_with_a_higher_cap_completes_it(
    tiny_project, tmp_path, fake_judge, capsys
):
    server = fake_judge("openai")
    uncapped = run(write_project(tiny_project, tmp_path, server, cap=None), tmp_path / "uncapped.json")
    spent = sum(m.judge_cost_usd for q in uncapped.questions for m in q.metrics.values())
    assert spent > 0 and all(q.verdict in ("pass", "fail") for q in uncapped.questions)
    capsys.readouterr()

    cap = round(spent / 2, 6)
    output = tmp_path / "capped.json"
    server.reset()
    with pytest.raises(RagCiError) as stopped:
        run(write_project(tiny_project, tmp_path, server, cap=cap), output)
    message = str(stopped.value)
    assert re.fullmatch(
        rf"judge stopped at \$[0-9.]+ of \${cap:g}: raise judge\.max_cost_usd or run on fewer questions; "
        r"--resume continues",
        message,
    ), message
    # The estimate came before the first call, and it is above the cap (the run was bound to stop).
    estimate = ESTIMATE.search(capsys.readouterr().err)
    assert estimate is not None and float(estimate["cost"]) > cap
    # Results kept: results.json holds every question; the unjudged ones are not evaluated, never a pass.
    from rag_ci.files.results_file import load_results

    partial = load_results(output)
    assert [q.id for q in partial.questions] == ["Q1", "Q2", "Q3", "Q4"]
    # What the judge was paid for (the server's token counts at the configured price) stays under the cap.
    assert 0 < sum(m.judge_cost_usd for q in partial.questions for m in q.metrics.values()) <= cap
    left = [q for q in partial.questions if q.error and q.error.startswith("not evaluated: judge stopped at")]
    assert left and all(q.verdict == "error" for q in left)
    kept = {q.id for q in partial.questions} - {q.id for q in left}
    # One call at a time, the earlier answers' first: the first question was judged whole, and kept.
    assert "Q1" in kept and partial.by_id()["Q1"].verdict == "pass"
    assert judged(partial).items() >= {i: judged(uncapped)[i] for i in kept}.items()

    server.reset()
    resumed = run(write_project(tiny_project, tmp_path, server, cap=1000.0), output, resume=True)
    err = capsys.readouterr().err
    assert f"resume: {len(kept)} questions already done, {len(left)} to go" in err
    assert judged(resumed) == judged(uncapped)
    assert not journal_path(output).exists()  # completed: the journal is gone


def test_the_estimate_leaves_out_the_verdicts_the_baseline_serves(tiny_project, tmp_path, fake_judge, capsys):
    server = fake_judge("openai")
    project = write_project(tiny_project, tmp_path, server, cap=1000.0)
    first = run(project, tmp_path / "base.json")
    first_estimate = ESTIMATE.search(capsys.readouterr().err)
    assert first_estimate is not None and int(first_estimate["calls"]) > 0
    run(project, tmp_path / "head.json", baseline=first)
    again = ESTIMATE.search(capsys.readouterr().err)
    assert again is not None and int(again["calls"]) == 0 and float(again["cost"]) == 0


def test_a_model_without_a_known_price_refuses_to_start_under_a_cap_unless_prices_are_set(fake_judge):
    server = fake_judge("openai-compatible")
    with pytest.raises(RagCiError, match=r"no price for judge model .*judge\.max_cost_usd.*judge\.prices"):
        build_judge(judge_config("openai-compatible", server, max_cost_usd=1.0), env={})
    priced = judge_config(
        "openai-compatible",
        server,
        max_cost_usd=1.0,
        prices={"input_per_mtok": 0.2, "output_per_mtok": 0.2},
    )
    assert build_judge(priced, env={}) is not None
    # Without a cap a self-hosted model's unknown price is free, as before.
    assert build_judge(judge_config("openai-compatible", server), env={}) is not None
