"""questions.yml (docs/questions.md): the versioned question set, its hashes and its validation."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator
from pydantic import ValidationError as PydanticError

from rag_ci.core.base.hashing import stable_hash
from rag_ci.core.base.lean_model import LeanModel
from rag_ci.core.base.yamlsrc import line_of, load_yaml, load_yaml_fast, to_plain
from rag_ci.core.config import pydantic_problems
from rag_ci.core.questionset.conversations import ChatMessage, Mode, read_conversations
from rag_ci.errors import ValidationError

# Characters that print as nothing, or as a space that is not one: an id holding one looks like
# another id (`Q-2` and `Q-2` + U+200B), which would hide a regression as "removed" + "new".
# Format characters (Cf: zero-width spaces and joiners, bidi controls, the BOM), controls,
# separators other than the space, private-use and unassigned code points, and the fillers
# and variation selectors Unicode lists as default-ignorable.
_INVISIBLE_CATEGORIES = {"Cf", "Cc", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}
_IGNORABLE = {
    0x034F,
    0x115F,
    0x1160,
    0x17B4,
    0x17B5,
    0x3164,
    0xFFA0,
    *range(0x180B, 0x1810),
    *range(0xFE00, 0xFE10),
    *range(0xE0100, 0xE01F0),
}


def id_problem(value: str) -> str | None:
    """Why `value` cannot be a question id, or None. Ids are the join key with the baseline:
    each must look like what it is."""
    if not value.strip():
        return "the id is blank"
    if value != value.strip():
        return "the id starts or ends with whitespace"
    for char in value:
        if char != " " and (unicodedata.category(char) in _INVISIBLE_CATEGORIES or ord(char) in _IGNORABLE):
            name = unicodedata.name(char, "unnamed character")
            return (
                f"the id holds an invisible or non-printing character U+{ord(char):04X} ({name}); remove it"
            )
    return None


def shown_id(value: str) -> str:
    """An id as an error message shows it: invisible characters written as \\uXXXX."""
    return "".join(
        c if c == " " or (c.isprintable() and ord(c) not in _IGNORABLE) else f"\\u{ord(c):04x}" for c in value
    )


# A positive integer or a non-empty string; strict, so `true` and `1.5` are refused.
QuestionSetVersion = (
    Annotated[int, Field(strict=True, gt=0)] | Annotated[str, Field(strict=True, pattern=r"\S")]
)


class Provenance(BaseModel):
    """Where a machine-written question came from (`rag-ci questions generate`): the writer
    model, the day, and the hash of each passage it was drafted from; who reviewed it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    writer: str = Field(min_length=1)  # PROVIDER:MODEL, e.g. openai:gpt-4.1-mini-2025-04-14
    date: str = Field(min_length=1)  # YYYY-MM-DD
    passage_hash: tuple[str, ...] = ()  # rag_ci.core.questionset.passages.Passage.hash of each passage
    reviewed_by: str | None = None  # set by `rag-ci questions apply`

    @field_validator("passage_hash", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value


class Question(
    LeanModel
):  # no per-object "fields set": 35 MiB at 50,000 questions (rag_ci.core.base.lean_model)
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    id: str = Field(min_length=1)
    question: str
    reference: str | None = None
    doc_id: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    expect: Literal["answer", "refusal"] = "answer"
    # `rag-ci questions import` adds real questions as drafts: refused in the gated set
    # until a human fills them in and removes the status (docs/questions.md).
    status: Literal["draft"] | None = None
    # Machine-written questions say by which writer, from which passages (not part of the hash:
    # reviewing a question does not change what it asks).
    provenance: Provenance | None = None

    @field_validator("id")
    @classmethod
    def _printable_id(cls, value: str) -> str:
        # NFC: an id typed on another system (NFD, as macOS file names) is the same id.
        value = unicodedata.normalize("NFC", value)
        problem = id_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("question")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question is empty")
        return value

    @field_validator("keywords")
    @classmethod
    def _keywords_not_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # An empty keyword is found in every answer: it would always count as covered.
        if any(not keyword.strip() for keyword in value):
            raise ValueError("an empty keyword matches every answer")
        return value

    @field_validator("doc_id", "sources", "keywords", "tags", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        if isinstance(value, str):
            return (value,)
        return value

    @functools.cached_property
    def content_hash(self) -> str:
        """Identity of what is asked and expected: a change here is a 'changed question'.
        Kept once computed (the question is frozen): a run asked for it four times per question."""
        return stable_hash(
            {
                "question": self.question,
                "reference": self.reference,
                "doc_id": sorted(self.doc_id),
                "sources": list(self.sources),
                "keywords": list(self.keywords),
                "expect": self.expect,
            }
        )

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Question:
        copy = super().model_copy(update=update, deep=deep)
        copy.__dict__.pop("content_hash", None)  # the copy's own fields decide its hash
        return copy

    @property
    def is_refusal(self) -> bool:
        return self.expect == "refusal"


class TurnQuestion(Question):
    """A turn of a conversation the RAG is asked (rag_ci.core.questionset.conversations), id `CONV-7#3`.

    Its hash covers the history written before it as well (a live conversation's earlier user
    messages, a scripted one's whole history): the same words after another conversation are
    another question. `said` is the history actually sent (a live turn's holds the RAG's own
    earlier answers): set by the run, never in the hash, part of the judge's verdict key."""

    conversation: str
    turn: int
    mode: Mode
    history: tuple[ChatMessage, ...] = ()
    said: tuple[ChatMessage, ...] = ()
    last: bool = False  # the conversation's last turn: where conversation-level metrics are judged

    @functools.cached_property
    def content_hash(self) -> str:
        return stable_hash(
            {
                "turn": Question.content_hash.func(self),  # type: ignore[attr-defined]
                "mode": self.mode,
                "history": [m.model_dump() for m in self.history],
            }
        )

    @property
    def sent_history(self) -> tuple[ChatMessage, ...]:
        """The history this turn is asked with: the one written (scripted), the one said (live)."""
        return self.history if self.mode == "scripted" else self.said


class QuestionSet(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: QuestionSetVersion
    questions: tuple[Question, ...]
    source: str = "questions.yml"

    @property
    def content_hash(self) -> str:
        return stable_hash({"version": self.version, "questions": [q.content_hash for q in self.questions]})

    def by_id(self) -> dict[str, Question]:
        return {q.id: q for q in self.questions}


def draft_todo(question: Question) -> str:
    """What a draft still lacks before it can be gated."""
    written = (
        f"machine-written by {question.provenance.writer} on {question.provenance.date}, not yet reviewed: "
        if question.provenance is not None
        else ""
    )
    if question.is_refusal:
        return written + "check it is out of scope"
    missing = [
        name
        for name, value in (
            ("reference", question.reference),
            ("doc_id", question.doc_id),
            ("sources", question.sources),
        )
        if not value
    ]
    if written:  # `rag-ci questions review` shows it beside its passage
        return written + (
            f"fill {', '.join(missing)}"
            if missing
            else "check it against its passage (rag-ci questions review)"
        )
    return f"fill {', '.join(missing)}" if missing else "review it"


_TOP_LEVEL = {"version", "questions", "conversations"}
_VERSION: TypeAdapter[int | str] = TypeAdapter(QuestionSetVersion)


def parse_question_set(
    text: str, filename: str, known_corpora: set[str] | None = None, *, allow_drafts: bool = False
) -> QuestionSet:
    """Parse and validate questions.yml; all problems are reported at once.

    `known_corpora` is the routing table's corpus names: a `doc_id` outside it is an error.
    Drafts are an error unless `allow_drafts` (the commands that add or review drafts).
    A valid set is read with the fast loader; only a set with problems is read again with
    the round-trip loader, whose line numbers the messages need.
    """
    fast = load_yaml_fast(text)
    if isinstance(fast, dict):
        try:
            return _parse_question_set(fast, filename, known_corpora, allow_drafts)
        except ValidationError:
            pass
    return _parse_question_set(load_yaml(text, filename), filename, known_corpora, allow_drafts)


def _parse_question_set(
    root: object, filename: str, known_corpora: set[str] | None, allow_drafts: bool = False
) -> QuestionSet:
    if not isinstance(root, dict):
        raise ValidationError([f"{filename}:1: expected a mapping with `version` and `questions`"])
    problems: list[str] = []
    for key in root:
        if key not in _TOP_LEVEL:
            problems.append(f"{filename}:{line_of(root, key)}: unknown top-level field '{key}'")
    version = root.get("version")
    if version is None:
        problems.append(f"{filename}:1: missing `version` (bump it when references change)")
    else:
        try:
            _VERSION.validate_python(version)
        except PydanticError:
            problems.append(
                f"{filename}:{line_of(root, 'version') or 1}: `version` must be a positive integer or a non-empty string, got {version!r}"
            )
    items = root.get("questions")
    if items is None and ("questions" in root or "conversations" in root):
        items = []  # `questions:` with nothing under it: what rejecting every draft of a new set leaves
    if not isinstance(items, list):
        problems.append(f"{filename}:{line_of(root, 'questions') or 1}: `questions` must be a list")
        raise ValidationError(problems)
    turns, conversation_problems = read_conversations(root.get("conversations"), filename)
    problems.extend(conversation_problems)
    if not items and not turns and not conversation_problems and not allow_drafts:
        problems.append(
            f"{filename}:{line_of(root, 'questions') or 1}: no questions yet: run `rag-ci questions generate` "
            "(drafts from the corpora's documents; docs/questions.md) or `rag-ci questions import LOG.jsonl`"
        )
        raise ValidationError(problems)

    questions: list[Question] = []
    first_line: dict[str, int | None] = {}
    for index, item in enumerate([*items, *(fields for _, fields in turns)]):
        line = line_of(items, index) if index < len(items) else turns[index - len(items)][0]
        qid = item.get("id") if isinstance(item, dict) else None
        kind = "question" if index < len(items) else "turn"
        label = f"{kind} {shown_id(str(qid))}" if qid and str(qid).strip() else f"question #{index + 1}"
        if not isinstance(item, dict):
            problems.append(f"{filename}:{line}: {label}: expected a mapping")
            continue
        try:
            model = Question if index < len(items) else TurnQuestion
            question = model.model_validate(to_plain(item))
        except PydanticError as exc:
            problems.extend(pydantic_problems(exc, item, filename, label))
            continue
        if question.id in first_line:
            problems.append(
                f"{filename}:{line}: {label}: duplicate id (first at line {first_line[question.id]})"
            )
            continue
        first_line[question.id] = line
        if question.status == "draft" and not allow_drafts:
            problems.append(
                f"{filename}:{line}: {label}: a draft ({draft_todo(question)}, then remove `status: draft`)"
            )
        if known_corpora is not None:
            if (
                not question.doc_id
                and not question.is_refusal
                and not (allow_drafts and question.status == "draft")
            ):
                problems.append(
                    f"{filename}:{line}: {label}: doc_id is required (one of: {', '.join(sorted(known_corpora))})"
                )
            for doc_id in question.doc_id:
                if doc_id not in known_corpora:
                    known = ", ".join(sorted(known_corpora)) or "none"
                    problems.append(
                        f"{filename}:{line_of(item, 'doc_id') or line}: {label}: unknown doc_id '{doc_id}' (corpora: {known})"
                    )
        questions.append(question)
    if problems:
        raise ValidationError(problems)
    assert version is not None  # a missing version is a problem raised above
    return QuestionSet(version=version, questions=tuple(questions), source=filename)
