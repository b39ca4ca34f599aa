"""The fake writer: DeepEval's Synthesizer prompts answered by a fixed policy (`--writer fake`).

The fake judge's policy (rag_ci.judges.fake.JudgePolicy) hands these prompts here, so the
in-process `fake` provider and the test suite's fake servers, which speak the providers'
wire protocols, draft questions the same way: offline, deterministic, for dry runs, docs
and tests. It recognises the prompts of DeepEval 4.3.1's Synthesizer:

- inputs (`generate_synthetic_inputs`): one question per telling sentence of the context,
  phrased from the sentence as a person would ask it (rag_ci.judges.fake_questions: "Uvicorn
  supports HTTP/1.1." -> "What does Uvicorn support?"), the most telling first, sentences no
  rule phrases last, with a placeholder ("What do the documents say about <its first content
  words>?", PLACEHOLDER: the `questions generate` summary counts them);
  a sentence is what reads as one (headings, code blocks and list markers aside);
  a styled (vague) prompt takes them from the other end, so it asks about other sentences;
  a multi-file context compares the sentences of its two files that share most words; the
  out-of-scope prompt rag-ci writes gets questions from a list of everyday subjects;
- filtration (`evaluate_synthetic_inputs`): 1.0 for a question with 3+ content words (2+ for a
  wh-question ending in "?"), else 0.3;
  the rewrite (`rewrite_synthetic_inputs`) adds the context's heading;
- evolutions: the question unchanged (the fake keeps its questions answerable);
- styling (`rewrite_evolved_input`): the vague format rag-ci asks for gives a casual,
  lower-case question without its small words; any other format leaves it unchanged;
- expected output: the context's sentence (two for a comparison) sharing most words with
  the question, verbatim, so its keywords are the passage's own.

A question no sentence answers gets "I could not find this in the documents."
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Any

from rag_ci.core.questionset.draft_text import STOP_WORDS
from rag_ci.judges.fake_questions import plain, question_from

WRITER_KINDS = (
    "synth_inputs",
    "synth_filter",
    "synth_rewrite",
    "synth_evolve",
    "synth_style",
    "synth_expected",
)
# What rag-ci's own styling says (rag_ci.drafting.writer_prompts): the fake recognises its prompts by it.
VAGUE_MARKER = "casual, vague question"
OUT_OF_SCOPE_MARKER = "about a subject none of these documents covers"
NO_ANSWER = "I could not find this in the documents."
# The fake's placeholder question, and how to spot it after a misspelling (rag_ci.drafting's summary).
PLACEHOLDER = "What do the documents say about {about}?"
PLACEHOLDER_PATTERN = re.compile(r"\bwhat do the \w+ say \w+ ", re.IGNORECASE)

# The drafting stop words, and the words of its own placeholder and of numbers, modals and
# quantities that make no topic.
_STOP = STOP_WORDS | frozenset(
    [
        "could",
        "document",
        "documents",
        "eight",
        "five",
        "four",
        "may",
        "might",
        "must",
        "nine",
        "one",
        "other",
        "others",
        "say",
        "says",
        "seven",
        "shall",
        "should",
        "six",
        "ten",
        "three",
        "two",
        "would",
    ]
)
EVERYDAY_SUBJECTS = (
    "How do I repot an orchid without damaging its roots?",
    "How do I descale a kettle with vinegar?",
    "Which chess opening is best for a beginner?",
    "How long should green tea steep?",
    "What is the tallest mountain in South America?",
    "How do I change the strings on an acoustic guitar?",
    "When was the printing press invented?",
    "How many moons does Jupiter have?",
    "What is a good recipe for vegetable lasagne?",
    "How do I remove red wine stains from a carpet?",
    "Which planet has the longest day?",
    "How do I keep a sourdough starter alive?",
)


# How each Synthesizer prompt begins, and its kind.
_OPENINGS = (
    ("I want you act as a copywriter. Based on the given context", "synth_inputs"),
    ("Evaluate the provided synthetic query", "synth_filter"),
    ("I want you to act as a query rewriter", "synth_rewrite"),
    ("I want you to act as an input rewriter", "synth_evolve"),
    ("Given the evolved input, which may be a question or a statement", "synth_style"),
    ("Given the input, which may or may not be a question, generate a response", "synth_expected"),
)


def writer_prompt_kind(prompt: str) -> str | None:
    """Which Synthesizer prompt this is, or None when it is not one."""
    head = prompt.lstrip()[:300]
    return next((kind for opening, kind in _OPENINGS if head.startswith(opening)), None)


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")


def _sentences(text: str) -> list[str]:
    """The context's sentences, as a careful writer reads it: not its headings, code blocks
    or list markers, and only what reads as a sentence (a capital first, a full stop last)."""
    out, in_code = [], False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if in_code or not stripped or stripped.startswith("#"):
            continue
        stripped = re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", stripped)
        out += [
            s
            for s in _SENTENCE_BREAK.split(stripped)
            if re.match(r"[A-Z0-9\"'(`]", s) and re.search(r"[.!?][\"')]*$", s) and len(s.split()) >= 4
        ]
    return out


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[A-Za-z][A-Za-z'-]+", text) if len(w) >= 4 and w.lower() not in _STOP]


def _terms(text: str) -> set[str]:
    return {w.lower() for w in _words(text)} | set(re.findall(r"\d+(?:[.,]\d+)?", text))


def _telling(sentence: str) -> int:
    return len(re.findall(r"\d", sentence)) + sum(1 for w in sentence.split()[1:] if w[:1].isupper())


def _tail(prompt: str, start: str, end: str) -> str:
    i = prompt.rfind(start)
    if i == -1:
        raise ValueError(f"marker {start!r} not in the prompt")
    i += len(start)
    j = prompt.find(end, i)
    return (prompt[i:] if j == -1 else prompt[i:j]).strip()


def _context_list(text: str) -> list[str]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return [text]
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


def _about(sentence: str) -> str:
    """What a question about the sentence names: its first long or capitalised words (the nouns, mostly)."""
    words = list(dict.fromkeys(_words(sentence)))
    telling = [w for w in words if len(w) >= 6 or w[0].isupper()]
    chosen = (telling if len(telling) >= 2 else words)[:3]
    return " ".join(chosen) if chosen else sentence.split()[0]


def _phrased(sentence: str) -> str | None:
    """The sentence's question, when it names at least two things (not "What will I see?")."""
    question = question_from(sentence)
    return question if question is not None and len(_terms(question)) >= 2 else None


def _questions(ranked: list[str]) -> list[str]:
    """A question per sentence, in rank order, the phrased ones before the placeholders."""
    phrased = [(s, _phrased(s)) for s in ranked]
    return [q for _, q in phrased if q is not None] + [
        PLACEHOLDER.format(about=_about(s)) for s, q in phrased if q is None
    ]


def _pick(prompt: str, n: int) -> int:
    return int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) % n


class WriterPolicy:
    """The fake writer's answers, by prompt kind."""

    def answer(self, kind: str, prompt: str) -> dict[str, Any]:
        return getattr(self, f"_{kind[len('synth_') :]}")(prompt)

    def _inputs(self, prompt: str) -> dict:
        count = int(_tail(prompt, "Max Goldens Per Context:", "Context:"))
        chunks = _context_list(_tail(prompt, "\n        Context:", "\n        JSON:"))
        out_of_scope = OUT_OF_SCOPE_MARKER in prompt
        styled = "MUST strictly adhere to the following format" in prompt  # styled: other sentences
        return {"data": inputs_for(chunks, count, out_of_scope=out_of_scope, styled=styled, seed=prompt)}

    def _filter(self, prompt: str) -> dict:
        if clear(_tail(prompt, "\n        Query:", "\n        JSON:")):
            return {"feedback": "The query is clear, self-contained and answerable.", "score": 1.0}
        return {"feedback": "The query is too vague: name what it asks about.", "score": 0.3}

    def _rewrite(self, prompt: str) -> dict:
        query = _tail(prompt, "\n        Query:", "\n        Feedback:")
        return {"rewritten_input": rewritten(query, _tail(prompt, "\n        Context:", "\n        Query:"))}

    def _evolve(self, prompt: str) -> dict:
        found = re.findall(r"\n\s*Input:\n(.*?)\n\s*(?:Context:|Rewritten Input:)", prompt, re.DOTALL)
        return {"response": found[-1].strip() if found else ""}

    def _style(self, prompt: str) -> dict:
        found = re.search(r"Evolved Input:\n(.*?)\n[ \t]*\n", prompt, re.DOTALL)
        evolved = found.group(1).strip() if found else ""
        if VAGUE_MARKER not in prompt.split("Evolved Input:")[-1]:
            return {"input": evolved}
        return {"input": casual(evolved)}

    def _expected(self, prompt: str) -> dict:
        context = _tail(prompt, "\n        Context:", "\n        Input:")
        question = _tail(prompt, "\n        Input:", "\n        Generated Response:")
        return {"response": expected_answer(context, question)}


def clear(query: str) -> bool:
    """The filtration's verdict: a question with 3+ content words (2+ for a wh-question)."""
    asks = re.match(r"(what|how|when|which|where|why|who)\b.*\?$", query, re.IGNORECASE)
    return len(_terms(query)) >= 3 or bool(asks and len(_terms(query)) >= 2)


def casual(evolved: str) -> str:
    """The vague styling: a casual, lower-case question without its small words."""
    openers = ("hey, quick one:", "so uh,", "ok so", "need help:")
    words = [w.lower() for w in _words(evolved) if w.lower() not in ("documents", "say")]
    return f"{openers[_pick(evolved, len(openers))]} {' '.join(words)} - what's the deal"


def expected_answer(context: str, question: str) -> str:
    """The context's sentence the question was phrased from, else those sharing most of its words."""
    sentences = list(dict.fromkeys(_sentences(context)))
    source = next((s for s in sentences if question_from(s) == question), None)
    if source is not None:  # the sentence the question was phrased from
        return source
    asked = _terms(question)
    # Each sentence once: two corpora's same-topic passages may share one (a reference saying it twice).
    scored = [(len(asked & _terms(s)), -i, s) for i, s in enumerate(dict.fromkeys(_sentences(context)))]
    scored = [s for s in sorted(scored, reverse=True) if s[0] > 0]
    if not scored:
        return NO_ANSWER
    take = 2 if " compare between " in question and len(scored) > 1 else 1
    chosen = sorted(scored[:take], key=lambda s: -s[1])
    return " ".join(s[2] for s in chosen)


def inputs_for(chunks: list[str], count: int, *, out_of_scope: bool, styled: bool, seed: str) -> list[dict]:
    """The questions of a context (each `{"input": …}`): everyday subjects for an out-of-scope
    job; a comparison of two labelled files (`[SOURCE: corpus/path] text`); else a question per
    telling sentence, the most telling first (a styled job from the other end)."""
    if out_of_scope:
        start = _pick(seed, len(EVERYDAY_SUBJECTS))
        return [{"input": EVERYDAY_SUBJECTS[(start + i) % len(EVERYDAY_SUBJECTS)]} for i in range(count)]
    matched = (re.match(r"\[SOURCE: ([^\]]+)\] (.*)", c, re.DOTALL) for c in chunks)
    labelled = [m for m in matched if m is not None]
    if len(chunks) > 1 and len(labelled) == len(chunks):
        return [_comparison([m.group(1) for m in labelled], [m.group(2) for m in labelled])]
    ranked = sorted((s for c in chunks for s in _sentences(c)), key=lambda s: -_telling(s))
    questions = _questions(ranked)
    if styled:
        questions.reverse()
    return [{"input": question} for question in questions[:count]]


def _comparison(labels: list[str], texts: list[str]) -> dict:
    best = (0, "", "")
    for a in _sentences(texts[0]):
        for b in _sentences(texts[1]):
            shared = [w for w in dict.fromkeys(_words(a)) if w.lower() in _terms(b)]
            if len(shared) > best[0]:
                best = (len(shared), _about(" ".join(shared)), "")
    topic = best[1] or _about(texts[0])
    corpora = [label.split("/", 1)[0] for label in labels]
    return {
        "input": f"How does the {topic} compare between {corpora[0]} and {corpora[1]}?",
        "used_source_files": labels,
    }


def rewritten(query: str, context: str) -> str:
    """A vague question made specific: "… in <the context's first heading>?"."""
    heading = re.search(r"#+\s*([^\n'\"\\]+)", context)
    # no `{ #id }` or markup in a question
    topic = plain(heading.group(1)).strip(" .:") if heading else ""
    return f"{query.rstrip('?')} in {topic or 'the documents'}?"
