"""PR runs with a verdict cache, each in a fresh process: DeepEval's import started early vs late.

`python -m benchmarks.import_overlap [--questions 48] [--start-s 2] [--rounds 2]`

A cold run makes the baseline; then the PR adds 4 questions (judged whatever their
answers) and its target takes `--start-s` seconds to start, like a container. Each PR
run is a fresh interpreter, so it pays DeepEval's import (the main benchmark imports it
once before timing). `early`: rag-ci as it is, the import starts when the run learns a
question will surely be judged (`JudgeScorer.expect`, before the target starts); `late`:
the same with `expect` switched off, the import starts on the first verdict-cache miss.
The two modes alternate, `--rounds` times, against the same judge simulator.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NEW_QUESTIONS = 4


def child(mode: str, folder: Path, start_s: float, baseline: str) -> float:
    from benchmarks.simulators import SimulatedTarget
    from rag_ci.engine import RunContext, load_project, run_project
    from rag_ci.storage import load_results

    class SlowStart(SimulatedTarget):
        async def start(self) -> None:
            await asyncio.sleep(start_s)

    if mode == "late":
        from rag_ci.judges.scorer import DeepEvalJudgeScorer

        DeepEvalJudgeScorer.expect = lambda self, questions, baseline: None  # the A/B switch, this process only
    base = load_results(Path(baseline), what="baseline") if baseline != "-" else None
    started = time.perf_counter()
    project = load_project(folder / "rag-ci.yml")
    asyncio.run(run_project(project, output=folder / f"{mode}.json", baseline=base, run_context=RunContext(git_sha="bench"),
                            progress=False, target=SlowStart(0.1), build=False))
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.import_overlap", description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=48)
    parser.add_argument("--start-s", type=float, default=2.0, help="seconds the PR's target takes to start")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, folder, start_s, baseline = args.child
        print(json.dumps({"wall_s": child(mode, Path(folder), float(start_s), baseline)}))
        return 0

    from benchmarks.simulated_judge import JudgeProcess
    from benchmarks.simulators import write_project

    env = {**os.environ, "PYTHONPATH": str(REPO), "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}
    walls: dict[str, list[float]] = {"late": [], "early": []}
    with tempfile.TemporaryDirectory(prefix="rag-ci-bench-import-") as d, JudgeProcess(latency_s=0.2, capacity=16) as judge:
        folder = Path(d)

        def run(mode: str, baseline: str, start_s: float) -> float:
            done = subprocess.run([sys.executable, "-m", "benchmarks.import_overlap", "--child", mode, d, str(start_s), baseline],
                                  cwd=REPO, env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"{mode} run failed:\n{done.stderr[-3000:]}")
            return json.loads(done.stdout.strip().splitlines()[-1])["wall_s"]

        write_project(folder, questions=args.questions, judge_url=judge.base_url)
        run("cold", "-", 0.0)
        write_project(folder, questions=args.questions + NEW_QUESTIONS, judge_url=judge.base_url)
        for _ in range(args.rounds):
            for mode in ("late", "early"):
                walls[mode].append(run(mode, str(folder / "cold.json"), args.start_s))
                print(f"{mode:5} {walls[mode][-1]:.2f}s", file=sys.stderr, flush=True)
    late, early = (sum(walls[m]) / len(walls[m]) for m in ("late", "early"))
    print(json.dumps({"late_s": late, "early_s": early, "gain_s": late - early, "runs": walls}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
