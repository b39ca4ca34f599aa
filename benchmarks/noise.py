"""Figure 6: generator noise. What re-asking flipped questions buys, and what it costs.

On the seeded RAG that garbles 15 % of its answers at random (benchmarks/flaky_rag.py,
100 questions, judge-free metrics), for `baselines` baselines × `reruns` unchanged re-runs:
false regressions and green checks with re-asking off (the behaviour before) and on,
extra target calls per question, and the share of broken questions caught when 10 are
given the wrong passages. Judge calls: re-asks are scored like any answer, so the judge
cost is (extra target calls) × (judge calls per answer) minus repeated answers, which
reuse their verdicts; here that is counted as distinct extra answers per question.
Runs in-process in seconds: the target answers without delay.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.flaky_rag import FlakyRag, write_flaky_project

BROKEN = frozenset(f"P{i:03d}" for i in range(0, 100, 10))


def _run(project, folder: Path, seed: int, baseline=None, broken=frozenset()):
    from rag_ci.run.engine import RunContext, RunOptions, run_project

    target = FlakyRag(seed, broken=broken)
    result = asyncio.run(
        run_project(
            project,
            RunOptions(
                output=folder / "run.json",
                baseline=baseline,
                progress=False,
                build=False,
                run_context=RunContext(),
            ),
            target=target,
        )
    )
    return result, target


def _measure(reask: bool, baselines: int, reruns: int, folder: Path) -> dict[str, Any]:
    from rag_ci.core.comparison.compare import compare
    from rag_ci.files.project import load_project

    extra = "" if reask else "gate: {confirm_target_runs: 0}\n"
    project = load_project(write_flaky_project(folder / ("on" if reask else "off"), extra_yaml=extra))
    runs = false_regressions = green = extra_calls = distinct_extra_answers = flips = 0
    caught = breakable = 0
    for b in range(baselines):
        baseline, _ = _run(project, folder, 1000 * b)
        for r in range(1, reruns + 1):
            head, target = _run(project, folder, 1000 * b + r, baseline)
            comparison = compare(baseline, head)
            runs += 1
            false_regressions += len(comparison.regressions)
            green += comparison.verdict == "pass"
            extra_calls += target.calls - len(head.questions)
            distinct_extra_answers += sum(
                len({s.answer_hash for s in q.samples}) - 1 for q in head.questions if q.samples
            )
            flips += sum(1 for q in head.questions if q.reasked) + (
                len(comparison.regressions) if not reask else 0
            )
        head, _ = _run(project, folder, 1000 * b + 999, baseline, BROKEN)
        regressions = {c.id for c in compare(baseline, head).regressions}
        should = {q for q in BROKEN if baseline.by_id()[q].passed}
        breakable += len(should)
        caught += len(should & regressions)
    questions = runs * 100
    return {
        "runs": runs,
        "false_regressions": false_regressions,
        "false_regressions_per_10_runs": 10 * false_regressions / runs,
        "green_share": green / runs,
        "flips": flips,
        "extra_target_calls_per_question": extra_calls / questions,
        "extra_distinct_answers_per_question": distinct_extra_answers / questions,
        "broken_caught": caught,
        "broken_passing_on_baseline": breakable,
    }


def noise_figure(baselines: int = 10, reruns: int = 10) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="rag-ci-bench-noise-") as folder:
        before = _measure(False, baselines, reruns, Path(folder))
        after = _measure(True, baselines, reruns, Path(folder))
    return {
        "ratio": after["extra_target_calls_per_question"],
        "before": before,
        "after": after,
        "garble_rate": 0.15,
        "questions": 100,
        "target": "<= 1 false regression per 10 runs, >= 9/10 green, all broken caught, <= 0.5 extra calls/question",
    }


if __name__ == "__main__":
    import json

    print(json.dumps(noise_figure(), indent=2))
