"""A judge behind a rate limit: every metric still gets its verdict, at the limit's pace.

The simulated judge (benchmarks/simulated_judge.py, its own process) accepts N
requests per sliding second and answers 429 with Retry-After past that. rag-ci's
judge client pauses all its calls until the time the server gave (no stampede of
retries) and does not count those waits as failures, so a rate limit slows the run
down but costs no verdict. No timing is asserted.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

pytestmark = pytest.mark.slow


def test_a_rate_limited_judge_costs_time_not_verdicts(tmp_path):
    pytest.importorskip("deepeval")
    from benchmarks.simulated_judge import JudgeProcess
    from benchmarks.simulators import SimulatedTarget, write_project
    from rag_ci.files.project import load_project
    from rag_ci.run.engine import RunContext, RunOptions, run_project

    with JudgeProcess(latency_s=0.02, rate_limit=15) as judge:
        config = write_project(
            tmp_path, questions=6, concurrency=6, judge_url=judge.base_url, judge_concurrency=8
        )
        text = config.read_text().replace(
            "  timeout_s: 120\n  prices", "  timeout_s: 120\n  max_retries: 1\n  prices"
        )
        config.write_text(text)
        project = load_project(config)
        assert project.config.judge.max_retries == 1
        result = asyncio.run(
            run_project(
                project,
                RunOptions(
                    output=tmp_path / "results.json", run_context=RunContext(), progress=False, build=False
                ),
                target=SimulatedTarget(0.0),
            )
        )
        stats = judge.stats()

    errors = [
        f"{q.id}/{name}: {m.error}" for q in result.questions for name, m in q.metrics.items() if m.error
    ]
    assert errors == []
    assert stats["rate_limited"] > 0  # the limit was hit, and waited out
    assert stats["answered"] == 6 * 9  # every judge call of the six metrics went through once
