"""What `rag-ci questions generate` asks the writer for: the mix of drafts, as jobs.

The method asks for a few precise questions per document plus 20-25 % adversarial ones.
Of every document's `per_document` drafts most are plain; the plan turns some into
adversarial ones and adds two kinds that belong to no single document:

- misspelt: a plain draft whose question gets a hurried user's typos (seeded, in code);
- vague: the writer is told to phrase it casually and vaguely (DeepEval's styling);
- cross_corpus: drafted from two passages on the same topic in two corpora (the same
  file name, or documents sharing most of their words), `doc_id: [a, b]`;
- out_of_scope: drafted from what the corpora cover, about something none of them does;
  `expect: refusal`, no doc_id.

Counts: I = documents x per_document drafts; A adversarial ones out of T = I + C + O, with
C cross-corpus and O out-of-scope drafts each about a quarter of A, and the misspelt and
vague ones making up the rest: so A >= adversarial x T. A job is one DeepEval call
(`generate_goldens_from_contexts` on one context); each gets its evolution from a seeded
choice, so a run is reproducible whatever order the writer answers in.

Pure: passages in, a plan out.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_ci.core.questionset.draft_text import content_terms, keyword_candidates
from rag_ci.core.questionset.passages import Passage

KINDS = ("plain", "misspelt", "vague", "cross_corpus", "out_of_scope")
ADVERSARIAL = frozenset(KINDS[1:])
# DeepEval's evolutions (deepeval.synthesizer.types.Evolution values) each kind may get. The
# in-document ones keep the question answerable from its passage; In-Breadth ("a brand new
# prompt, more rare") moves away from the documents, which only an out-of-scope draft wants.
EVOLUTIONS = {
    "document": ("Reasoning", "Concretizing", "Constrained", "Hypothetical"),
    "vague": ("Reasoning", "Concretizing", "Constrained", "Hypothetical"),
    "cross_corpus": ("Comparative", "Multi-context"),
    "out_of_scope": ("In-Breadth",),
}
SAME_TOPIC = 0.3  # documents of two corpora sharing this share of their words are on one topic


@dataclass(frozen=True)
class DocumentPassages:
    corpus: str
    path: str
    passages: tuple[Passage, ...]

    @property
    def title(self) -> str:
        first = self.passages[0] if self.passages else None
        if first is not None and first.heading and first.text.lstrip().startswith("#"):
            return first.heading
        return self.path.rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("-", " ").replace("_", " ")


@dataclass(frozen=True)
class Job:
    """One context the writer drafts `goldens` questions from."""

    key: str  # stable and unique: it seeds the typos and orders the drafts
    kind: str  # "document" (plain and misspelt drafts), "vague", "cross_corpus", "out_of_scope"
    goldens: int
    evolution: str
    passages: tuple[Passage, ...] = ()
    misspelt: int = 0  # a document job: its last `misspelt` drafts get typos
    scope: tuple[str, ...] = ()  # an out-of-scope job: what the corpora cover, its context

    @property
    def context(self) -> tuple[str, ...]:
        return tuple(p.text for p in self.passages) if self.passages else self.scope


@dataclass(frozen=True)
class Plan:
    jobs: tuple[Job, ...]
    documents: int
    wanted: Mapping[str, int] = field(default_factory=dict)  # kind -> drafts asked for
    asked: float = (
        0.0  # the adversarial share the user asked for (--adversarial): what the drafts are held to
    )
    cross_corpus_note: str = ""  # why the plan has no cross-corpus drafts, when it has none

    @property
    def total(self) -> int:
        return sum(self.wanted.values())

    @property
    def adversarial(self) -> int:
        return sum(n for kind, n in self.wanted.items() if kind in ADVERSARIAL)


def mix(in_document: int, pairs: int, fraction: float) -> dict[str, int]:
    """How many drafts of each kind: at least `fraction` of them adversarial."""
    if fraction <= 0 or in_document == 0:
        return {"plain": in_document, "misspelt": 0, "vague": 0, "cross_corpus": 0, "out_of_scope": 0}
    fraction = min(fraction, 1.0)
    adversarial = math.ceil(fraction * in_document / (1 - fraction / 2))
    quarter = max(1, math.ceil(adversarial / 4))
    cross, out_of_scope = min(pairs, quarter), quarter
    total = in_document + cross + out_of_scope
    rest = min(in_document, max(0, math.ceil(fraction * total - 1e-9) - cross - out_of_scope))
    misspelt = math.ceil(rest / 2)
    return {
        "plain": in_document - rest,
        "misspelt": misspelt,
        "vague": rest - misspelt,
        "cross_corpus": cross,
        "out_of_scope": out_of_scope,
    }


def _salience(passage: Passage) -> int:
    return len(keyword_candidates(passage.text)[0])


def _pair_scores(
    documents: Sequence[DocumentPassages],
) -> list[tuple[float, str, str, str, str, DocumentPassages, DocumentPassages]]:
    """Every two documents of different corpora, scored by how much they share a topic (the
    share of their words in common; 1 more for the same file name), best first."""

    def stem(d: DocumentPassages) -> str:
        return d.path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()

    terms = {(d.corpus, d.path): content_terms(" ".join(p.text for p in d.passages)) for d in documents}
    scored = []
    for i, a in enumerate(documents):
        for b in documents[i + 1 :]:
            if a.corpus == b.corpus or not a.passages or not b.passages:
                continue
            ta, tb = terms[(a.corpus, a.path)], terms[(b.corpus, b.path)]
            overlap = len(ta & tb) / len(ta | tb) if ta | tb else 0.0
            scored.append(
                (
                    -(1.0 + overlap if stem(a) == stem(b) else overlap),
                    a.corpus,
                    a.path,
                    b.corpus,
                    b.path,
                    a,
                    b,
                )
            )
    return sorted(scored, key=lambda s: s[:5])


def same_topic_pairs(
    documents: Sequence[DocumentPassages],
) -> list[tuple[DocumentPassages, DocumentPassages]]:
    """Documents of two different corpora on the same topic, each in one pair at most, best first."""
    used: set[tuple[str, str]] = set()
    pairs = []
    for score, *_, a, b in _pair_scores(documents):
        if -score < SAME_TOPIC:
            break
        if (a.corpus, a.path) in used or (b.corpus, b.path) in used:
            continue
        used |= {(a.corpus, a.path), (b.corpus, b.path)}
        pairs.append((a, b))
    return pairs


def no_cross_corpus_reason(documents: Sequence[DocumentPassages], adversarial: float) -> str:
    """Why a plan for these documents has no cross-corpus drafts (they need two corpora
    sharing a topic), naming the closest pair when there is one."""
    corpora = sorted({d.corpus for d in documents})
    if adversarial <= 0:
        return "no cross-corpus drafts: no adversarial drafts were asked for (--adversarial 0)"
    if len(corpora) < 2:
        return (
            f"no cross-corpus drafts: they need documents of two corpora, and only {corpora[0] if corpora else 'none'} "
            "is drafted from (--corpus)"
            if corpora
            else "no cross-corpus drafts: no documents"
        )
    best = _pair_scores(documents)
    if not best:
        return "no cross-corpus drafts: no two corpora have documents with text"
    score, ca, pa, cb, pb, *_ = best[0]
    return (
        f"no cross-corpus drafts: no two documents of different corpora share a topic (the closest, {ca}/{pa} and "
        f"{cb}/{pb}, share {-score:.0%} of their words; {SAME_TOPIC:.0%} or the same file name make a topic)"
    )


def _closest_passages(a: DocumentPassages, b: DocumentPassages) -> tuple[Passage, Passage]:
    best = None
    for pa in a.passages:
        for pb in b.passages:
            ta, tb = content_terms(pa.text), content_terms(pb.text)
            overlap = len(ta & tb) / len(ta | tb) if ta | tb else 0.0
            if best is None or overlap > best[0]:
                best = (overlap, pa, pb)
    assert best is not None
    return best[1], best[2]


def plan_drafts(
    documents: Sequence[DocumentPassages],
    *,
    per_document: int,
    adversarial: float,
    seed: int,
    descriptions: Mapping[str, str],
    scope: Sequence[DocumentPassages] | None = None,
) -> Plan:
    """The jobs for these documents; `descriptions`: corpus -> what it holds, and `scope`: every
    corpus's documents (default: these), the out-of-scope drafts' context: what all corpora cover."""
    documents = [d for d in sorted(documents, key=lambda d: (d.corpus, d.path)) if d.passages]
    rng = random.Random(seed)
    pairs = same_topic_pairs(documents)
    wanted = mix(len(documents) * per_document, len(pairs), adversarial)
    # Every document's drafts spread over its most telling passages, one each in turn.
    slots: list[Passage] = []
    for document in documents:
        ranked = sorted(document.passages, key=lambda p: (-_salience(p), p.index))
        slots += [ranked[i % len(ranked)] for i in range(per_document)]
    order = list(range(len(slots)))
    rng.shuffle(order)
    kind_of = ["plain"] * len(slots)
    for position, slot in enumerate(order[: wanted["misspelt"] + wanted["vague"]]):
        kind_of[slot] = "misspelt" if position < wanted["misspelt"] else "vague"
    counts: dict[tuple[str, str, int], dict[str, int]] = {}
    passages: dict[tuple[str, str, int], Passage] = {}
    for passage, kind in zip(slots, kind_of):
        key = (passage.corpus, passage.path, passage.index)
        passages[key] = passage
        counts.setdefault(key, {"plain": 0, "misspelt": 0, "vague": 0})[kind] += 1
    jobs: list[Job] = []
    for key in sorted(counts):
        passage, n = passages[key], counts[key]
        where = f"{passage.corpus}/{passage.path}#{passage.index}"
        if n["plain"] + n["misspelt"]:
            jobs.append(
                Job(
                    f"{where}:document",
                    "document",
                    n["plain"] + n["misspelt"],
                    rng.choice(EVOLUTIONS["document"]),
                    (passage,),
                    misspelt=n["misspelt"],
                )
            )
        if n["vague"]:
            jobs.append(
                Job(f"{where}:vague", "vague", n["vague"], rng.choice(EVOLUTIONS["vague"]), (passage,))
            )
    for a, b in pairs[: wanted["cross_corpus"]]:
        pa, pb = _closest_passages(a, b)
        jobs.append(
            Job(
                f"{a.corpus}/{a.path}+{b.corpus}/{b.path}:cross_corpus",
                "cross_corpus",
                1,
                rng.choice(EVOLUTIONS["cross_corpus"]),
                (pa, pb),
            )
        )
    if wanted["out_of_scope"]:
        jobs.append(
            Job(
                "out_of_scope",
                "out_of_scope",
                wanted["out_of_scope"],
                EVOLUTIONS["out_of_scope"][0],
                scope=scope_lines(documents if scope is None else scope, descriptions),
            )
        )
    note = "" if wanted["cross_corpus"] else no_cross_corpus_reason(documents, adversarial)
    return Plan(
        jobs=tuple(jobs), documents=len(documents), wanted=wanted, asked=adversarial, cross_corpus_note=note
    )


def scope_lines(
    documents: Sequence[DocumentPassages], descriptions: Mapping[str, str], titles: int = 25
) -> tuple[str, ...]:
    """One line per corpus: its description and its documents' titles (what is in scope)."""
    lines = []
    for corpus in sorted({d.corpus for d in documents}):
        names = [d.title for d in documents if d.corpus == corpus]
        shown = "; ".join(names[:titles]) + (
            f"; and {len(names) - titles} more" if len(names) > titles else ""
        )
        description = descriptions.get(corpus) or corpus
        lines.append(f"The '{corpus}' documents ({description}) cover: {shown}.")
    return tuple(lines)
