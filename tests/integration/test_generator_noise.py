"""The generator-noise goals on a seeded RAG that garbles 15 % of its answers at random (benchmarks/flaky_rag.py).

100 questions, judge-free metrics, the real engine (`run_project`) and compare. Seeded, so
the numbers are reproducible; docs/noise.md gives the exact rates these samples come from.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from benchmarks.flaky_rag import FlakyRag, write_flaky_project
from rag_ci.core.comparison.compare import compare
from rag_ci.files.project import load_project
from rag_ci.run.engine import RunContext, RunOptions, run_project

RERUNS = range(1, 11)
BROKEN = frozenset(f"P{i:03d}" for i in range(0, 100, 10))  # 10 questions given the wrong passages


def _run(project, folder: Path, seed: int, *, baseline=None, broken=frozenset(), samples: int = 1):
    target = FlakyRag(seed, broken=broken)
    result = asyncio.run(
        run_project(
            project,
            RunOptions(
                output=folder / f"run-{seed}.json",
                baseline=baseline,
                progress=False,
                build=False,
                run_context=RunContext(),
                samples=samples,
            ),
            target=target,
        )
    )
    return result, target


@pytest.fixture
def flaky_project(tmp_path):
    def make(extra_yaml: str = ""):
        return load_project(write_flaky_project(tmp_path / "project", extra_yaml=extra_yaml))

    return make


def test_the_fake_is_noisy_enough_that_a_single_sample_gate_fails_every_rerun(flaky_project, tmp_path):
    project = flaky_project("gate: {confirm_target_runs: 0}\n")  # re-asking off
    baseline, _ = _run(project, tmp_path, 0)
    outcomes = [compare(baseline, _run(project, tmp_path, seed, baseline=baseline)[0]) for seed in RERUNS]
    assert sum(c.verdict == "fail" for c in outcomes) >= 8
    assert sum(len(c.regressions) for c in outcomes) >= 50


def test_ten_unchanged_reruns_raise_at_most_one_false_regression_at_half_a_call_per_question(
    flaky_project, tmp_path
):
    project = flaky_project()
    baseline, _ = _run(project, tmp_path, 0)
    false_regressions, green, extra_calls, flaky = 0, 0, 0, 0
    for seed in RERUNS:
        head, target = _run(project, tmp_path, seed, baseline=baseline)
        comparison = compare(baseline, head, gate=project.config.gate)
        false_regressions += len(comparison.regressions)
        green += comparison.verdict == "pass"
        extra_calls += target.calls - len(head.questions)
        flaky += len(comparison.flaky)
        assert comparison.target_calls == target.calls  # the comparison reports what was spent
    assert false_regressions <= 1 and green >= 9
    assert flaky >= 50  # the flips happened, and were reported as flaky instead
    assert extra_calls / (100 * len(RERUNS)) <= 0.5


def test_a_real_regression_is_reported_for_every_question_it_breaks(flaky_project, tmp_path):
    project = flaky_project()
    baseline, _ = _run(project, tmp_path, 0)
    broken_passing = {qid for qid in BROKEN if baseline.by_id()[qid].passed}
    assert len(broken_passing) >= 8
    for seed in (1, 2, 3):
        head, target = _run(project, tmp_path, seed, baseline=baseline, broken=BROKEN)
        regressions = {c.id for c in compare(baseline, head).regressions}
        assert broken_passing <= regressions
        assert len(regressions - BROKEN) <= 1
        for qid in broken_passing:  # asked 1 + confirm_target_runs times, every answer failed
            assert target.asked[qid] == 4 and head.by_id()[qid].pass_rate == 0.0


def test_a_sampled_baseline_records_each_questions_pass_rate_and_decides_by_majority(flaky_project, tmp_path):
    project = flaky_project()
    baseline, target = _run(project, tmp_path, 0, samples=3)
    assert target.calls == 300
    records = baseline.questions
    assert all(len(q.samples) == 3 and not q.reasked for q in records)
    for q in records:
        passes = sum(s.verdict == "pass" for s in q.samples)
        assert q.pass_rate == round(passes / 3, 4) and q.passed == (passes >= 2)
        assert q.flaky == (0 < passes < 3)
    assert any(q.flaky for q in records)
    # Majority of three: a question fails only when two of three answers are garbled (6 %, not 15 %).
    assert sum(not q.passed for q in records) < 12


def test_a_rerun_in_full_mode_still_reasks_against_the_baseline(flaky_project, tmp_path):
    project = flaky_project()
    baseline, _ = _run(project, tmp_path, 0)
    head = asyncio.run(
        run_project(
            project,
            RunOptions(
                output=tmp_path / "full.json",
                baseline=baseline,
                full=True,
                progress=False,
                build=False,
                run_context=RunContext(),
            ),
            target=FlakyRag(1),
        )
    )
    assert any(q.reasked for q in head.questions)


def test_the_comment_on_the_flaky_fake_marks_unchecked_gains_as_possible_noise_and_says_how_many_answers_failed(
    flaky_project, tmp_path
):
    from rag_ci.core.reporting.render import render_markdown

    project = flaky_project()
    baseline, _ = _run(project, tmp_path, 0)
    unchanged, _ = _run(project, tmp_path, 1, baseline=baseline)
    calm = compare(baseline, unchanged, gate=project.config.gate)
    md = render_markdown(unchanged, calm)
    assert calm.verdict == "pass" and md.splitlines()[0] == "## rag-ci: ✅ no regression"
    # a single-sample baseline: its failures were never re-asked
    assert all(c.possibly_noise for c in calm.gains)
    assert f"{len(calm.gains)} gains ({len(calm.gains)} possibly noise) · {len(calm.flaky)} flaky" in md
    assert "could be chance" in md  # context, beside a gate that passes
    broken, _ = _run(project, tmp_path, 2, baseline=baseline, broken=BROKEN)
    md = render_markdown(broken, compare(baseline, broken, gate=project.config.gate))
    rows = [line for line in md.splitlines() if line.startswith("| P") and "re-asked 3×" in line]
    # Four answers, none passing; byte-identical answers (the broken RAG repeats itself) count once.
    assert rows and all(
        re.search(
            r"0/4 answers passed, re-asked 3×|0/[23] distinct answers passed, re-asked 3×|"
            r"1 distinct answer, re-asked 3×: fails",
            row,
        )
        for row in rows
    )
