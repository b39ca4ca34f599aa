"""Figure 10: how long `rag-ci` takes to start, for the commands a person waits on.

`rag-ci --version`, `rag-ci --help`, `rag-ci validate` (a small project) and `rag-ci questions
approve` (one draft of that project, on a fresh copy of its questions.yml each time), each as a
fresh process (the console script's code: `rag_ci.cli.__main__`), timed from outside, `repeats`
times: the median and the fastest. The interpreter's own start (`python -c pass`) is measured
beside them: what is above it is rag-ci's. The target of issue 55 is 0.3 s for `--version`,
`--help` and the `questions` verbs on a 2-core CI machine; this is a figure, never a test (a
loaded machine is slower, and says nothing of the code).

`python -m benchmarks.cli_startup [--repeats 7] [--source DIR]` runs this figure alone (`--source`:
another checkout's rag-ci, for a before/after).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CONFIG = """\
questions: questions.yml
corpora:
  du2: {description: DU-2 e-bike manual, path: docs/du2}
target: {kind: command, command: ["python", "rag.py"]}
metrics: {hit_at_k: {k: 5}}
"""
QUESTION = """\
  - id: DU2-BATTERY-{n:02d}
    question: How long does the standard charger take, case {n}?
    reference: The standard 2 A charger fills an empty battery in 6.5 hours.
    doc_id: du2
    sources: [du2/battery.md]
    keywords: [6.5 hours]
"""
DRAFT = QUESTION + "    status: draft\n    provenance: {{writer: fake, date: '2026-05-01'}}\n"
TARGET_S = 0.3


def write_startup_project(folder: Path, questions: int = 40) -> Path:
    (folder / "docs" / "du2").mkdir(parents=True, exist_ok=True)
    (folder / "docs" / "du2" / "battery.md").write_text("# Battery\n\nThe 2 A charger takes 6.5 hours.\n")
    (folder / "rag.py").write_text("print('{}')\n")
    (folder / "rag-ci.yml").write_text(CONFIG)
    body = "".join(QUESTION.format(n=n) for n in range(questions))
    (folder / "questions.yml").write_text("version: 1\nquestions:\n" + body)
    (folder / "drafts.yml").write_text("version: 1\nquestions:\n" + body + DRAFT.format(n=questions))
    return folder


def _timed(args: list[str], cwd: Path, before: Any = None, source: Path = REPO) -> float:
    env = {**os.environ, "PYTHONPATH": str(source), "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}
    if before is not None:
        before()
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return wall


def cli_startup(repeats: int = 7, source: Path = REPO) -> dict[str, Any]:
    """The figure, for the rag-ci of the tree `source` (another checkout: a before/after)."""
    rag_ci = [sys.executable, "-c", "from rag_ci.cli.__main__ import main; main()"]
    with tempfile.TemporaryDirectory(prefix="rag-ci-startup-") as tmp:
        project = write_startup_project(Path(tmp))
        fresh = project / "questions-under-review.yml"
        commands: dict[str, tuple[list[str], Any]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], None),
            "rag-ci --version": ([*rag_ci, "--version"], None),
            "rag-ci --help": ([*rag_ci, "--help"], None),
            "rag-ci validate": ([*rag_ci, "validate"], None),
            "rag-ci questions approve": (
                [*rag_ci, "questions", "approve", "DU2-BATTERY-40", "--questions", fresh.name],
                lambda: shutil.copyfile(project / "drafts.yml", fresh),
            ),
        }
        figure: dict[str, Any] = {"repeats": repeats, "target_s": TARGET_S}
        for name, (args, before) in commands.items():
            _timed(args, project, before, source)  # once unmeasured: the files in the page cache
            times = [_timed(args, project, before, source) for _ in range(repeats)]
            figure[name] = {"median_s": statistics.median(times), "fastest_s": min(times)}
        figure["load_average"] = list(os.getloadavg())
    # the figure's ratio, like every other figure's: --version's median against the 0.3 s goal
    figure["ratio"] = figure["rag-ci --version"]["median_s"] / TARGET_S
    return figure


def startup_row(figure: dict[str, Any]) -> tuple[str, str, str, str]:
    """The figure's line of the benchmark's table."""
    shown = "; ".join(
        f"{name.removeprefix('rag-ci ')} {figure[name]['median_s']:.2f}s (fastest {figure[name]['fastest_s']:.2f}s)"
        for name in figure
        if isinstance(figure[name], dict)
    )
    return (
        "10 CLI start-up: --version / 0.3 s",
        f"{figure['ratio']:.3f}",
        "<= 1.0",
        f"{shown}; load average {figure['load_average'][0]:.1f}",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.cli_startup", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--source", type=Path, default=REPO, help="the checkout whose rag-ci to time")
    args = parser.parse_args(argv)
    figure = cli_startup(args.repeats, args.source)
    print(json.dumps(figure, indent=2))
    print("  ".join(startup_row(figure)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
