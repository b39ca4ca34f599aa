"""Calibrate the judge against humans: agreement, Cohen's kappa, and the disagreements.

Before trusting a judge to gate merges, label a sample of answers by hand
(id → correct true/false) and compare with the judge's binary `correctness`
verdicts from a results.json. Kappa corrects raw agreement for the agreement two
raters would reach by chance; a judge that always says "correct" on a set that is
80% correct agrees 80% of the time and has kappa 0.

Pure: label files arrive as text.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag_ci.core.base.yamlsrc import line_of, load_yaml, unprintable_character
from rag_ci.core.results import RunResult
from rag_ci.errors import ValidationError

_TRUE = {"true", "yes", "y", "1", "correct", "pass", "ok"}
_FALSE = {"false", "no", "n", "0", "incorrect", "wrong", "fail"}


@dataclass(frozen=True)
class Disagreement:
    id: str
    human: bool
    judge: bool
    reason: str | None


@dataclass(frozen=True)
class CalibrationReport:
    metric: str
    both_correct: int
    both_wrong: int
    human_only: int  # human says correct, judge says wrong
    judge_only: int  # judge says correct, human says wrong
    kappa: float | None  # None when undefined (both raters used one class only)
    disagreements: tuple[Disagreement, ...] = ()
    missing: tuple[str, ...] = ()  # labelled, but not in the results
    unjudged: tuple[str, ...] = ()  # in the results, but the metric errored or is absent

    @property
    def n(self) -> int:
        return self.both_correct + self.both_wrong + self.human_only + self.judge_only

    @property
    def agreement(self) -> float | None:
        return (self.both_correct + self.both_wrong) / self.n if self.n else None


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa for two binary raters; None when chance agreement is 1 (undefined)."""
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(1 for a, b in pairs if a == b) / n
    a_true = sum(1 for a, _ in pairs if a) / n
    b_true = sum(1 for _, b in pairs if b) / n
    chance = a_true * b_true + (1 - a_true) * (1 - b_true)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1 - chance)


def _as_bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValidationError([f"{where}: expected true/false, got {value!r}"])


@dataclass(frozen=True)
class LabelSheet:
    """Human labels read back from a file: metric -> id -> the human's verdict."""

    labels: Mapping[str, Mapping[str, bool]]
    labellers: tuple[str, ...] = ()  # the names given (top-level `labeller`, or per label)
    judge_digest: str | None = None  # the judge of the run the sample was drawn from
    unlabelled: tuple[str, ...] = ()  # ids left blank on every column

    @property
    def labeller_count(self) -> int:
        return max(1, len(self.labellers))


# The sheet's columns and the metric each labels (rag_ci.core.review.audit writes them).
_COLUMNS = {"correct": "correctness", "complete": "completeness"}
_SHEET_KEYS = {
    "labels",
    "labeller",
    "judge",
    "judge_digest",
    "git_sha",
    "question_set_hash",
    "seed",
    "fraction",
    "metrics",
}


def parse_label_sheet(text: str, filename: str) -> LabelSheet:
    """Human labels from YAML or CSV text.

    YAML: `{EVT-01: true, ...}`, `{EVT-01: {correct: true}, ...}`, a list of
    `{id: EVT-01, correct: true, complete: false}`, any of them optionally under a `labels:`
    key next to the sheet's header (`labeller`, `judge_digest`...: `rag-ci audit sample`).
    CSV: a header with `id` and `correct` (and optionally `complete`, `labeller`) columns.
    A blank value is not labelled (skipped), anything else must be true/false.
    """
    if filename.lower().endswith(".csv"):
        if (problem := unprintable_character(text, filename)) is not None:
            raise ValidationError([problem.replace("in YAML", "in a labels file")])
        try:
            return _parse_csv(text, filename)
        except csv.Error as exc:  # a field over the csv module's limit, a broken quote
            raise ValidationError([f"{filename}: not a readable CSV: {exc}"]) from None
    root = load_yaml(text, filename)
    header: dict[str, Any] = {}
    if isinstance(root, dict) and "labels" in root and set(root) <= _SHEET_KEYS:
        header, root = {k: v for k, v in root.items() if k != "labels"}, root["labels"]
    problems: list[str] = []
    if isinstance(root, dict):
        items = [(str(k), v, line_of(root, k)) for k, v in root.items()]
    elif isinstance(root, list):
        items = []
        for i, entry in enumerate(root):
            line = line_of(root, i)
            if not isinstance(entry, dict) or "id" not in entry:
                problems.append(f"{filename}:{line}: expected a mapping with `id` and `correct`")
                continue
            items.append((str(entry["id"]), entry, line))
    else:
        raise ValidationError(
            [f"{filename}:1: expected a mapping of id → true/false, or a list of {{id, correct}}"]
        )
    labels: dict[str, dict[str, bool]] = {}
    labellers = {str(header["labeller"]).strip()} if header.get("labeller") else set()
    unlabelled: list[str] = []
    for qid, value, line in items:
        values = (
            {column: value.get(column) for column in _COLUMNS}
            if isinstance(value, dict)
            else {"correct": value}
        )
        if isinstance(value, dict) and value.get("labeller"):
            labellers.add(str(value["labeller"]).strip())
        if all(v is None or str(v).strip() == "" for v in values.values()):
            unlabelled.append(qid)
            continue
        for column, v in values.items():
            if v is None or str(v).strip() == "":
                continue
            try:
                labels.setdefault(_COLUMNS[column], {})[qid] = _as_bool(v, f"{filename}:{line}: {qid}")
            except ValidationError as exc:
                problems.extend(exc.problems)
    if problems:
        raise ValidationError(problems)
    digest = header.get("judge_digest")
    return LabelSheet(
        labels=labels,
        labellers=tuple(sorted(labellers - {""})),
        judge_digest=str(digest) if digest else None,
        unlabelled=tuple(unlabelled),
    )


def _parse_csv(text: str, filename: str) -> LabelSheet:
    reader = csv.DictReader(io.StringIO(text))
    fields = {name.strip().lower(): name for name in (reader.fieldnames or [])}
    if "id" not in fields or "correct" not in fields:
        raise ValidationError([f"{filename}:1: the CSV needs `id` and `correct` columns"])
    labels: dict[str, dict[str, bool]] = {}
    labellers: set[str] = set()
    unlabelled: list[str] = []
    problems: list[str] = []
    for row_number, row in enumerate(reader, start=2):
        qid = (row.get(fields["id"]) or "").strip()
        if qid[:2] in ("'=", "'+", "'-", "'@"):
            qid = qid[1:]  # the sheet's guard against spreadsheet formulas (rag_ci.core.review.audit)
        if not qid:
            continue
        if "labeller" in fields and (row.get(fields["labeller"]) or "").strip():
            labellers.add(row[fields["labeller"]].strip())
        cells = {c: (row.get(fields[c]) or "").strip() for c in _COLUMNS if c in fields}
        if not any(cells.values()):
            unlabelled.append(qid)
            continue
        for column, cell in cells.items():
            if not cell:
                continue
            try:
                labels.setdefault(_COLUMNS[column], {})[qid] = _as_bool(
                    cell, f"{filename}:{row_number}: {qid}"
                )
            except ValidationError as exc:
                problems.extend(exc.problems)
    if problems:
        raise ValidationError(problems)
    return LabelSheet(labels=labels, labellers=tuple(sorted(labellers)), unlabelled=tuple(unlabelled))


def calibrate(labels: Mapping[str, bool], run: RunResult, metric: str = "correctness") -> CalibrationReport:
    """Compare human labels with the judge's `metric` verdicts in `run`."""
    records = run.by_id()
    counts = {"both_correct": 0, "both_wrong": 0, "human_only": 0, "judge_only": 0}
    pairs: list[tuple[bool, bool]] = []
    disagreements: list[Disagreement] = []
    missing: list[str] = []
    unjudged: list[str] = []
    for qid in sorted(labels):
        human = labels[qid]
        record = records.get(qid)
        if record is None:
            missing.append(qid)
            continue
        result = record.metrics.get(metric)
        if result is None or result.error is not None or result.passed is None:
            unjudged.append(qid)
            continue
        judge = result.passed
        pairs.append((human, judge))
        key = (
            ("both_correct" if judge else "human_only")
            if human
            else ("judge_only" if judge else "both_wrong")
        )
        counts[key] += 1
        if human != judge:
            disagreements.append(Disagreement(qid, human, judge, result.reason))
    return CalibrationReport(
        metric=metric,
        kappa=cohen_kappa(pairs),
        disagreements=tuple(disagreements),
        missing=tuple(missing),
        unjudged=tuple(unjudged),
        **counts,
    )


def render_calibration(report: CalibrationReport) -> str:
    """Plain text for the terminal."""
    if report.n == 0:
        lines = [f"No labelled question has a {report.metric} verdict to compare with."]
    else:
        kappa = "n/a (a rater used only one class)" if report.kappa is None else f"{report.kappa:.3f}"
        lines = [
            f"Judge vs human on {report.metric}: {report.n} questions",
            f"  agreement      {report.agreement:.1%}",
            f"  Cohen's kappa  {kappa}",
            "                  judge correct  judge wrong",
            f"  human correct  {report.both_correct:>13}  {report.human_only:>11}",
            f"  human wrong    {report.judge_only:>13}  {report.both_wrong:>11}",
        ]
        if report.agreement is not None:
            # The judge-noise rule's p (docs/noise.md, "Judge noise"): reviewed into rag-ci.yml, never read
            # from a file a pull request could write.
            lines.append(
                f"  disagreement   {1 - report.agreement:.3f}  (set `judge: {{disagreement_rate: "
                f"{1 - report.agreement:.3f}}}` in rag-ci.yml for the judge-noise rule)"
            )
    if report.disagreements:
        lines.append(f"Disagreements ({len(report.disagreements)}):")
        for d in report.disagreements:
            who = "human: correct, judge: wrong" if d.human else "human: wrong, judge: correct"
            lines.append(f"  {d.id}  ({who})  judge's reason: {d.reason or '-'}")
    if report.missing:
        lines.append(f"Labelled but not in the results: {', '.join(report.missing)}")
    if report.unjudged:
        lines.append(f"No {report.metric} verdict (error or not judged): {', '.join(report.unjudged)}")
    return "\n".join(lines)
