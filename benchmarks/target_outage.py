"""`python -m benchmarks.target_outage`: the wall time of a run whose RAG stops answering.

A PrivateGPT-like outage: the app is up, its LLM API is down, so every
question hangs until `timeout_s`. A baseline is made first with the healthy simulator
(`SimulatedTarget`), so that every question that passed there is a flip the noise control
would re-ask. Then the same questions go to `HangingTarget` and the run is timed.

    python -m benchmarks.target_outage --questions 30 --timeout 6 --concurrency 4

Run it against another checkout of rag-ci (e.g. the commit before the target's circuit
breaker) with `PYTHONPATH=<that checkout>:<this checkout's benchmarks parent>`: it uses
only `run_project`, `RunOptions` and `load_project`, which both have.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.simulators import SimulatedTarget, write_project


class HangingTarget(SimulatedTarget):
    """A RAG simulator whose every call hangs (a backend that stopped answering)."""

    async def query(self, request: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


def _project(folder: Path, questions: int, timeout_s: float, concurrency: int):
    from rag_ci.files.project import load_project

    config = write_project(folder, questions=questions, concurrency=concurrency, metrics="judge-free")
    config.write_text(config.read_text().replace("timeout_s: 120", f"timeout_s: {timeout_s:g}"))
    return load_project(config)


def measure(questions: int, timeout_s: float, concurrency: int) -> dict[str, Any]:
    from rag_ci.run.engine import RunOptions, run_project

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        project = _project(folder, questions, timeout_s, concurrency)
        baseline = asyncio.run(
            run_project(
                project,
                RunOptions(output=folder / "base.json", progress=False),
                target=SimulatedTarget(latency_s=0.01),
            )
        )
        hanging = HangingTarget()
        started = time.monotonic()
        head = asyncio.run(
            run_project(
                project,
                RunOptions(output=folder / "head.json", baseline=baseline, progress=False),
                target=hanging,
            )
        )
        seconds = time.monotonic() - started
    return {
        "questions": questions,
        "timeout_s": timeout_s,
        "concurrency": concurrency,
        "wall_s": round(seconds, 1),
        "target_calls": hanging.calls,
        "broken": head.meta.broken,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument(
        "--timeout", type=float, default=6.0, help="target.timeout_s (the issue's app had 60)"
    )
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args(argv)
    result = measure(args.questions, args.timeout, args.concurrency)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
