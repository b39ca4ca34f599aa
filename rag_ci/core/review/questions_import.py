"""`rag-ci questions import LOG.jsonl`: real questions enter the set as drafts.

One JSON object per line: `{"question": ..., "corpora"?: [...], "answer"?: ..., "feedback"?: ...}`
(docs/questions.md maps Langfuse, LangSmith and plain logs onto it). Each becomes a stub
with a fresh id and `status: draft`, appended to questions.yml with ruamel's round-trip
dumper so the file's comments and layout stay; the logged answer and feedback become a
comment above the stub, for the human who writes the reference.

Pure: texts in, text out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ruamel.yaml.comments import CommentedMap

from rag_ci.core.questionset.yaml_edit import flow_list, open_question_set
from rag_ci.errors import ValidationError

MAX_QUESTION_CHARS = 4000
_COMMENT_CHARS = 160


@dataclass(frozen=True)
class LoggedQuestion:
    question: str
    corpora: tuple[str, ...] = ()
    answer: str | None = None
    feedback: str | None = None


@dataclass(frozen=True)
class ImportResult:
    text: str  # the new questions.yml
    added: tuple[str, ...]  # ids of the new drafts
    skipped: int  # logged questions already in the set (same words)


def parse_log(text: str, filename: str) -> list[LoggedQuestion]:
    """The log's questions; every bad line is reported (file:line), nothing partial."""
    found, problems = [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{filename}:{number}"
        try:
            entry = json.loads(raw)
        except ValueError as exc:
            # A JSONDecodeError has `.msg`; the ValueError of a number past Python's digit limit does not.
            problems.append(f"{where}: not a JSON object: {getattr(exc, 'msg', None) or exc}")
            continue
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected a JSON object with `question`")
            continue
        question = entry.get("question")
        if not isinstance(question, str) or not question.strip():
            problems.append(f"{where}: `question` must be a non-empty string")
            continue
        if len(question) > MAX_QUESTION_CHARS:
            problems.append(f"{where}: `question` is longer than {MAX_QUESTION_CHARS} characters")
            continue
        corpora = entry.get("corpora", ())
        if isinstance(corpora, str):
            corpora = [corpora]
        if not isinstance(corpora, (list, tuple)) or not all(
            isinstance(c, str) and c.strip() for c in corpora
        ):
            problems.append(f"{where}: `corpora` must be a list of corpus names")
            continue
        extras = {}
        for key in ("answer", "feedback"):
            value = entry.get(key)
            extras[key] = (
                None
                if value is None
                else value
                if isinstance(value, str)
                else json.dumps(value, ensure_ascii=False)
            )
        found.append(LoggedQuestion(question.strip(), tuple(corpora), extras["answer"], extras["feedback"]))
    if problems:
        raise ValidationError(problems)
    return found


def _one_line(text: str) -> str:
    """Log text safe inside a YAML comment: one line, printable, short."""
    flat = re.sub(r"\s+", " ", "".join(c if c.isprintable() else " " for c in text)).strip()
    return flat if len(flat) <= _COMMENT_CHARS else flat[: _COMMENT_CHARS - 1] + "…"


def _fresh_ids(existing: set[str], prefix: str, count: int) -> list[str]:
    pattern = re.compile(rf"^{re.escape(prefix)}(\d+)$")
    start = max((int(m.group(1)) for i in existing if (m := pattern.match(i))), default=0) + 1
    return [f"{prefix}{n:03d}" for n in range(start, start + count)]


def append_drafts(
    questions_text: str, filename: str, logged: list[LoggedQuestion], *, prefix: str = "LOG-"
) -> ImportResult:
    """questions.yml with a draft per logged question not already in it (same words)."""
    edit = open_question_set(questions_text, filename)
    items = edit.items
    known_words = {str(q.get("question", "")).strip().casefold() for q in items if isinstance(q, dict)}
    existing = {str(q.get("id")) for q in items if isinstance(q, dict)}
    fresh = []
    for entry in logged:
        if entry.question.casefold() in known_words:
            continue
        known_words.add(entry.question.casefold())
        fresh.append(entry)
    ids = _fresh_ids(existing, prefix, len(fresh))
    for qid, entry in zip(ids, fresh):
        stub = CommentedMap()
        stub["id"] = qid
        stub["question"] = entry.question
        if entry.corpora:
            stub["doc_id"] = flow_list(entry.corpora)
        stub["status"] = "draft"
        items.append(stub)
        notes = [f"imported from a log: {qid}"]
        if entry.answer:
            notes.append(f"logged answer: {_one_line(entry.answer)}")
        if entry.feedback:
            notes.append(f"feedback: {_one_line(entry.feedback)}")
        edit.comment_before(len(items) - 1, "\n".join(notes))
    return ImportResult(edit.dump(), tuple(ids), len(logged) - len(fresh))
