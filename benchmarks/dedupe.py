"""Dedupe at scale: `questions generate`'s duplicate check of N drafts against a set of M questions.

`python -m benchmarks.dedupe [--drafts 300] [--questions 2000] [--before-drafts 10] [--seed 7]`

A synthetic set of M questions over 4 corpora (templated questions over a vocabulary of
technical terms, so that many share their frame as real sets do) and N drafts, a tenth of
them copies of set questions with typos or reordered words (to be dropped). One run times:
- after: `rag_ci.core.questionset.dedupe.dedupe` as `questions generate` calls it (rapidfuzz
  `process.cdist` on text normalised once);
- before: the previous check (`difflib.SequenceMatcher` per pair, text normalised per pair),
  copied below, on the first `--before-drafts` drafts only (it does not finish 300 × 2,000 in
  minutes); its time for all N drafts is extrapolated linearly and printed as such.
The goal is the issue's: 300 drafts against 2,000 questions deduped in under 10 s.
"""

from __future__ import annotations

import argparse
import difflib
import random
import sys
import time
from collections.abc import Hashable

CORPORA = ["du2", "du3", "app", "charger"]
TERMS = (
    "peak torque",
    "firmware update",
    "battery capacity",
    "error E-07",
    "thermal derating",
    "CAN bus delay",
    "walk assist",
    "display pairing",
    "charging current",
    "motor temperature",
    "speed limit",
    "cadence sensor",
    "service interval",
    "wheel circumference",
    "lighting output",
    "range estimate",
    "diagnostic log",
    "brake sensor",
    "assist level",
    "power mode",
    "cable routing",
    "torque sensor",
    "sleep mode",
    "boost",
)
FRAMES = (
    "What is the {a} of the {b}?",
    "How does the {a} affect the {b}?",
    "When should the {a} be checked on the {b}?",
    "Which {a} does the {b} report?",
    "How do I change the {a} for the {b}?",
    "Why does the {a} drop after the {b}?",
    "Where is the {a} shown for the {b}?",
    "How is the {a} measured during the {b}?",
)


CONDITIONS = (
    "in cold weather",
    "after a firmware reset",
    "when the battery is below 20 percent",
    "on a steep climb",
    "with the rear rack mounted",
    "during the first ride",
    "after a crash",
    "in eco mode",
    "on long descents",
    "when the display is paired with the phone app",
    "while charging overnight",
    "at full assist",
)


def synthetic_questions(count: int, rng: random.Random) -> list[tuple[str, str, Hashable]]:
    out = []
    for n in range(count):
        a, b = rng.sample(TERMS, 2)
        question = rng.choice(FRAMES).format(a=a, b=f"{b} {rng.choice(CONDITIONS)}")
        question = question[:-1] + f" on the {rng.choice(('DU', 'PX', 'KT'))}-{rng.randint(1, 99)}?"
        out.append((f"Q-{n}", question, frozenset([rng.choice(CORPORA)])))
    return out


def typo(question: str, rng: random.Random) -> str:
    words = question.split()
    i = rng.randrange(len(words))
    if len(words[i]) > 4:
        j = rng.randrange(1, len(words[i]) - 1)
        words[i] = words[i][:j] + words[i][j + 1 :]
    return " ".join(words).lower()


# -- before: the check this benchmark replaced, as it was (difflib per pair) -------------------


def _old_similarity(a: str, b: str) -> float:
    from rag_ci.core.questionset.draft_text import normalise

    na, nb = normalise(a), normalise(b)
    if na == nb:
        return 1.0
    words_a, words_b = set(na.split()), set(nb.split())
    overlap = len(words_a & words_b) / len(words_a | words_b) if words_a | words_b else 0.0
    matcher = difflib.SequenceMatcher(None, na, nb, autojunk=False)
    if matcher.real_quick_ratio() <= overlap or matcher.quick_ratio() <= overlap:
        return overlap
    return max(overlap, matcher.ratio())


def old_dedupe(drafts, existing, near: float = 0.85):
    from rag_ci.core.questionset.draft_text import normalise

    known = list(existing)
    kept, dropped = [], []
    for label, question, route in drafts:
        text, best, same = normalise(question), None, None
        for other_id, other_question, other_route in known:
            if other_route != route:
                continue
            if normalise(other_question) == text:
                same = other_id
                break
            score = _old_similarity(question, other_question)
            if score >= near and (best is None or score > best[0]):
                best = (score, other_id)
        if same is not None or best is not None:
            dropped.append(label)
            continue
        kept.append(label)
        known.append((label, question, route))
    return kept, dropped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dedupe", description=__doc__.split("\n")[0])
    parser.add_argument("--drafts", type=int, default=300)
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--before-drafts", type=int, default=10, help="drafts the difflib check is timed on")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    from rag_ci.core.questionset.dedupe import Known, dedupe

    rng = random.Random(args.seed)
    existing = synthetic_questions(args.questions, rng)
    drafts = [
        (f"draft:{n}", q, route) for n, (_, q, route) in enumerate(synthetic_questions(args.drafts, rng))
    ]
    for n in range(0, args.drafts, 10):  # a tenth: a set question, typo'd
        _, question, route = rng.choice(existing)
        drafts[n] = (drafts[n][0], typo(question, rng), route)

    started = time.perf_counter()
    kept, dropped = dedupe(drafts, existing=[Known(i, q, r) for i, q, r in existing], describe=lambda d: d)
    after = time.perf_counter() - started

    sample = drafts[: args.before_drafts]
    started = time.perf_counter()
    _, old_dropped = old_dedupe(sample, existing)
    before_sample = time.perf_counter() - started
    before = before_sample / max(1, len(sample)) * len(drafts)

    new_on_sample = {d.item[0] for d in dropped if int(d.item[0].split(":")[1]) < len(sample)}
    print(
        f"dedupe of {len(drafts)} drafts against {len(existing)} questions ({len(drafts) * len(existing):,} pairs)"
    )
    print(f"  after  (rapidfuzz cdist):   {after:8.2f} s   kept {len(kept)}, dropped {len(dropped)}")
    print(
        f"  before (difflib per pair):  {before_sample:8.2f} s on the first {len(sample)} drafts "
        f"-> ~{before:.0f} s for {len(drafts)} (extrapolated)"
    )
    print(f"  ratio before/after: ~{before / after:.0f}x; goal < 10 s: {'met' if after < 10 else 'NOT met'}")
    print(
        f"  on the first {len(sample)} drafts: before dropped {sorted(old_dropped)}, after dropped {sorted(new_on_sample)}"
    )
    return 0 if after < 10 else 1


if __name__ == "__main__":
    sys.exit(main())
