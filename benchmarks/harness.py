"""The benchmark: seven figures, each measured in one run.

1. cold run ÷ ideal, ideal = N·(t_target + judge_calls_per_question·t_judge) / concurrency;
2. rag-ci cold run ÷ `deepeval.evaluate` (AsyncConfig max_concurrent = the same
   concurrency) on the same test cases, metrics and judge, with a one-client
   `DeepEvalBaseLLM` and with DeepEval's stock `OpenAIModel` (benchmarks/judge_cost.py);
   both sides must complete every test case and metric;
3. warm re-run of the unchanged target: judge calls (must be 0) and wall time ÷ cold;
4. judge-free tier on N4 questions (a fresh process): peak RSS ÷ 1 GiB, wall ÷ ideal;
5. judge throughput under a rate limit ÷ the limit;
6. generator noise: extra target calls per question spent re-asking flipped questions of a
   RAG that garbles 15 % of its answers, with false regressions before/after (benchmarks/noise.py);
7. judge cost: judge calls per question cold, with every answer reworded, and on a run where
   10 questions read counterfactual passages; cost per 100 questions at the price table's
   rates (benchmarks/judge_cost.py);
8. judge noise: false alarms per 10 reworded PRs under a judge flipping 0/5/10 % of its
   verdicts, real regressions caught, judge calls per question (benchmarks/judge_noise.py).
9. judge-free tier on N9 questions through a `kind: command` target process (`rag-ci run`,
   a fresh process, one target process and `processes: 2`): wall ÷ 90 s and peak RSS
   (benchmarks/command_scale.py).
10. CLI start-up of `--version`, `--help`, `validate` and `questions approve`, fresh processes:
   `--version` ÷ 0.3 s (benchmarks/cli_startup.py).

The RAG and the judge are simulators (benchmarks/simulators.py,
benchmarks/simulated_judge.py); everything between them is the real rag-ci path:
`load_project` → `run_project` → `build_judge` (provider `openai-compatible`,
`base_url` at the simulator) → DeepEval metrics → results.json on disk.

The judge simulator serves `concurrency` requests at a time (extra requests queue),
like a self-hosted judge with that many slots: it is "the same judge" for rag-ci
and for DeepEval, whatever each client sends at once. DeepEval's one-off import
(~5 s, paid by rag-ci and plain DeepEval alike) is done before any timing and
reported on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "1"
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.setdefault("DEEPEVAL_NO_INSPECT_PROMPT", "1")
os.environ.setdefault("ERROR_REPORTING", "NO")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.judge_cost import (
    COUNTERFACTUAL,
    check_ragci_complete,
    cost_per_100,
    deepeval_variants,
    judge_cost_runs,
)
from benchmarks.simulated_judge import JudgeProcess
from benchmarks.simulators import SimulatedTarget, write_project

GIB = 1024**3
TARGETS = {
    "fig1_cold_vs_ideal": 1.15,
    "fig2_vs_deepeval": 1.0,
    "fig3_warm_judge_calls": 0,
    "fig4_rss_gib": 1.0,
    "fig9_wall_s": 90.0,
}


@dataclass
class Sizes:
    questions: int = 200  # N, figures 1-3
    concurrency: int = 16
    target_latency_s: float = 0.1
    judge_latency_s: float = 0.2
    judge_free_questions: int = 5000  # figure 4
    judge_free_latency_s: float = 0.02
    rate_limit: float = 40.0  # requests/s, figure 5
    rate_limited_questions: int = 60
    noise_baselines: int = 10  # figure 6: baselines × noise_reruns unchanged re-runs of the flaky RAG
    noise_reruns: int = 10
    command_questions: int = 50_000  # figure 8

    @classmethod
    def preset(cls, name: str) -> Sizes:
        if name == "quick":
            return cls(
                questions=48,
                judge_free_questions=1000,
                rate_limited_questions=16,
                noise_baselines=3,
                command_questions=5000,
            )
        if name == "tiny":  # the CI smoke test: proves the harness runs, measures nothing
            return cls(
                questions=6,
                concurrency=4,
                target_latency_s=0.01,
                judge_latency_s=0.01,
                judge_free_questions=60,
                judge_free_latency_s=0.0,
                rate_limit=50.0,
                rate_limited_questions=4,
                noise_baselines=1,
                noise_reruns=2,
                command_questions=60,
            )
        return cls()


@dataclass
class Report:
    sizes: dict[str, Any]
    environment: dict[str, Any]
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)


def _log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# -- rag-ci runs ---------------------------------------------------------------------


def _run_ragci(
    config: Path, output: Path, *, target: SimulatedTarget, baseline=None, timings: dict | None = None
):
    """load_project + run_project, as `rag-ci run` does; the time returned includes both."""
    from rag_ci.files.project import load_project
    from rag_ci.run.engine import RunContext, RunOptions, run_project

    started = time.perf_counter()
    project = load_project(config)
    loaded = time.perf_counter()
    result = asyncio.run(
        run_project(
            project,
            RunOptions(
                output=output,
                baseline=baseline,
                run_context=RunContext(git_sha="bench"),
                progress=False,
                build=False,
            ),
            target=target,
        )
    )
    finished = time.perf_counter()
    if timings is not None:
        timings.update(load_s=loaded - started, run_s=finished - loaded)
    return result, finished - started


def _judge_errors(result) -> list[str]:
    return [f"{q.id}/{name}: {m.error}" for q in result.questions for name, m in q.metrics.items() if m.error]


def _import_deepeval() -> float:
    started = time.perf_counter()
    import deepeval.metrics  # noqa: F401

    import rag_ci.judges.llm  # noqa: F401

    return time.perf_counter() - started


# -- figure 2: plain DeepEval ------------------------------------------------------------


def _deepeval_cases(config: Path):
    """The same questions and answers rag-ci judged, as DeepEval test cases."""
    from deepeval.test_case import LLMTestCase

    from rag_ci.files.project import load_project
    from rag_ci.judges.metrics import expected_output

    project = load_project(config)
    cases = []
    for question in project.questions.questions:
        reply = SimulatedTarget.reply(
            {"id": question.id, "question": question.question, "corpora": list(question.doc_id)}
        )
        cases.append(
            LLMTestCase(
                input=question.question,
                actual_output=reply["answer"],
                expected_output=expected_output(question),
                retrieval_context=[c["text"] for c in reply["contexts"]],
            )
        )
    return cases


def _deepeval_metrics(config: Path, model):
    """DeepEval's metrics as a DeepEval user writes them (DeepEval's defaults, include_reason=True),
    with rag-ci's thresholds and GEval steps, on `model`."""
    from rag_ci.files.project import load_project
    from rag_ci.judges.metrics import metric_specs

    specs = metric_specs(load_project(config).config.metric_configs())
    return [spec.build(model) for spec in specs.values()]


def _run_deepeval(cases, metrics, concurrency: int) -> tuple[Any, float]:
    from deepeval import evaluate
    from deepeval.evaluate.configs import (
        AsyncConfig,
        CacheConfig,
        DisplayConfig,
        ErrorConfig,
    )

    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="rag-ci-bench-deepeval-") as folder:
        os.chdir(folder)  # DeepEval writes its .deepeval/ test-run files in the working directory
        try:
            started = time.perf_counter()
            with contextlib.redirect_stdout(
                io.StringIO()
            ):  # DeepEval prints its summary even with print_results=False
                result = evaluate(
                    test_cases=cases,
                    metrics=metrics,
                    async_config=AsyncConfig(run_async=True, max_concurrent=concurrency),
                    display_config=DisplayConfig(
                        show_indicator=False, print_results=False, inspect_after_run=False
                    ),
                    cache_config=CacheConfig(write_cache=False, use_cache=False),
                    error_config=ErrorConfig(ignore_errors=True),
                )
            return result, time.perf_counter() - started
        finally:
            os.chdir(cwd)


# -- figure 4: judge-free tier in a fresh process --------------------------------------


def peak_rss_bytes() -> int:
    """Peak resident set size of this process: VmHWM (reset by exec, unlike ru_maxrss, which a
    child started by fork inherits from its parent), or ru_maxrss where /proc is missing."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def judge_free_child(questions: int, concurrency: int, latency_s: float, folder: str) -> dict[str, Any]:
    """Runs in its own interpreter (see `main --judge-free-child`): peak RSS is this run's alone."""
    rss_start = peak_rss_bytes()
    config = write_project(
        Path(folder), questions=questions, concurrency=concurrency, metrics="judge-free", refusals=True
    )
    target = SimulatedTarget(latency_s)
    timings: dict[str, float] = {}
    result, wall = _run_ragci(config, Path(folder) / "results.json", target=target, timings=timings)
    rss_peak = peak_rss_bytes()
    return {
        "questions": len(result.questions),
        "wall_s": wall,
        "load_s": timings["load_s"],
        "run_s": timings["run_s"],
        "rss_peak_bytes": rss_peak,
        "rss_after_imports_bytes": rss_start,
        "results_json_bytes": (Path(folder) / "results.json").stat().st_size,
        "peak_target_concurrency": target.peak_in_flight,
        "verdicts": result.aggregates.overall.model_dump(),
    }


def _judge_free(sizes: Sizes, folder: Path) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "benchmarks",
        "--judge-free-child",
        str(sizes.judge_free_questions),
        str(sizes.concurrency),
        str(sizes.judge_free_latency_s),
        str(folder),
    ]
    started = time.perf_counter()
    done = subprocess.run(
        command,
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    if done.returncode != 0:
        raise RuntimeError(f"judge-free run failed:\n{done.stderr[-3000:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    data["process_wall_s"] = time.perf_counter() - started
    return data


# -- the six figures ---------------------------------------------------------------------


def _command_figure(report: Report, sizes: Sizes, workdir: Path) -> None:
    from benchmarks.command_scale import command_scale

    n, latency, c = sizes.command_questions, sizes.judge_free_latency_s, sizes.concurrency
    _log(
        f"figure 9: {n} questions judge-free through a command target process, target {latency * 1000:.0f} ms, concurrency {c}"
    )
    figure = command_scale(n, latency_s=latency, concurrency=c, folder=workdir / "command-scale")
    one, two = figure["processes_1"], figure["processes_2"]
    report.figures["9_command_scale"] = {
        **figure,
        "ratio": one["wall_s"] / TARGETS["fig9_wall_s"],
        "target": f"<= {TARGETS['fig9_wall_s']:g} s wall, < 1 GiB",
    }
    _log(
        f"  one process {one['wall_s']:.1f}s {one['peak_rss_mib']:.0f} MiB; processes: 2 {two['wall_s']:.1f}s "
        f"{two['peak_rss_mib']:.0f} MiB (ideal {figure['ideal_s']:.1f}s)"
    )


def run_benchmark(
    sizes: Sizes, *, workdir: Path, skip_deepeval: bool = False, only_scale: bool = False
) -> Report:
    report = Report(
        sizes=asdict(sizes),
        environment={
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
    )
    n, c = sizes.questions, sizes.concurrency
    if only_scale:
        _command_figure(report, sizes, workdir)
        return report
    from benchmarks.cli_startup import cli_startup

    _log("figure 10: CLI start-up of --version, --help, validate and questions approve (fresh processes)")
    report.figures["10_cli_startup"] = cli_startup()
    report.raw["deepeval_import_s"] = round(_import_deepeval(), 3)
    import deepeval

    report.environment["deepeval"] = deepeval.__version__
    _log(f"DeepEval imported in {report.raw['deepeval_import_s']:.1f}s (excluded from every timing)")

    # Figures 1-3: one judge simulator with `concurrency` slots.
    with JudgeProcess(latency_s=sizes.judge_latency_s, capacity=c) as judge:
        config = write_project(
            workdir / "judged", questions=n, concurrency=c, judge_url=judge.base_url, judge_concurrency=c
        )
        _log(
            f"figure 1: cold run, {n} questions, 6 judge metrics, judge {sizes.judge_latency_s * 1000:.0f} ms, concurrency {c}"
        )
        target = SimulatedTarget(sizes.target_latency_s)
        cold, cold_s = _run_ragci(config, workdir / "judged" / "cold.json", target=target)
        check_ragci_complete(cold, "cold")
        stats = judge.stats()
        cold_cost = cost_per_100(stats, n)
        calls = stats["answered"]
        per_question = calls / n
        ideal = n * (sizes.target_latency_s + per_question * sizes.judge_latency_s) / c
        report.raw["cold"] = {
            "wall_s": cold_s,
            "judge_calls": calls,
            "judge_requests": stats["requests"],
            "judge_errors": stats["errors"],
            "metric_errors": _judge_errors(cold)[:5],
            "judge_max_in_flight": stats["max_in_flight"],
            "target_calls": target.calls,
            "verdicts": cold.aggregates.overall.model_dump(),
            "kinds": stats["kinds"],
        }
        report.figures["1_cold_vs_ideal"] = {
            "ratio": cold_s / ideal,
            "target": f"<= {TARGETS['fig1_cold_vs_ideal']}",
            "cold_s": cold_s,
            "ideal_s": ideal,
            "questions": n,
            "judge_calls_per_question": per_question,
            "t_target_s": sizes.target_latency_s,
            "t_judge_s": sizes.judge_latency_s,
            "concurrency": c,
        }
        _log(f"  cold {cold_s:.2f}s, ideal {ideal:.2f}s, {per_question:.2f} judge calls/question")

        _log("figure 3: warm re-run of the unchanged target (baseline = the cold run)")
        judge.reset()
        warm, warm_s = _run_ragci(
            config,
            workdir / "judged" / "warm.json",
            target=SimulatedTarget(sizes.target_latency_s),
            baseline=cold,
        )
        warm_calls = judge.stats()["requests"]
        cached = sum(1 for q in warm.questions for m in q.metrics.values() if m.kind == "judge" and m.cached)
        judged = sum(1 for q in warm.questions for m in q.metrics.values() if m.kind == "judge")
        same = [q.verdict for q in warm.questions] == [q.verdict for q in cold.questions]
        report.figures["3_warm_rerun"] = {
            "judge_calls": warm_calls,
            "target": "judge_calls == 0",
            "ratio": warm_s / cold_s,
            "warm_s": warm_s,
            "cold_s": cold_s,
            "cached_verdicts": cached,
            "judge_verdicts": judged,
            "same_verdicts": same,
        }
        _log(f"  warm {warm_s:.2f}s, {warm_calls} judge calls, {cached}/{judged} verdicts from the cache")

        _log(
            "figure 7: judge calls per question: reworded answers, counterfactual passages (baseline = the cold run)"
        )
        runs = judge_cost_runs(
            _run_ragci, judge, config, cold, workdir / "judged", target_latency_s=sizes.target_latency_s
        )
        report.figures["7_judge_cost"] = {
            "cold_calls_per_question": per_question,
            "cold_cost_per_100_questions_usd": cold_cost,
            "reworded_calls_per_question": runs["reworded"]["judge_calls_per_question"],
            "reworded_cost_per_100_questions_usd": runs["reworded"]["cost_per_100_questions_usd"],
            "reworded_equivalent_calls_per_question": runs["reworded_equivalent"]["judge_calls_per_question"],
            "counterfactual_questions": min(COUNTERFACTUAL, n),
            "counterfactual_calls": runs["counterfactual"]["judge_calls"],
            "counterfactual_confirmed_metrics": runs["counterfactual"]["confirmed_metrics"],
            "warm_calls": warm_calls,
            "questions": n,
            "target": "cold <= 9, reworded <= 6 per question; 10 counterfactuals <= 150 calls; warm 0",
        }
        report.raw["judge_cost_runs"] = runs
        _log(
            f"  cold {per_question:.2f}, reworded {runs['reworded']['judge_calls_per_question']:.2f} calls/question; "
            f"{min(COUNTERFACTUAL, n)} counterfactuals: {runs['counterfactual']['judge_calls']} calls"
        )

    if not skip_deepeval:
        _log(
            f"figure 2: deepeval.evaluate on the same {n} test cases, AsyncConfig(max_concurrent={c}), two model classes"
        )
        variants = deepeval_variants(
            lambda: JudgeProcess(latency_s=sizes.judge_latency_s, capacity=c),
            config,
            c,
            build_cases=_deepeval_cases,
            build_metrics=_deepeval_metrics,
            run_deepeval=_run_deepeval,
            log=_log,
        )
        report.raw["deepeval"] = variants
        one, stock = variants["one_client"], variants["stock"]
        report.figures["2_vs_deepeval"] = {
            "ratio": cold_s / one["wall_s"],
            "ratio_vs_stock": cold_s / stock["wall_s"],
            "target": f"<= {TARGETS['fig2_vs_deepeval']}",
            "ragci_cold_s": cold_s,
            "deepeval_one_client_s": one["wall_s"],
            "deepeval_stock_s": stock["wall_s"],
            "ragci_judge_calls": calls,
            "deepeval_judge_calls": one["judge_calls"],
            "deepeval_stock_judge_calls": stock["judge_calls"],
            "ragci_passed": cold.aggregates.overall.passed,
            "deepeval_passed": one["passed_cases"],
            "note": "ratio: against a one-client DeepEvalBaseLLM; ratio_vs_stock: against DeepEval's OpenAIModel "
            "(a new SDK client per call). rag-ci's time includes querying the target; DeepEval's is "
            "evaluate() on ready test cases",
        }

    _log(
        f"figure 4: judge-free tier, {sizes.judge_free_questions} questions, target {sizes.judge_free_latency_s * 1000:.0f} ms, fresh process"
    )
    free = _judge_free(sizes, workdir / "judge-free")
    ideal_free = sizes.judge_free_questions * sizes.judge_free_latency_s / c
    report.raw["judge_free"] = free
    report.figures["4_judge_free_scale"] = {
        "ratio": free["rss_peak_bytes"] / GIB,
        "target": "< 1 GiB peak RSS",
        "rss_peak_mib": free["rss_peak_bytes"] / 2**20,
        "rss_after_imports_mib": free["rss_after_imports_bytes"] / 2**20,
        "wall_s": free["wall_s"],
        "ideal_s": ideal_free,
        "load_s": free["load_s"],
        "run_s": free["run_s"],
        "wall_vs_ideal": free["wall_s"] / ideal_free if ideal_free else None,
        "run_vs_ideal": free["run_s"] / ideal_free if ideal_free else None,
        "overhead_ms_per_question": 1000 * max(0.0, free["run_s"] - ideal_free) / max(1, free["questions"]),
        "questions": free["questions"],
        "results_json_mib": free["results_json_bytes"] / 2**20,
    }
    _log(
        f"  {free['wall_s']:.2f}s = load {free['load_s']:.2f}s + run {free['run_s']:.2f}s (ideal {ideal_free:.2f}s), "
        f"peak RSS {free['rss_peak_bytes'] / 2**20:.0f} MiB"
    )

    m = sizes.rate_limited_questions
    _log(f"figure 5: {m} questions against a judge limited to {sizes.rate_limit:g} requests/s")
    with JudgeProcess(latency_s=sizes.judge_latency_s, rate_limit=sizes.rate_limit) as judge:
        config5 = write_project(
            workdir / "limited", questions=m, concurrency=c, judge_url=judge.base_url, judge_concurrency=c
        )
        limited, limited_s = _run_ragci(
            config5, workdir / "limited" / "results.json", target=SimulatedTarget(sizes.target_latency_s)
        )
        stats = judge.stats()
        trace = judge.trace()
    throughput = stats["answered"] / limited_s
    span = (max(t[2] for t in trace) - min(t[0] for t in trace)) if trace else 0.0
    unlimited = c / sizes.judge_latency_s
    report.raw["rate_limited"] = {
        "wall_s": limited_s,
        "answered": stats["answered"],
        "rate_limited_429": stats["rate_limited"],
        "metric_errors": _judge_errors(limited)[:5],
        "metric_error_count": len(_judge_errors(limited)),
    }
    report.figures["5_rate_limited_throughput"] = {
        "ratio": throughput / sizes.rate_limit,
        "target": "close to 1.0",
        "throughput_rps": throughput,
        "limit_rps": sizes.rate_limit,
        "unlimited_capacity_rps": unlimited,
        "answered": stats["answered"],
        "rejected_429": stats["rate_limited"],
        "wall_s": limited_s,
        "metric_errors": len(_judge_errors(limited)),
        "judge_busy_span_s": span,
        "throughput_over_span_rps": stats["answered"] / span if span else None,
        "questions": m,
        "note": "throughput = answered judge calls / whole run wall time (ramp-up and drain included)",
    }
    _log(
        f"  {throughput:.1f} judge calls/s against a limit of {sizes.rate_limit:g}/s ({stats['rate_limited']} answered 429)"
    )

    _command_figure(report, sizes, workdir)

    from benchmarks.noise import noise_figure

    _log(
        f"figure 6: generator noise, {sizes.noise_baselines}×{sizes.noise_reruns} unchanged re-runs of a RAG garbling 15 % of answers"
    )
    report.figures["6_generator_noise"] = noise_figure(sizes.noise_baselines, sizes.noise_reruns)

    from benchmarks.judge_noise import judge_noise_figure

    judge_baselines = min(sizes.noise_baselines, 2)
    _log(
        f"figure 8: judge noise, {judge_baselines}×5 reworded PRs of 60 questions under a judge flipping 0/5/10 % of verdicts"
    )
    report.figures["8_judge_noise"] = judge_noise_figure(judge_baselines, 5)
    return report


def format_table(report: Report) -> str:
    f = report.figures
    rows = [("figure", "ratio", "target", "measured")]
    if "1_cold_vs_ideal" in f:
        x = f["1_cold_vs_ideal"]
        rows.append(
            (
                "1 cold run / ideal",
                f"{x['ratio']:.3f}",
                x["target"],
                f"{x['cold_s']:.2f}s vs {x['ideal_s']:.2f}s = {x['questions']}·({x['t_target_s']:g}+{x['judge_calls_per_question']:.2f}·{x['t_judge_s']:g})/{x['concurrency']}",
            )
        )
    if "2_vs_deepeval" in f:
        x = f["2_vs_deepeval"]
        rows.append(
            (
                "2 rag-ci / deepeval.evaluate (one client)",
                f"{x['ratio']:.3f}",
                x["target"],
                f"{x['ragci_cold_s']:.2f}s vs {x['deepeval_one_client_s']:.2f}s; judge calls {x['ragci_judge_calls']} vs "
                f"{x['deepeval_judge_calls']}; stock OpenAIModel: {x['deepeval_stock_s']:.2f}s "
                f"(ratio {x['ratio_vs_stock']:.3f}, {x['deepeval_stock_judge_calls']} calls)",
            )
        )
    if "3_warm_rerun" in f:
        x = f["3_warm_rerun"]
        rows.append(
            (
                "3 warm re-run / cold",
                f"{x['ratio']:.3f}",
                "0 judge calls",
                f"{x['judge_calls']} judge calls; {x['warm_s']:.2f}s vs {x['cold_s']:.2f}s; {x['cached_verdicts']}/{x['judge_verdicts']} cached",
            )
        )
    if "4_judge_free_scale" in f:
        x = f["4_judge_free_scale"]
        rows.append(
            (
                f"4 {x['questions']} q judge-free: RSS / 1 GiB",
                f"{x['ratio']:.3f}",
                "< 1.0",
                f"peak RSS {x['rss_peak_mib']:.0f} MiB; {x['wall_s']:.2f}s = load {x['load_s']:.2f}s + run {x['run_s']:.2f}s"
                f" vs ideal {x['ideal_s']:.2f}s"
                + (f" (run {x['run_vs_ideal']:.2f}x)" if x["run_vs_ideal"] else ""),
            )
        )
    if "5_rate_limited_throughput" in f:
        x = f["5_rate_limited_throughput"]
        rows.append(
            (
                "5 throughput / rate limit",
                f"{x['ratio']:.3f}",
                "~1.0",
                f"{x['throughput_rps']:.1f} vs {x['limit_rps']:g} req/s; {x['rejected_429']} × 429; {x['metric_errors']} metric errors",
            )
        )
    if "6_generator_noise" in f:
        x, off = f["6_generator_noise"]["after"], f["6_generator_noise"]["before"]
        rows.append(
            (
                "6 re-ask: extra target calls / question",
                f"{x['extra_target_calls_per_question']:.3f}",
                "<= 0.5",
                f"false regressions per 10 runs {off['false_regressions_per_10_runs']:.1f} -> "
                f"{x['false_regressions_per_10_runs']:.2f}; green {off['green_share']:.0%} -> {x['green_share']:.0%}; "
                f"broken caught {x['broken_caught']}/{x['broken_passing_on_baseline']}; "
                f"extra judged answers {x['extra_distinct_answers_per_question']:.3f}/question ({x['runs']} runs)",
            )
        )
    if "7_judge_cost" in f:
        x = f["7_judge_cost"]
        costs = ", ".join(f"{m} ${v:.3f}" for m, v in x["cold_cost_per_100_questions_usd"].items())
        rows.append(
            (
                "7 judge calls / question cold, reworded",
                f"{x['cold_calls_per_question']:.2f}, {x['reworded_calls_per_question']:.2f}",
                "<= 9, <= 6",
                f"reworded with reuse_equivalent_answers {x['reworded_equivalent_calls_per_question']:.2f} (<= 1.5); "
                f"{x['counterfactual_questions']} counterfactuals: {x['counterfactual_calls']} calls (<= 150); "
                f"cold cost per 100 questions: {costs}",
            )
        )
    if "8_judge_noise" in f:
        x = f["8_judge_noise"]
        rows.append(
            (
                "8 judge noise: false alarms / 10 runs at 5 %",
                f"{x['after']['5%']['false_alarms_per_10_runs']:.2f}",
                "<= 2",
                " | ".join(
                    f"{label}: "
                    + "; ".join(
                        f"p {k}: red {v['red_runs']}/{v['runs']}, false alarms/10 runs {v['false_alarms_per_10_runs']:.1f}, "
                        f"caught {v['real_regressions_caught']}/{v['real_regressions']}, judge calls/question cold "
                        f"{v['cold_judge_calls_per_question']:.2f}, reworded {v['reworded_judge_calls_per_question']:.2f}"
                        for k, v in x[key].items()
                        if isinstance(v, dict)
                    )
                    for label, key in (
                        ("before", "before"),
                        ("after", "after"),
                        ("after, 2 verdicts", "after_second_verdict"),
                    )
                ),
            )
        )
    if "9_command_scale" in f:
        x = f["9_command_scale"]
        one, two = x["processes_1"], x["processes_2"]
        rows.append(
            (
                f"9 {x['questions']} q judge-free, command target: wall / 90 s",
                f"{x['ratio']:.3f}",
                "<= 1.0, < 1 GiB",
                f"one process {one['wall_s']:.1f}s, {one['peak_rss_mib']:.0f} MiB, {one['errors']} errors; processes: 2 "
                f"{two['wall_s']:.1f}s, {two['peak_rss_mib']:.0f} MiB, {two['errors']} errors; ideal {x['ideal_s']:.1f}s; "
                f"load average {x['load_average'][0]:.1f}",
            )
        )
    if "10_cli_startup" in f:
        from benchmarks.cli_startup import startup_row

        rows.append(startup_row(f["10_cli_startup"]))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 8)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description="rag-ci's overhead and scale, as ratios measured in one run."
    )
    parser.add_argument("--quick", action="store_true", help="reduced sizes (~1 minute)")
    parser.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--questions", type=int, help="N for figures 1-3 (default 200)")
    parser.add_argument("--judge-free-questions", type=int, help="questions for figure 4 (default 5000)")
    parser.add_argument("--target-latency", type=float, help="simulated RAG latency in seconds (default 0.1)")
    parser.add_argument(
        "--judge-latency", type=float, help="simulated judge latency in seconds (default 0.2)"
    )
    parser.add_argument("--concurrency", type=int, help="target and judge concurrency (default 16)")
    parser.add_argument("--rate-limit", type=float, help="judge requests/s for figure 5 (default 40)")
    parser.add_argument("--skip-deepeval", action="store_true", help="leave out figure 2")
    parser.add_argument(
        "--scale-only", action="store_true", help="figure 9 alone (the command target at scale)"
    )
    parser.add_argument("--command-questions", type=int, help="questions for figure 8 (default 50000)")
    parser.add_argument(
        "--json",
        type=Path,
        default=REPO / "benchmarks" / "last-run.json",
        help="where to write the figures as JSON",
    )
    parser.add_argument(
        "--judge-free-child", nargs=4, metavar=("N", "CONCURRENCY", "LATENCY", "DIR"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)

    if args.judge_free_child:
        n, c, latency, folder = args.judge_free_child
        print(json.dumps(judge_free_child(int(n), int(c), float(latency), folder)))
        return 0

    sizes = Sizes.preset("tiny" if args.tiny else "quick" if args.quick else "full")
    for name, attr in (
        ("questions", "questions"),
        ("judge_free_questions", "judge_free_questions"),
        ("target_latency", "target_latency_s"),
        ("judge_latency", "judge_latency_s"),
        ("concurrency", "concurrency"),
        ("rate_limit", "rate_limit"),
        ("command_questions", "command_questions"),
    ):
        if getattr(args, name) is not None:
            setattr(sizes, attr, getattr(args, name))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rag-ci-bench-") as folder:
        report = run_benchmark(
            sizes, workdir=Path(folder), skip_deepeval=args.skip_deepeval, only_scale=args.scale_only
        )
    report.raw["benchmark_wall_s"] = round(time.perf_counter() - started, 2)
    print(format_table(report))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(asdict(report), indent=2, default=str) + "\n", encoding="utf-8")
    print(f"\nfigures written to {args.json} (benchmark took {report.raw['benchmark_wall_s']:.0f}s)")
    return 0
