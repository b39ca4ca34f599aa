"""The blind audit sample: which answers a human labels to check the judge (docs/judges.md).

A stratified sample of a run (corpus × the judge's verdict), so every corpus and both
verdicts are checked, not only the frequent ones; plus every question this run decided
something about (regressions, gains, unstable verdicts), because those are where a
wrong judge costs the most. Same results, fraction and seed → same sample.

The sheet it produces never shows the judge's verdict: the labeller must not be
anchored by it. The strata are known to the tool (not written into the sheet).

Pure: a RunResult in, a sample and the sheet's text out.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag_ci.core.results import QuestionResult, RunResult

# The metrics a human labels, and the sheet's column for each.
LABEL_FIELDS: dict[str, str] = {"correctness": "correct", "completeness": "complete"}


@dataclass(frozen=True)
class AuditItem:
    id: str
    stratum: str
    why: str  # "sampled", or what this run decided about it: regression, gain, unstable


@dataclass(frozen=True)
class Stratum:
    name: str
    size: int  # questions of the run in this stratum
    picked: int


@dataclass(frozen=True)
class AuditSample:
    items: tuple[AuditItem, ...]  # in labelling order (shuffled: no stratum or reason shows)
    strata: tuple[Stratum, ...]
    fraction: float
    seed: int
    metrics: tuple[str, ...]  # the labelled metrics (LABEL_FIELDS) this run has verdicts for

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self.items)


def labelled_metrics(run: RunResult) -> tuple[str, ...]:
    """The labelable judge metrics present in the run; correctness alone when none is
    (a human can always say whether an answer is correct)."""
    present = {name for q in run.questions for name, m in q.metrics.items() if m.kind == "judge"}
    found = tuple(name for name in LABEL_FIELDS if name in present)
    return found or ("correctness",)


def stratum_of(question: QuestionResult, metric: str) -> str:
    """Corpus (routing) × the judge's verdict on `metric`; the question's verdict when the
    metric was not judged (a judge-free run, or an error)."""
    corpus = "+".join(question.corpora) or "-"
    result = question.metrics.get(metric)
    if result is not None and result.error is None and result.passed is not None:
        verdict = "pass" if result.passed else "fail"
    else:
        verdict = question.verdict
    return f"{corpus} × {verdict}"


def draw_sample(
    run: RunResult, fraction: float, seed: int, must_include: Mapping[str, str] | None = None
) -> AuditSample:
    """`fraction` of each stratum (at least one question per stratum, rounded up), plus
    every question in `must_include` (id -> why) and every unstable verdict of the run."""
    if not 0 < fraction <= 1:
        raise ValueError("fraction must be in (0, 1]")
    metrics = labelled_metrics(run)
    must = dict(must_include or {})
    for q in run.questions:
        if (q.unstable or q.flaky or any(m.unstable for m in q.metrics.values())) and q.id not in must:
            must[q.id] = "unstable"
    groups: dict[str, list[QuestionResult]] = {}
    for q in run.questions:
        if q.answer is None and q.error is not None:
            continue  # nothing to label: the target never answered
        groups.setdefault(stratum_of(q, metrics[0]), []).append(q)
    items: list[AuditItem] = []
    strata: list[Stratum] = []
    for name in sorted(groups):
        members = sorted(groups[name], key=lambda q: q.id)
        forced = [q for q in members if q.id in must]
        rest = [q for q in members if q.id not in must]
        quota = max(1, math.ceil(fraction * len(members)))
        # One generator per stratum, seeded by name: adding a question to one corpus
        # leaves the draws of the others unchanged.
        drawn = random.Random(f"{seed}:{name}").sample(rest, max(0, min(len(rest), quota - len(forced))))
        items += [AuditItem(q.id, name, must[q.id]) for q in forced]
        items += [AuditItem(q.id, name, "sampled") for q in sorted(drawn, key=lambda q: q.id)]
        strata.append(Stratum(name, len(members), len(forced) + len(drawn)))
    random.Random(f"{seed}:order").shuffle(items)
    return AuditSample(
        items=tuple(items), strata=tuple(strata), fraction=fraction, seed=seed, metrics=metrics
    )


def sheet_entries(run: RunResult, sample: AuditSample) -> list[dict[str, Any]]:
    """What the labeller sees for each sampled answer: never the judge's verdict or reason."""
    by_id = run.by_id()
    entries = []
    for item in sample.items:
        q = by_id[item.id]
        entries.append(
            {
                "id": q.id,
                "question": q.question,
                "corpora": list(q.corpora),
                "reference": q.reference,
                "expect": q.expect,  # "refusal": out of scope, a refusal is the right answer (no reference)
                "answer": q.answer if q.answer is not None else f"(no answer: {q.error or 'error'})",
                "passages": [{"doc_id": c.doc_id, "source": c.source, "text": c.text} for c in q.contexts],
            }
        )
    return entries


def sheet_header(run: RunResult, sample: AuditSample) -> dict[str, Any]:
    """The sheet's top-level fields: what was sampled, from which run and judge."""
    judge = run.meta.judge
    return {
        "judge": f"{judge.provider}:{judge.model}" if judge else None,
        "judge_digest": judge.digest() if judge else None,
        "git_sha": run.meta.git_sha,
        "question_set_hash": run.meta.question_set_hash,
        "seed": sample.seed,
        "fraction": sample.fraction,
        "metrics": list(sample.metrics),
    }


def labels_yaml(run: RunResult, sample: AuditSample) -> str:
    """The labelling sheet as YAML: one entry per answer, a blank `correct:` (and
    `complete:`) to fill with true/false; `rag-ci calibrate` reads it back.

    Written by hand, not by a YAML dumper, so the instructions sit next to the fields;
    every value is JSON-quoted (valid YAML), so no answer text can break the file.
    """
    header = sheet_header(run, sample)
    q = yaml_quoted
    lines = [
        "# rag-ci audit sample: label every answer by hand, then run",
        "#   rag-ci calibrate labels.yml results.json [--record --history eval_history.jsonl]",
        "# correct: true/false = is the answer right, given the reference?",
        "# complete: true/false = does it say everything the reference says? (leave blank to skip)",
        "# The judge's verdicts are deliberately not shown. Or use audit.html to label in a browser.",
        f"labeller: {q('')}   # your name: calibrations count their labellers",
    ]
    lines += [f"{key}: {q(value)}" for key, value in header.items()]
    lines.append("labels:")
    for entry in sheet_entries(run, sample):
        lines.append(f"  - id: {q(entry['id'])}")
        for column in (LABEL_FIELDS[m] for m in sample.metrics):
            lines.append(f"    {column}:   # true / false")
        lines.append(f"    question: {q(entry['question'])}")
        lines.append(f"    reference: {q(entry['reference'])}")
        lines.append(f"    answer: {q(entry['answer'])}")
        if entry["passages"]:
            lines.append("    passages:")
            for p in entry["passages"]:
                lines.append(f"      - {{source: {q(p['source'] or p['doc_id'])}, text: {q(p['text'])}}}")
    return "\n".join(lines) + "\n"


_NOT_YAML_PRINTABLE = re.compile("[\u007f-\u009f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def yaml_quoted(value: Any) -> str:
    """A YAML double-quoted scalar (or null/number): JSON's escapes, plus \\uXXXX for the
    characters YAML forbids raw (C1 controls, lone surrogates) or reads as line breaks (NEL, U+2028/9)."""
    text = json.dumps(value, ensure_ascii=False)
    return _NOT_YAML_PRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def labels_csv(run: RunResult, sample: AuditSample) -> str:
    """The sheet as CSV for a spreadsheet: blank label columns first, then what to judge by.
    A cell a spreadsheet would read as a formula (=, +, -, @) is prefixed with a quote."""
    columns = [LABEL_FIELDS[m] for m in sample.metrics]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", *columns, "labeller", "question", "reference", "answer", "passages"])
    for entry in sheet_entries(run, sample):
        passages = "\n\n".join(f"[{p['source'] or p['doc_id'] or ''}] {p['text']}" for p in entry["passages"])
        cells = [
            entry["id"],
            *[""] * len(columns),
            "",
            entry["question"],
            entry["reference"] or "",
            entry["answer"],
            passages,
        ]
        writer.writerow([_inert(c) for c in cells])
    return out.getvalue()


def _inert(cell: str) -> str:
    return "'" + cell if cell[:1] in ("=", "+", "-", "@", "\t", "\r") else cell


def describe_sample(sample: AuditSample) -> str:
    """Plain text for the terminal: the size and the strata."""
    forced = sum(1 for item in sample.items if item.why != "sampled")
    lines = [
        f"audit sample: {len(sample.items)} answers ({forced} decided by this run), "
        f"fraction {sample.fraction:g}, seed {sample.seed}, labels: {', '.join(sample.metrics)}"
    ]
    lines += [f"  {s.name:<28} {s.picked:>3} of {s.size}" for s in sample.strata]
    return "\n".join(lines)
