"""From what the writer wrote to routed, checkable drafts in questions.yml.

Each golden DeepEval's Synthesizer returns for a job (rag_ci.core.questionset.draft_plan)
becomes a draft: `doc_id` = the corpus of its passage, `sources` = its document as the set
names that corpus's documents, `keywords` = salient terms of the reference found verbatim
in the passage, `tags: [generated, ...]`, `status: draft` and a `provenance`. What DeepEval
lets through but no reviewer should see is dropped here, with its reason: a question or
reference that echoes the writer's prompt, its instructions, a placeholder or its
template (.draft_checks.echo_problem), an input that never passed DeepEval's own
filtration (it keeps those after its retries), a reference that is no sentence of its
passage (markup, a heading, a piece cut out of a sentence: .draft_checks.reference_problem;
one whose subject is its section's heading gets the heading in front: .heading_subject),
a reference with no term of its passage, a "cross-corpus" reference that uses one corpus
only, an "out-of-scope" question most of whose words one document holds.

Pure: plan and goldens in, drafts (and the YAML text) out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ruamel.yaml.comments import CommentedMap

from rag_ci.core.base.text import is_refusal
from rag_ci.core.questionset.distinctive import term_shares
from rag_ci.core.questionset.documents import CitationStyle
from rag_ci.core.questionset.draft_checks import echo_problem, reference_problem
from rag_ci.core.questionset.draft_plan import Job, Plan
from rag_ci.core.questionset.draft_text import content_terms, keywords_from_each, misspell, pick_keywords
from rag_ci.core.questionset.heading_subject import with_heading
from rag_ci.core.questionset.reference_standalone import DANGLING_REASON
from rag_ci.core.questionset.yaml_edit import flow_list, flow_map, open_question_set

MAX_QUESTION_CHARS = (
    1_000  # a question a user types; longer is a writer's runaway (and slows the duplicate check)
)
MAX_REFERENCE_CHARS = 4_000
QUALITY_THRESHOLD = 0.5  # DeepEval's FiltrationConfig.synthetic_input_quality_threshold default
IN_SCOPE_SHARE = 0.6  # an out-of-scope question with this share of its words in one document is not


@dataclass(frozen=True)
class Written:
    """One golden as DeepEval returned it for a job."""

    job: str  # Job.key
    question: str
    reference: str | None
    quality: float | None = None  # DeepEval's synthetic_input_quality (its filtration's score)
    used_sources: tuple[str, ...] = ()  # DeepEval's used_source_files (a multi-file context)
    evolutions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Draft:
    kind: str  # draft_plan.KINDS
    stem: str  # the id without its number: DU2-BATTERY, DU2-DU3-BATTERY, OOS
    question: str
    reference: str | None
    doc_id: tuple[str, ...]
    sources: tuple[str, ...]
    keywords: tuple[str, ...]
    tags: tuple[str, ...]
    passage_hash: tuple[str, ...]
    job: str
    expect: str = "answer"
    id: str = ""  # given by assign_ids, once the duplicates are out


@dataclass(frozen=True)
class Rejected:
    written: Written
    reason: str


def slug(text: str) -> str:
    """`docs/thermal-derating.md` -> `THERMAL-DERATING`; `du2` -> `DU2`."""
    last = text.rsplit("/", 1)[-1]
    stem = last.rsplit(".", 1)[0] if "." in last[1:] else last
    return re.sub(r"[^A-Z0-9]+", "-", stem.upper()).strip("-") or "DOC"


def _stem(job: Job) -> str:
    if job.kind == "out_of_scope":
        return "OOS"
    parts = []
    for passage in job.passages:
        parts += [slug(passage.corpus), slug(passage.path)]
    if len(parts) == 4 and parts[1] == parts[3]:  # DU2-BATTERY + DU3-BATTERY -> DU2-DU3-BATTERY
        parts = [parts[0], parts[2], parts[1]]
    return "-".join(parts)


def _tags(kind: str) -> tuple[str, ...]:
    return ("generated",) if kind == "plain" else ("generated", "adversarial", kind)


def _in_scope_document(question: str, document_terms: Mapping[str, frozenset[str]]) -> str | None:
    asked = content_terms(question)
    if len(asked) < 2:
        return None
    for name, terms in document_terms.items():
        if len(asked & terms) >= 2 and len(asked & terms) / len(asked) >= IN_SCOPE_SHARE:
            return name
    return None


def build_drafts(
    plan: Plan,
    written: Sequence[Written],
    *,
    styles: Mapping[str, CitationStyle],
    ambiguous: Mapping[str, frozenset[str]],
    document_terms: Mapping[str, frozenset[str]],
    seed: int,
    quality_threshold: float = QUALITY_THRESHOLD,
    quoted: frozenset[tuple[str, ...]] = frozenset(),
) -> tuple[list[Draft], list[Rejected]]:
    """Drafts in plan order; `styles`/`ambiguous`: per corpus, how the set cites its documents;
    `document_terms`: document name -> its words (out-of-scope drafts must share few of them);
    `quoted`: draft_checks.template_shingles of the writer's prompts (a draft quoting them goes)."""
    jobs = {job.key: job for job in plan.jobs}
    shares = term_shares(document_terms)  # how common each word is in the corpus: keywords are rare ones
    by_job: dict[str, list[Written]] = {}
    for item in written:
        by_job.setdefault(item.job, []).append(item)
    drafts: list[Draft] = []
    rejected: list[Rejected] = []
    for job in plan.jobs:
        items = by_job.get(job.key, [])
        first_misspelt = len(items) - min(job.misspelt, len(items))
        for n, item in enumerate(items):
            kind = {"document": "misspelt" if n >= first_misspelt else "plain"}.get(job.kind, job.kind)
            draft, why = _draft(
                jobs[job.key],
                item,
                kind,
                styles,
                ambiguous,
                document_terms,
                quality_threshold,
                quoted,
                shares,
            )
            if draft is None:
                rejected.append(Rejected(item, why))
                continue
            if kind == "misspelt":
                draft = replace(draft, question=misspell(draft.question, f"{seed}:{job.key}:{n}"))
            drafts.append(draft)
    return drafts, rejected


def _draft(
    job: Job,
    item: Written,
    kind: str,
    styles: Mapping[str, CitationStyle],
    ambiguous: Mapping[str, frozenset[str]],
    document_terms: Mapping[str, frozenset[str]],
    threshold: float,
    quoted: frozenset[tuple[str, ...]],
    shares: Mapping[str, float] | None = None,
) -> tuple[Draft | None, str]:
    question = " ".join(item.question.split())
    if not question:
        return None, "empty question"
    if len(question) > MAX_QUESTION_CHARS:
        return (
            None,
            f"a question too long ({len(question):,} characters; a question has at most {MAX_QUESTION_CHARS:,})",
        )
    if len(item.reference or "") > MAX_REFERENCE_CHARS:
        return (
            None,
            f"a reference too long ({len(item.reference or ''):,} characters; at most {MAX_REFERENCE_CHARS:,})",
        )
    echo = echo_problem(item.question, quoted)
    if echo is not None:
        return None, f"the question {echo}"
    if item.quality is not None and item.quality < threshold:
        return (
            None,
            f"failed DeepEval's filtration (quality {item.quality:.2f} < {threshold:g} after its rewrites)",
        )
    if kind == "out_of_scope":
        inside = _in_scope_document(question, document_terms)
        if inside is not None:
            return None, f"not out of scope: most of its words are in {inside}"
        return Draft(
            kind, _stem(job), question, None, (), (), (), _tags(kind), (), job.key, expect="refusal"
        ), ""
    reference = " ".join((item.reference or "").split())
    if not reference:
        return None, "no reference"
    if is_refusal(reference):
        return None, "the writer found no answer in its passage"
    texts = [p.text for p in job.passages]
    problem = echo_problem(item.reference or "", quoted)
    if problem is not None:
        return None, f"the reference {problem}"
    problem = reference_problem(item.reference or "", texts)
    if problem == DANGLING_REASON:  # "If this variable is set, …" under `HTTPX_LOG_LEVEL`: say which
        carried = with_heading(reference, [(p.heading, p.text) for p in job.passages])
        if carried is not None:
            reference, problem = carried, reference_problem(carried, texts)
    if problem is not None:
        return None, problem
    keywords = pick_keywords(reference, texts, shares=shares)
    if not keywords:
        return None, "its reference shares no term with its passage (not grounded in it)"
    if kind == "cross_corpus" and not keywords_from_each(keywords, texts):
        return None, "a cross-corpus reference that draws on one corpus only"
    corpora = tuple(dict.fromkeys(p.corpus for p in job.passages))
    sources = tuple(
        dict.fromkeys(
            styles.get(p.corpus, CitationStyle()).name(p.corpus, p.path, ambiguous.get(p.corpus, frozenset()))
            for p in job.passages
        )
    )
    return Draft(
        kind,
        _stem(job),
        question,
        reference,
        corpora,
        sources,
        keywords,
        _tags(kind),
        tuple(p.hash for p in job.passages),
        job.key,
    ), ""


def assign_ids(drafts: Sequence[Draft], existing: set[str]) -> list[Draft]:
    """Ids `STEM-NN`, numbered after the highest one the set already has with that stem."""
    next_number: dict[str, int] = {}
    out = []
    for draft in drafts:
        if draft.stem not in next_number:
            pattern = re.compile(rf"^{re.escape(draft.stem)}-(\d+)$")
            next_number[draft.stem] = (
                max((int(m.group(1)) for i in existing if (m := pattern.match(i))), default=0) + 1
            )
        number = next_number[draft.stem]
        next_number[draft.stem] += 1
        out.append(replace(draft, id=f"{draft.stem}-{number:02d}"))
    return out


def append_drafts(
    questions_text: str, filename: str, drafts: Sequence[Draft], *, writer: str, date: str
) -> str:
    """questions.yml with the drafts appended (its comments and layout kept), one comment
    line above them saying who wrote them and what a reviewer does next."""
    edit = open_question_set(questions_text, filename)
    for n, draft in enumerate(drafts):
        entry = CommentedMap()
        entry["id"] = draft.id
        entry["question"] = draft.question
        if draft.reference is not None:
            entry["reference"] = draft.reference
        if draft.doc_id:
            entry["doc_id"] = draft.doc_id[0] if len(draft.doc_id) == 1 else flow_list(draft.doc_id)
        if draft.sources:
            entry["sources"] = flow_list(draft.sources)
        if draft.keywords:
            entry["keywords"] = flow_list(draft.keywords)
        entry["tags"] = flow_list(draft.tags)
        if draft.expect != "answer":
            entry["expect"] = draft.expect
        entry["status"] = "draft"
        provenance: dict[str, Any] = {"writer": writer, "date": date}
        if draft.passage_hash:
            provenance["passage_hash"] = (
                draft.passage_hash[0] if len(draft.passage_hash) == 1 else flow_list(draft.passage_hash)
            )
        entry["provenance"] = flow_map(provenance)
        edit.items.append(entry)
        if n == 0:
            edit.comment_before(
                len(edit.items) - 1,
                f"drafted by `rag-ci questions generate` (writer {writer}, {date}): "
                "review each one (`rag-ci questions review`), then remove `status: draft`",
            )
    return edit.dump()
