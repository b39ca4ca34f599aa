"""Figure 8: the judge-free tier at scale through a `kind: command` target process.

`rag-ci run` (a fresh process, timed from outside; peak RSS from the kernel's accounting of
the finished process, `wait4`) on N synthetic questions, the RAG simulator running as a
`command` target (benchmarks/simulated_rag_server.py: `latency_s` per request, replies
carrying their ids, many requests served at once), `target.concurrency` 16, once with one
process and once with `processes: 2`. Ideal = N · latency / concurrency: the time the
target itself needs. The wall time includes the interpreter's start, loading questions.yml,
the target's start and writing results.json.

`python -m benchmarks.command_scale [--questions 50000] [--latency 0.02] [--concurrency 16]`
runs this figure alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.simulators import command_target_yaml, write_project

REPO = Path(__file__).resolve().parents[1]


def timed_run(config: Path, output: Path, source: Path = REPO) -> dict:
    """`rag-ci run` (of the tree `source`) as its own process: wall s, peak RSS MiB (its own, and
    its target's), CPU s (both), exit code."""
    env = {**os.environ, "PYTHONPATH": str(source), "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}
    command = [
        sys.executable,
        "-m",
        "rag_ci",
        "run",
        "--config",
        str(config),
        "-o",
        str(output),
        "--no-progress",
    ]
    with tempfile.TemporaryFile() as err, open(os.devnull, "wb") as null:
        started = time.perf_counter()
        # In the project's folder: `python -m` puts the working folder first on sys.path, ahead
        # of PYTHONPATH, and from the repository that would be this tree's rag_ci whatever `source`.
        process = subprocess.Popen(command, cwd=config.parent, env=env, stdout=null, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"rag-ci run exited {code}:\n{stderr[-3000:]}")
    summary = next((line for line in stderr.splitlines() if " pass, " in line), "")
    return {
        "wall_s": wall,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "exit_code": code,
        "summary": summary,
        "errors": _errors(output),
    }


def _errors(results: Path) -> int:
    """Questions in error, counted on the file (results.json is written one question per block)."""
    data = results.read_bytes()
    return data.count(b'"verdict": "error"') + data.count(b'"verdict":"error"')


def command_scale(
    questions: int, *, latency_s: float, concurrency: int, folder: Path, before: Path | None = None
) -> dict:
    """Both process counts; with `before` (another rag-ci source tree), each also run by it, alternating."""
    rows = {}
    for processes in (1, 2):
        project = folder / f"processes-{processes}"
        config = write_project(
            project,
            questions=questions,
            concurrency=concurrency,
            metrics="judge-free",
            refusals=True,
            target=command_target_yaml(latency_s=latency_s, processes=processes, concurrency=concurrency),
        )
        rows[f"processes_{processes}"] = timed_run(config, project / "results.json")
        if before is not None:
            rows[f"before_processes_{processes}"] = timed_run(config, project / "before.json", before)
    ideal = questions * latency_s / concurrency
    load = os.getloadavg()
    return {
        "questions": questions,
        "latency_s": latency_s,
        "concurrency": concurrency,
        "ideal_s": ideal,
        "load_average": load,
        **rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.command_scale", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--questions", type=int, default=50_000)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--before-src",
        type=Path,
        help="also run this rag-ci source tree (e.g. `git archive` of an older commit)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rag-ci-command-scale-") as folder:
        figure = command_scale(
            args.questions,
            latency_s=args.latency,
            concurrency=args.concurrency,
            folder=Path(folder),
            before=args.before_src.resolve() if args.before_src else None,
        )
    print(json.dumps(figure, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
