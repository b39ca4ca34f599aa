"""Reviewing drafts: what the review page shows, and merging what it exports.

`rag-ci questions review` lists every draft (`status: draft`) beside the passage it was
drafted from (found again by the passage hash in its provenance; the whole cited document
when the passage changed since, nothing for an out-of-scope draft). The reviewer approves,
edits (question, reference, keywords, doc_id, sources, expect, tags) or rejects each; the
page (or `questions review --cli`) saves a reviewed file (docs/questions.md, "reviewed.yml"):

    reviewer: "ana"
    drafts:
      - id: "DU2-BATTERY-01"
        hash: "3f2a..."          # required: the draft's content hash when it was reviewed
        decision: approve        # approve | reject | (empty: not decided yet)
        question: "..."          # only the fields the reviewer edited
        doc_id: ["du2"]
        sources: ["du2/battery.md"]

`rag-ci questions apply FILE` merges it into questions.yml: rejected drafts' own lines are
removed and approved drafts lose their `status:` line, line by line, so every other comment
and blank line stays; edits go through ruamel. An approved draft records its reviewer in its
provenance; an undecided one stays a draft (with its edits). A draft that changed since it
was reviewed, or an entry without its hash, refuses the whole file. Ids compare in NFC.

Pure: texts in, texts out.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rag_ci.core.base.yamlsrc import line_of, load_yaml
from rag_ci.core.questionset.documents import ambiguous_file_names, citation_style, cites
from rag_ci.core.questionset.questions import Question, QuestionSet
from rag_ci.core.questionset.yaml_edit import flow_list, open_question_set, remove_items_and_status
from rag_ci.errors import ValidationError

if TYPE_CHECKING:  # the passages' module brings the document parsers: not needed to apply a review
    from rag_ci.core.questionset.passages import Passage

DECISIONS = ("approve", "reject")
EDITABLE = ("question", "reference", "keywords", "doc_id", "sources", "expect", "tags")
EXPECTS = ("answer", "refusal")
MAX_DOCUMENT_CHARS = 20_000  # a whole cited document shown instead of a changed passage


def review_entries(
    questions: QuestionSet, passages: Mapping[str, Passage], documents: Mapping[str, str]
) -> list[dict[str, Any]]:
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
            shown = [
                {"label": name, "text": text[:MAX_DOCUMENT_CHARS]}
                for s in q.sources
                for name, text in documents.items()
                if _cited(s, name)
            ]
        elif not hashes and q.is_refusal:
            note = "out of scope: check that no corpus covers it, and that refusing is the right answer"
        entries.append(
            {
                "id": q.id,
                "hash": q.content_hash,
                "question": q.question,
                "reference": q.reference,
                "keywords": list(q.keywords),
                "doc_id": list(q.doc_id),
                "sources": list(q.sources),
                "tags": list(q.tags),
                "expect": q.expect,
                "writer": q.provenance.writer if q.provenance else None,
                "date": q.provenance.date if q.provenance else None,
                "passages": shown,
                "note": note,
            }
        )
    return entries


def document_choices(paths: Mapping[str, Sequence[str]], cited: Iterable[str]) -> dict[str, list[str]]:
    """Corpus -> each of its documents named the way the set cites that corpus (`du2/battery.md`
    or `du2/docs/battery.md`, as `questions generate` names a draft's sources): what a reviewer
    picks `sources` from."""
    cited = list(cited)
    choices = {}
    for corpus, names in paths.items():
        style, ambiguous = citation_style(corpus, names, cited), ambiguous_file_names(names)
        choices[corpus] = [style.name(corpus, path, ambiguous) for path in sorted(names)]
    return choices


def _cited(source: str, name: str) -> bool:
    corpus, _, path = name.partition("/")
    return cites(source, corpus, path)


@dataclass(frozen=True)
class Decision:
    id: str  # NFC-normalised, as question ids are
    hash: str | None
    decision: str | None  # "approve", "reject" or None (not decided)
    edits: Mapping[str, Any] = field(default_factory=dict)  # EDITABLE fields: str, or a tuple for the lists
    line: int | None = None


@dataclass(frozen=True)
class Reviewed:
    reviewer: str | None
    decisions: tuple[Decision, ...]


def _string_list(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str) and value.strip():
        return (value.strip(),)
    if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
        return tuple(v.strip() for v in value)
    return None


def read_edits(item: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The edited fields of one reviewed entry, normalised, and what is wrong with them."""
    edits: dict[str, Any] = {}
    problems = []
    for name in ("question", "reference"):
        if name in item:
            value = item[name]
            if not isinstance(value, str) or (name == "question" and not value.strip()):
                problems.append(f"{name} must be a non-empty string")
            else:
                edits[name] = " ".join(value.split()) if name == "question" else value.strip()
    for name in ("keywords", "sources", "tags"):
        if name in item:
            value = _string_list(item[name]) if isinstance(item[name], list) else None
            if value is None:
                problems.append(f"{name} must be a list of non-empty strings")
            else:
                edits[name] = value
    if "doc_id" in item:
        value = _string_list(item["doc_id"]) if item["doc_id"] != [] else ()
        if value is None:
            problems.append("doc_id must be a corpus name or a list of them")
        else:
            edits["doc_id"] = value
    if "expect" in item:
        if item["expect"] not in EXPECTS:
            problems.append(f"expect must be answer or refusal, got {item['expect']!r}")
        else:
            edits["expect"] = item["expect"]
    return edits, problems


def parse_reviewed(text: str, filename: str) -> Reviewed:
    """The review page's export (or `questions approve/reject/edit`'s); every problem is
    reported with its line, nothing partial. Ids are NFC-normalised, like question ids."""
    root = load_yaml(text, filename)
    if not isinstance(root, dict) or not isinstance(root.get("drafts"), list):
        raise ValidationError(
            [f"{filename}:1: expected a reviewed-drafts file (a `drafts` list), as the review page saves it"]
        )
    problems, decisions, seen = [], [], set()
    reviewer = root.get("reviewer")
    for index, item in enumerate(root["drafts"]):
        line = line_of(root["drafts"], index)
        where = f"{filename}:{line}"
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            problems.append(f"{where}: each entry needs an `id`")
            continue
        qid = unicodedata.normalize("NFC", item["id"])
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
        edits, wrong = read_edits(item)
        problems.extend(f"{where}: {qid}: {problem}" for problem in wrong)
        digest = item.get("hash")
        if isinstance(digest, int) and not isinstance(digest, bool):  # an all-digit hash written unquoted
            digest = str(digest)
        decisions.append(
            Decision(
                qid,
                digest.strip() or None if isinstance(digest, str) else None,
                decision or None,
                edits,
                line,
            )
        )
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


def check_decisions(
    filename: str,
    drafts: Mapping[str, Question],
    reviewed: Reviewed,
    reviewed_name: str,
    corpora: set[str] | None = None,
) -> None:
    """ValidationError naming the reviewed file's line for every decision that cannot be applied."""
    problems = []
    for d in reviewed.decisions:
        where = f"{reviewed_name}:{d.line}" if d.line else reviewed_name
        if d.id not in drafts:
            problems.append(f"{where}: {d.id} is not a draft of {filename} (approved or removed since?)")
        elif d.hash is None:
            problems.append(
                f"{where}: {d.id} has no `hash:` (the draft's content hash when it was reviewed): make a new "
                "page with `rag-ci questions review`, or decide with `rag-ci questions approve/reject/edit`"
            )
        elif d.hash != drafts[d.id].content_hash:
            problems.append(
                f"{where}: {d.id} changed in {filename} since the review page was made: make a new page"
            )
        unknown = [c for c in d.edits.get("doc_id", ()) if corpora is not None and c not in corpora]
        if unknown:
            problems.append(
                f"{where}: {d.id}: doc_id {', '.join(unknown)} is not a corpus of the routing table "
                f"({', '.join(sorted(corpora or ())) or 'none'})"
            )
    if problems:
        raise ValidationError(problems)


# The header `rag-ci init` writes over an empty question set (rag_ci.cli.init), and what replaces
# it once a review approves the first questions.
EMPTY_SET_HEADER = """\
# Empty for now: `rag-ci questions generate` drafts questions from the corpora's documents,
# `rag-ci questions review` (or approve/reject/edit) turns drafts into questions.
"""
REVIEWED_SET_HEADER = """\
# `rag-ci questions generate` drafts more questions from the corpora's documents;
# `rag-ci questions review` (or approve/reject/edit) turns drafts into questions.
"""


def apply_reviewed(
    questions_text: str,
    filename: str,
    drafts: Mapping[str, Question],
    reviewed: Reviewed,
    reviewed_name: str = "the reviewed file",
    corpora: set[str] | None = None,
) -> Applied:
    """questions.yml with the decisions applied. `drafts`: the set's drafts by id, as parsed now;
    `corpora`: the routing table, which an edited doc_id must name."""
    check_decisions(filename, drafts, reviewed, reviewed_name, corpora)
    rejected = [d.id for d in reviewed.decisions if d.decision == "reject"]
    approved = [d for d in reviewed.decisions if d.decision == "approve"]
    # Removals first, line by line: every comment not inside a rejected draft stays put.
    text, remove_left, status_left = remove_items_and_status(
        questions_text, set(rejected), {d.id for d in approved}
    )
    # An undecided draft keeps the reviewer's edits (`questions edit` without --approve) and stays a draft.
    to_edit = approved + [d for d in reviewed.decisions if d.decision is None and d.edits]
    edited = [d.id for d in to_edit if _changes(d, drafts[d.id])]
    reviewer_noted = reviewed.reviewer and any(drafts[d.id].provenance for d in approved)
    if edited or status_left or remove_left or reviewer_noted:
        text = _edit_drafts(text, filename, to_edit, drafts, reviewed.reviewer, status_left, remove_left)
    if approved:  # `rag-ci init`'s header of an empty set is no longer true
        text = text.replace(EMPTY_SET_HEADER, REVIEWED_SET_HEADER, 1)
    decided = {d.id for d in approved} | set(rejected)
    undecided = tuple(qid for qid in drafts if qid not in decided)
    return Applied(text, tuple(d.id for d in approved), tuple(edited), tuple(rejected), undecided)


def _changes(decision: Decision, draft: Question) -> dict[str, Any]:
    return {name: value for name, value in decision.edits.items() if value != getattr(draft, name)}


def _edit_drafts(
    text: str,
    filename: str,
    decisions: list[Decision],
    drafts: Mapping[str, Question],
    reviewer: str | None,
    status_left: set[str],
    remove_left: set[str],
) -> str:
    """The drafts' edits, and the approved ones' reviewer, with ruamel (values quoted as YAML needs). A new
    key goes before the item's last one: comments after an item hang on its last key."""
    edit = open_question_set(text, filename)
    by_id = {
        unicodedata.normalize("NFC", str(item.get("id"))): item for item in edit.items if hasattr(item, "get")
    }
    for qid in remove_left:  # in a `[...]` list: no lines of its own to remove
        edit.items.remove(by_id[qid])
    for d in decisions:
        item = by_id[d.id]
        for name, value in _changes(d, drafts[d.id]).items():
            value = _yaml_value(name, value)
            if name in item or len(item) < 2:
                item[name] = value
            else:
                item.insert(len(item) - 1, name, value)
        if d.id in status_left and "status" in item:
            del item["status"]
        if (
            d.decision == "approve"
            and reviewer
            and "provenance" in item
            and hasattr(item["provenance"], "__setitem__")
        ):
            item["provenance"]["reviewed_by"] = reviewer
    return edit.dump()


def _yaml_value(name: str, value: Any) -> Any:
    if name == "doc_id" and len(value) == 1:
        return value[0]
    return flow_list(value) if isinstance(value, tuple) else value


def _quoted(value: str) -> str:
    """A YAML double-quoted string: JSON's escapes, plus the characters YAML does not allow raw
    (the review page's `q()` does the same)."""
    text = json.dumps(value, ensure_ascii=False)
    return "".join(
        f"\\u{ord(c):04x}" if 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029\ufffe\uffff" else c for c in text
    )


def dump_reviewed(reviewer: str | None, decisions: Iterable[Decision], questions_file: str) -> str:
    """A reviewed file in the review page's format (docs/questions.md), e.g. from `questions review --cli`."""
    out = [
        f"# rag-ci reviewed drafts of {_quoted(questions_file)}",
        f"reviewer: {_quoted(reviewer or '')}",
        "drafts:",
    ]
    for d in decisions:
        out += [
            f"  - id: {_quoted(d.id)}",
            f"    hash: {_quoted(d.hash or '')}",
            "    decision:" + (f" {d.decision}" if d.decision else ""),
        ]
        for name, value in d.edits.items():
            shown = (
                "[" + ", ".join(_quoted(v) for v in value) + "]"
                if isinstance(value, tuple)
                else _quoted(value)
            )
            out.append(f"    {name}: {shown}")
    return "\n".join(out) + "\n"
