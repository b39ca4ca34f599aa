"""Reviewing drafts: what the review page shows, and merging what it exports.

`rag-ci questions review` lists every draft (`status: draft`) beside the passage it was
drafted from (found again by the passage hash in its provenance; the whole cited document
when the passage changed since, nothing for an out-of-scope draft). The reviewer approves,
edits (question, reference, keywords) or rejects each; the page saves a reviewed file:

    reviewer: "ana"
    drafts:
      - id: "DU2-BATTERY-01"
        hash: "3f2a..."          # the draft's content hash when the page was made
        decision: approve        # approve | reject | (empty: not decided yet)
        question: "..."          # only the fields the reviewer edited
        reference: "..."
        keywords: ["6.5 hours", "2 A"]

`rag-ci questions apply FILE` merges it into questions.yml, comments and layout kept:
an approved draft takes the edits, loses `status: draft` and records its reviewer in its
provenance; a rejected one is removed; an undecided one stays a draft. A draft that changed
since the page was made is not touched (the whole file is refused: review it again).

Pure: texts in, texts out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rag_ci.core.questionset.documents import cites
from rag_ci.core.questionset.passages import Passage
from rag_ci.core.questionset.questions import Question, QuestionSet
from rag_ci.core.questionset.yaml_edit import flow_list, open_question_set
from rag_ci.core.questionset.yamlsrc import line_of, load_yaml
from rag_ci.errors import ValidationError

DECISIONS = ("approve", "reject")
EDITABLE = ("question", "reference", "keywords")
MAX_DOCUMENT_CHARS = 20_000  # a whole cited document shown instead of a changed passage


def review_entries(questions: QuestionSet, passages: Mapping[str, Passage], documents: Mapping[str, str]) -> list[dict[str, Any]]:
    """One entry per draft for the page: the draft, its passages, and where they came from.
    `passages`: hash -> passage; `documents`: `corpus/path` -> text (for a changed passage)."""
    entries = []
    for q in questions.questions:
        if q.status != "draft":
            continue
        shown, note = [], None
        hashes = q.provenance.passage_hash if q.provenance else ()
        for h in hashes:
            if h in passages:
                shown.append({"label": passages[h].label, "text": passages[h].text})
        if hashes and len(shown) < len(hashes):
            note = "the passage changed since it was drafted: the whole cited document is shown"
            shown = [{"label": name, "text": text[:MAX_DOCUMENT_CHARS]} for s in q.sources
                     for name, text in documents.items() if _cited(s, name)]
        elif not hashes and q.is_refusal:
            note = "out of scope: check that no corpus covers it, and that refusing is the right answer"
        entries.append({
            "id": q.id, "hash": q.content_hash, "question": q.question, "reference": q.reference,
            "keywords": list(q.keywords), "doc_id": list(q.doc_id), "sources": list(q.sources), "tags": list(q.tags),
            "expect": q.expect, "writer": q.provenance.writer if q.provenance else None,
            "date": q.provenance.date if q.provenance else None, "passages": shown, "note": note,
        })
    return entries


def _cited(source: str, name: str) -> bool:
    corpus, _, path = name.partition("/")
    return cites(source, corpus, path)


@dataclass(frozen=True)
class Decision:
    id: str
    hash: str | None
    decision: str | None  # "approve", "reject" or None (not decided)
    edits: Mapping[str, Any] = field(default_factory=dict)  # question / reference (str), keywords (tuple)
    line: int | None = None


@dataclass(frozen=True)
class Reviewed:
    reviewer: str | None
    decisions: tuple[Decision, ...]


def parse_reviewed(text: str, filename: str) -> Reviewed:
    """The review page's export; every problem is reported with its line, nothing partial."""
    root = load_yaml(text, filename)
    if not isinstance(root, dict) or not isinstance(root.get("drafts"), list):
        raise ValidationError([f"{filename}:1: expected a reviewed-drafts file (a `drafts` list), as the review page saves it"])
    problems, decisions, seen = [], [], set()
    reviewer = root.get("reviewer")
    for index, item in enumerate(root["drafts"]):
        line = line_of(root["drafts"], index)
        where = f"{filename}:{line}"
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            problems.append(f"{where}: each entry needs an `id`")
            continue
        qid = item["id"]
        if qid in seen:
            problems.append(f"{where}: {qid} is listed twice")
            continue
        seen.add(qid)
        unknown = sorted(set(item) - {"id", "hash", "decision", *EDITABLE})
        if unknown:
            problems.append(f"{where}: {qid}: unknown field(s) {', '.join(map(str, unknown))}")
        decision = item.get("decision")
        if decision not in (None, "", *DECISIONS):
            problems.append(f"{where}: {qid}: decision must be approve or reject, got {decision!r}")
            continue
        edits: dict[str, Any] = {}
        for name in ("question", "reference"):
            if name in item:
                value = item[name]
                if not isinstance(value, str) or (name == "question" and not value.strip()):
                    problems.append(f"{where}: {qid}: {name} must be a non-empty string")
                else:
                    edits[name] = " ".join(value.split()) if name == "question" else value.strip()
        if "keywords" in item:
            value = item["keywords"]
            if not isinstance(value, list) or not all(isinstance(k, str) and k.strip() for k in value):
                problems.append(f"{where}: {qid}: keywords must be a list of non-empty strings")
            else:
                edits["keywords"] = tuple(k.strip() for k in value)
        decisions.append(Decision(qid, item.get("hash") if isinstance(item.get("hash"), str) else None,
                                  decision or None, edits, line))
    if problems:
        raise ValidationError(problems)
    return Reviewed(str(reviewer).strip() or None if reviewer is not None else None, tuple(decisions))


@dataclass(frozen=True)
class Applied:
    text: str
    approved: tuple[str, ...]
    edited: tuple[str, ...]
    rejected: tuple[str, ...]
    undecided: tuple[str, ...]


def apply_reviewed(questions_text: str, filename: str, drafts: Mapping[str, Question], reviewed: Reviewed,
                   reviewed_name: str = "the reviewed file") -> Applied:
    """questions.yml with the decisions applied. `drafts`: the set's drafts by id, as parsed now."""
    problems = []
    for d in reviewed.decisions:
        where = f"{reviewed_name}:{d.line}" if d.line else reviewed_name
        if d.id not in drafts:
            problems.append(f"{where}: {d.id} is not a draft of {filename} (approved or removed since?)")
        elif d.hash is not None and d.hash != drafts[d.id].content_hash:
            problems.append(f"{where}: {d.id} changed in {filename} since the review page was made: make a new page")
    if problems:
        raise ValidationError(problems)
    edit = open_question_set(questions_text, filename)
    by_id = {str(item.get("id")): item for item in edit.items if hasattr(item, "get")}
    approved, edited, rejected = [], [], []
    for d in reviewed.decisions:
        item = by_id[d.id]
        if d.decision == "reject":
            edit.items.remove(item)
            rejected.append(d.id)
            continue
        if d.decision != "approve":
            continue
        changed = False
        for name, value in d.edits.items():
            old = tuple(item.get(name) or ()) if name == "keywords" else item.get(name)
            if value != old:
                item[name] = flow_list(value) if name == "keywords" else value
                changed = True
        del item["status"]
        if reviewed.reviewer and "provenance" in item and hasattr(item["provenance"], "__setitem__"):
            item["provenance"]["reviewed_by"] = reviewed.reviewer
        approved.append(d.id)
        if changed:
            edited.append(d.id)
    decided = set(approved) | set(rejected)
    undecided = tuple(qid for qid in drafts if qid not in decided)
    return Applied(edit.dump(), tuple(approved), tuple(edited), tuple(rejected), undecided)
