"""eval_history.jsonl: one line per evaluation of the default branch, and the trend.

Pure: a RunResult in, a dict out; lines in, a trend out. The action appends the line on
the data branch (rag_ci.github.databranch); `rag-ci history FILE` and the PR comment
read the trend back.

A line is a summary, not the results: enough to draw the trend (pass rate, metric means,
latency, cost) and to tell when two points are not comparable (another question set or
another judge), small enough that years of history stay one small file.
"""

from __future__ import annotations

import json
import math
from typing import Any

from rag_ci.core.results import RunResult

HISTORY_SCHEMA = 1
HISTORY_FILE = "eval_history.jsonl"


def history_line(
    result: RunResult,
    *,
    run_url: str | None = None,
    event: str | None = None,
    accepted: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The line for this run; `accepted`: the accepted-file entries in force on it
    (rag_ci.core.review.accepted.in_force), so the history says which regressions were waved through."""
    meta, agg = result.meta, result.aggregates
    overall = agg.overall
    return {
        "schema": HISTORY_SCHEMA,
        "timestamp": meta.finished_at or meta.started_at,
        "git_sha": meta.git_sha,
        "git_ref": meta.git_ref,
        "event": event,
        "run_url": run_url,
        "rag_ci_version": meta.rag_ci_version,
        "question_set_version": meta.question_set_version,
        "question_set_hash": meta.question_set_hash,
        "judge": f"{meta.judge.provider}:{meta.judge.model}" if meta.judge else None,
        "judge_digest": meta.judge.digest() if meta.judge else None,
        "full": meta.full,
        "questions": overall.n,
        "passed": overall.passed,
        "failed": overall.failed,
        "errors": overall.errors,
        "routing_errors": overall.routing_errors,
        "pass_rate": round(overall.pass_rate, 4),
        "metrics": {name: _round(m.mean) for name, m in sorted(agg.per_metric.items())},
        "latency_p50_s": _round(agg.latency_p50_s),
        "latency_p95_s": _round(agg.latency_p95_s),
        "generator_cost_usd": round(agg.generator_cost_usd, 6),
        "judge_cost_usd": round(agg.judge_cost_usd, 6),
        # Questions whose answers disagreed on this run of main (sampled baseline, or a
        # re-asked flip): id -> pass rate. PRs need stronger evidence for them (docs/noise.md).
        "flaky": flaky_on_run(result),
        "corpora": {name: round(g.pass_rate, 4) for name, g in sorted(agg.per_corpus.items())},
        # Each corpus's documents, as one hash: the trend marks the runs where they changed.
        "corpus_fingerprints": dict(sorted(meta.corpus_fingerprints.items())),
        "accepted": accepted or [],
    }


def flaky_on_run(result: RunResult) -> dict[str, list[int]]:
    """id -> [passing samples, samples] of the questions whose answers disagreed on this run."""
    return {
        q.id: [sum(1 for s in q.samples if s.verdict == "pass"), len(q.samples)]
        for q in result.questions
        if q.samples and len({s.verdict == "pass" for s in q.samples}) > 1
    }


FLAKY_WINDOW = 10  # runs of main a known-flaky mark counts in


def marked_lines(records: list[tuple[str, dict[str, Any]]], last: int = FLAKY_WINDOW) -> set[str]:
    """The raw lines, among the last `last` entries, that mark a question flaky: what must be
    vouched for before a pull request's regression may be cleared by them."""
    return {raw for raw, entry in records[-last:] if isinstance(entry.get("flaky"), dict) and entry["flaky"]}


def without_unvouched_marks(
    records: list[tuple[str, dict[str, Any]]], vouched: set[str]
) -> list[dict[str, Any]]:
    """The entries, with the flaky marks of lines not in `vouched` removed (the runs still count)."""
    return [
        entry if raw in vouched or not entry.get("flaky") else {**entry, "flaky": {}}
        for raw, entry in records
    ]


def known_flaky(entries: list[dict[str, Any]], last: int = FLAKY_WINDOW) -> dict[str, float]:
    """Questions that disagreed with themselves on main in the last `last` runs, with a
    pooled estimate of their pass rate: the marked runs count their samples, every other
    run of the window counts as one passing sample (the question did not flip there).

    A mark lapses after `last` runs of main in which the question never disagreed.
    """
    window = entries[-last:]
    marks: dict[str, list[tuple[int, int]]] = {}
    for entry in window:
        flaky = entry.get("flaky")
        if not isinstance(flaky, dict):
            continue
        for qid, value in flaky.items():
            if (
                isinstance(qid, str)
                and isinstance(value, list)
                and len(value) == 2
                and all(isinstance(v, int) for v in value)
                and 0 <= value[0] <= value[1]
                and value[1] > 0
            ):
                marks.setdefault(qid, []).append((value[0], value[1]))
    rates = {}
    for qid, runs in marks.items():
        unmarked = len(window) - len(runs)
        passes = sum(p for p, _ in runs) + unmarked
        samples = sum(n for _, n in runs) + unmarked
        rates[qid] = round(passes / samples, 4)
    return rates


def dump_line(entry: dict[str, Any]) -> str:
    """One JSON object on one line (json.dumps escapes any newline inside strings)."""
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def read_history(text: str) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """The entries (with their raw lines) and, for each run line that was skipped, why
    ("line 3: not JSON"): faces print those as warnings; a bad line is never fatal.
    Calibration records are not run lines (parse_calibrations reads them)."""
    records, problems = [], []
    for number, raw, entry, problem in _json_objects(text):
        if problem is None and entry.get("kind") == CALIBRATION_KIND:
            continue
        if problem is None:
            entry, problem = _run_entry(entry)
        if problem is not None:
            problems.append(f"line {number}: {problem}")
        else:
            records.append((raw, entry))
    return records, problems


# A run line's fields and their types, as the trend and the known-flaky rule read them. A line
# hand-edited to another type keeps its other fields: the bad field is dropped, not the run.
_NUMBERS = (
    "questions",
    "passed",
    "failed",
    "errors",
    "routing_errors",
    "latency_p50_s",
    "latency_p95_s",
    "generator_cost_usd",
    "judge_cost_usd",
)
_MAPPINGS = ("metrics", "flaky", "corpora")


def _run_entry(entry: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    rate = entry.get("pass_rate")
    if not _is_number(rate) or not 0 <= rate <= 1:  # type: ignore[operator]  # a number, checked first
        return entry, "no pass_rate between 0 and 1"
    clean = dict(entry)
    for name in _NUMBERS:
        if name in clean and clean[name] is not None and not _is_number(clean[name]):
            del clean[name]
    for name in _MAPPINGS:
        if name in clean and not isinstance(clean[name], dict):
            del clean[name]
    if isinstance(clean.get("metrics"), dict):
        clean["metrics"] = {str(k): v for k, v in clean["metrics"].items() if v is None or _is_number(v)}
    for name in ("timestamp", "git_sha", "git_ref", "question_set_hash", "judge_digest"):
        if name in clean and clean[name] is not None and not isinstance(clean[name], str):
            del clean[name]
    return clean, None


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return (isinstance(value, int) and abs(value) < 10**15) or (
        isinstance(value, float) and math.isfinite(value)
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value


def _json_objects(text: str) -> list[tuple[int, str, dict[str, Any], str | None]]:
    """(line number, raw line, object, problem) for each non-blank line: the problem says why a
    line is not a JSON object (not JSON, NaN or 1e999, nested too deeply)."""
    objects: list[tuple[int, str, dict[str, Any], str | None]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw, parse_constant=_no_constant, parse_float=_finite)
        except RecursionError:
            objects.append((number, raw, {}, "nested too deeply"))
            continue
        except ValueError as exc:
            objects.append((number, raw, {}, f"not JSON ({str(exc)[:80]})"))
            continue
        if isinstance(entry, dict):
            objects.append((number, raw, entry, None))
        else:
            objects.append((number, raw, {}, "not a JSON object"))
    return objects


def lines_of_branch(text: str, branch: str, *, default_branch: str | None) -> int:
    """How many lines of the history show that `branch` was evaluated: the trace of a baseline.

    Counted on the raw lines, not the parsed entries: a line that does not parse (a stray byte,
    no `pass_rate`) still shows a history exists, so it counts for the default branch (the
    branch the history is written for); it must never turn a lost baseline into a bootstrap.
    A run line counts for the branch its `git_ref` names (lines without one: the default branch's).
    Calibration records are no runs."""
    count = 0
    for _, _, entry, problem in _json_objects(text):
        if problem is None and entry.get("kind") == CALIBRATION_KIND:
            continue
        ref = entry.get("git_ref") if problem is None else None
        owner = (
            ref.removeprefix("refs/heads/")
            if isinstance(ref, str) and ref.startswith("refs/heads/")
            else default_branch
        )
        count += owner == branch
    return count


def trend(entries: list[dict[str, Any]], last: int = 10) -> list[dict[str, Any]]:
    """The last `last` entries, each with `delta_pass_rate` against the one before and
    `comparable` false when the question set or judge changed between the two."""
    out = []
    start = max(0, len(entries) - last)
    for i in range(start, len(entries)):
        entry = dict(entries[i])
        previous = entries[i - 1] if i > 0 else None
        entry["comparable"] = previous is None or (
            previous.get("question_set_hash") == entry.get("question_set_hash")
            and previous.get("judge_digest") == entry.get("judge_digest")
        )
        entry["delta_pass_rate"] = (
            round(entry["pass_rate"] - previous["pass_rate"], 4)
            if previous is not None and entry["comparable"]
            else None
        )
        entry["documents_changed"] = documents_changed(previous, entry) if previous is not None else []
        out.append(entry)
    return out


def documents_changed(previous: dict[str, Any], entry: dict[str, Any]) -> list[str]:
    """The corpora whose documents differ between two history lines (both must record them)."""
    before, after = previous.get("corpus_fingerprints"), entry.get("corpus_fingerprints")
    if not isinstance(before, dict) or not isinstance(after, dict) or not before or not after:
        return []
    return sorted(c for c in set(before) | set(after) if before.get(c) != after.get(c))


def trend_summary(entries: list[dict[str, Any]], last: int = 10) -> dict[str, Any] | None:
    """The compact trend line of the PR comment: the last `last` runs of main, first → last
    of pass rate, each metric's mean, p95 latency and cost, and a sparkline of the pass rate."""
    window = trend(entries, last=last)
    if not window:
        return None
    first, final = window[0], window[-1]

    def cost(e: dict[str, Any]) -> float:
        return (e.get("generator_cost_usd") or 0.0) + (e.get("judge_cost_usd") or 0.0)

    metrics = {}
    for name in sorted(final.get("metrics") or {}):
        metrics[name] = ((first.get("metrics") or {}).get(name), (final.get("metrics") or {}).get(name))
    return {
        "runs": len(window),
        "since": str(first.get("timestamp") or "")[:10],
        "spark": sparkline([e["pass_rate"] for e in window]),
        "pass_rate": (first["pass_rate"], final["pass_rate"]),
        "metrics": metrics,
        "latency_p95_s": (first.get("latency_p95_s"), final.get("latency_p95_s")),
        "cost_usd": (cost(first), cost(final)),
        "comparable": all(e["comparable"] for e in window[1:]),
    }


SPARK = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float]) -> str:
    """Pass rates (0..1) as bars, e.g. ▅▆▆█; fixed scale so a flat line means no change."""
    return "".join(SPARK[min(len(SPARK) - 1, max(0, int(v * (len(SPARK) - 1) + 0.5)))] for v in values)


def render_trend_text(entries: list[dict[str, Any]]) -> str:
    """A plain-text table of the trend, for `rag-ci history`."""
    if not entries:
        return "No history yet: the first evaluation of the default branch adds the first line."
    rows = [("date", "commit", "questions", "pass rate", "change", "p95 latency", "cost (gen + judge)")]
    for e in entries:
        delta = e.get("delta_pass_rate")
        change = "—" if delta is None else f"{delta * 100:+.1f} pt"
        if not e.get("comparable", True):
            change = "new set/judge"
        if e.get("documents_changed"):
            change += f" (documents: {', '.join(e['documents_changed'])})"
        cost = (e.get("generator_cost_usd") or 0.0) + (e.get("judge_cost_usd") or 0.0)
        p95 = e.get("latency_p95_s")
        rows.append(
            (
                str(e.get("timestamp") or "")[:10],
                str(e.get("git_sha") or "")[:7],
                str(e.get("questions", "")),
                f"{e['pass_rate'] * 100:.1f}%",
                change,
                "—" if p95 is None else f"{p95 * 1000:.0f} ms",
                f"${cost:.4f}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(f"pass rate: {sparkline([e['pass_rate'] for e in entries])}")
    return "\n".join(lines)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


# --- Calibration records (docs/judges.md "Calibrating your judge") -------------------------
# `rag-ci calibrate --record` appends them to the same file: the judge's human check lives
# next to the runs it judged. They have no `pass_rate`, so read_history skips them.
CALIBRATION_KIND = "calibration"


def calibration_line(
    *,
    judge_digest: str,
    judge: str | None,
    metric: str,
    n: int,
    agreement: float | None,
    kappa: float | None,
    date: str,
    labellers: int,
) -> dict[str, Any]:
    return {
        "schema": HISTORY_SCHEMA,
        "kind": CALIBRATION_KIND,
        "date": date,
        "judge": judge,
        "judge_digest": judge_digest,
        "metric": metric,
        "n": n,
        "agreement": _round(agreement),
        "kappa": _round(kappa),
        "labellers": labellers,
    }


def parse_calibrations(text: str) -> list[dict[str, Any]]:
    """The calibration records of an eval_history.jsonl, oldest first; malformed ones skipped."""
    records = [
        entry
        for _, _, entry, problem in _json_objects(text)
        if problem is None
        if entry.get("kind") == CALIBRATION_KIND
        and isinstance(entry.get("judge_digest"), str)
        and isinstance(entry.get("metric"), str)
        and isinstance(entry.get("date"), str)
        and isinstance(entry.get("n"), int)
    ]
    return records
