"""The judge-free tier at scale: loading, running, `compare` and `report` of N questions, each a fresh process.

`python -m benchmarks.scale [--sizes 5000,20000,50000] [--latency 0.02] [--concurrency 16]`

For each size N: a synthetic project of N questions (benchmarks/simulators.py), run twice
judge-free (`load_project` + `run_project` with the in-memory target simulator, as figure 4
of `python -m benchmarks`; the second run has the first as baseline, like a PR), then
`rag-ci compare BASE HEAD` and `rag-ci report HEAD --baseline BASE --format html` as
commands. Every step is its own interpreter, timed from outside, its peak RSS read from
the kernel's accounting of the finished process (`wait4`). Prints one table; the goals are
the issue's: peak < 1 GiB, questions.yml loaded in < 10 s and `compare` < 15 s at 50,000.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_child(command: list[str], *, env: dict[str, str], cwd: Path) -> tuple[float, float, int, str]:
    """(wall s, peak RSS MiB of the process, exit code, its stdout)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command[:4])} ... exited {process.returncode}:\n{stderr[-3000:]}")
    return wall, usage.ru_maxrss / 1024, process.returncode, stdout


def child(size: int, folder: Path, concurrency: int, latency_s: float, baseline: str) -> dict:
    """One judge-free run in this interpreter (see --child)."""
    import asyncio

    from benchmarks.simulators import SimulatedTarget, write_project
    from rag_ci.files.project import load_project
    from rag_ci.files.results_file import load_results
    from rag_ci.run.engine import RunContext, RunOptions, run_project

    config = folder / "rag-ci.yml"
    if not config.exists():
        write_project(folder, questions=size, concurrency=concurrency, metrics="judge-free", refusals=True)
    base = load_results(Path(baseline), what="baseline") if baseline != "-" else None
    started = time.perf_counter()
    project = load_project(config)
    loaded = time.perf_counter()
    output = folder / ("head.json" if base is not None else "base.json")
    result = asyncio.run(
        run_project(
            project,
            RunOptions(
                output=output,
                baseline=base,
                run_context=RunContext(git_sha="bench"),
                progress=False,
                build=False,
            ),
            target=SimulatedTarget(latency_s),
        )
    )
    finished = time.perf_counter()
    return {
        "load_s": loaded - started,
        "run_s": finished - loaded,
        "questions": len(result.questions),
        "results_mib": output.stat().st_size / 2**20,
    }


def measure(size: int, folder: Path, concurrency: int, latency_s: float, env: dict[str, str]) -> dict:
    row: dict = {"questions": size}
    for name, baseline in (("base", "-"), ("head", str(folder / "base.json"))):
        # The script by path: `benchmarks` and `rag_ci` then come from PYTHONPATH (the tree measured).
        wall, rss, _, out = run_child(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--child",
                str(size),
                str(folder),
                str(concurrency),
                str(latency_s),
                baseline,
            ],
            env=env,
            cwd=REPO,
        )
        data = json.loads(out.strip().splitlines()[-1])
        row[name] = {**data, "wall_s": wall, "peak_rss_mib": rss}
    cli = [sys.executable, "-m", "rag_ci"]
    for name, args in (
        (
            "compare",
            ["compare", str(folder / "base.json"), str(folder / "head.json"), "-o", str(folder / "cmp.md")],
        ),
        (
            "report_html",
            [
                "report",
                str(folder / "head.json"),
                "--baseline",
                str(folder / "base.json"),
                "--format",
                "html",
                "-o",
                str(folder / "report.html"),
            ],
        ),
    ):
        wall, rss, code, _ = run_child([*cli, *args], env=env, cwd=folder)
        row[name] = {"wall_s": wall, "peak_rss_mib": rss, "exit_code": code}
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,20000,50000")
    parser.add_argument(
        "--latency", type=float, default=0.02, help="the target simulator's seconds per question"
    )
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--rag-ci-src", type=Path, default=REPO, help="the rag-ci source tree to run (for a before/after)"
    )
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks" / "scale-last-run.json")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        size, folder, concurrency, latency, baseline = args.child
        print(json.dumps(child(int(size), Path(folder), int(concurrency), float(latency), baseline)))
        return 0
    env = {**os.environ, "PYTHONPATH": str(args.rag_ci_src.resolve()), "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        folder = Path(tempfile.mkdtemp(prefix=f"rag-ci-scale-{size}-"))
        try:
            rows.append(measure(size, folder, args.concurrency, args.latency, env))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        r = rows[-1]
        print(
            f"{size}: run {r['base']['wall_s']:.1f} s (load {r['base']['load_s']:.1f} s), {r['base']['peak_rss_mib']:.0f} MiB; "
            f"PR run {r['head']['wall_s']:.1f} s, {r['head']['peak_rss_mib']:.0f} MiB; "
            f"compare {r['compare']['wall_s']:.1f} s {r['compare']['peak_rss_mib']:.0f} MiB; "
            f"report {r['report_html']['wall_s']:.1f} s {r['report_html']['peak_rss_mib']:.0f} MiB",
            file=sys.stderr,
            flush=True,
        )
    load = os.getloadavg()
    print(
        f"judge-free tier, target simulator {args.latency * 1000:.0f} ms, concurrency {args.concurrency}; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(
        "| questions | questions.yml load s | run: wall s / peak MiB | PR run (the run as baseline): wall s / peak MiB | "
        "results.json MiB | `compare` s / MiB | `report --format html` s / MiB |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        b, h, c, p = r["base"], r["head"], r["compare"], r["report_html"]
        print(
            f"| {r['questions']:,} | {b['load_s']:.1f} | {b['wall_s']:.1f} / {b['peak_rss_mib']:.0f} | "
            f"{h['wall_s']:.1f} / {h['peak_rss_mib']:.0f} | {h['results_mib']:.0f} | {c['wall_s']:.1f} / {c['peak_rss_mib']:.0f} | "
            f"{p['wall_s']:.1f} / {p['peak_rss_mib']:.0f} |"
        )
    args.json.write_text(json.dumps({"load_average": load, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
