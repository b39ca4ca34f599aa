"""The fake writer's questions: a question a person could ask, phrased from the sentence the
fake writer picked as its reference (rag_ci.judges.fake_writer).

Rules, not a model: the sentence's markup goes (links keep their text, code its content,
heading attributes `{ #id }` go), a lead-in clause ("For this example, ...") goes, and the
sentence is read as subject + verb + rest:

- an instruction ("Use `--host 0.0.0.0` to make the app available.") asks how to do what it
  is for: "How do I make the app available?";
- "X is/are/was Y" asks "What is X?" ("When was X released?" for a passive with a date, "How"
  for another passive);
- "X can/will/should V Y" asks "What can X V?" ("How can X V?" when a preposition follows);
- "X supports Y" asks "What does X support?" ("How does X run?" when a preposition follows);
- "you"/"your" become "I"/"my".

A sentence none of these fits (a pronoun subject, a subject too long to repeat) gets a
question about its first telling words ("What is said about lifespan protocol sibling?"):
a placeholder, which the `questions generate` summary says the fake writer's questions are.
The word classes the rules read by are rag_ci.judges.fake_question_words.
"""

from __future__ import annotations

import re

from rag_ci.judges.fake_question_words import (
    BE,
    CONDITION_WORDS,
    CONTRACTIONS,
    DATE,
    DETERMINERS,
    HAVE,
    IMPERATIVES,
    LEAD_WORDS,
    MODALS,
    PARTICIPLES,
    PREPOSITIONS,
    PRONOUNS,
    STOPS,
)

MAX_SUBJECT = 7


def plain(text: str) -> str:
    """The sentence without Markdown markup, heading attributes or HTML."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", text)
    text = re.sub(r"\{\s*[#.:][^{}]*\}", "", text)  # mkdocs attribute lists: { #id }, {: .class }
    text = re.sub(r"\{\*.*?\*\}", "", text)  # snippet includes {* ... *}
    text = re.sub(r"</?[A-Za-z][^<>]*>", "", text)
    text = re.sub(r"`+([^`]*)`+", r"\1", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])[*_](?=\S)(.+?)(?<=\S)[*_](?![\w*])", r"\1", text)
    return " ".join(text.replace("*", "").split())


def _expanded(text: str) -> str:
    text = re.sub(r"\b([Ii]t|[Tt]hat|[Tt]here|[Hh]ere|[Ww]hat)'s\b", r"\1 is", text)
    text = re.sub(r"\b[Cc]an't\b", "cannot", text)
    text = re.sub(r"\b[Ww]on't\b", "will not", text)
    for short, long in CONTRACTIONS.items():
        text = re.sub(rf"\b(\w+){re.escape(short)}\b", rf"\1{long}", text)
    return text


def _person(words: list[str]) -> list[str]:
    swap = {
        "you": "I",
        "your": "my",
        "yours": "mine",
        "yourself": "myself",
        "we": "I",
        "our": "my",
        "us": "me",
    }
    return [swap.get(w.lower(), w) for w in words]


def _lower_first(words: list[str]) -> list[str]:
    if words and (
        words[0].lower() in DETERMINERS | {"you", "we"} or re.fullmatch(r"[A-Z][a-z]+(?:ed|ing)", words[0])
    ):
        return [words[0].lower(), *words[1:]]
    return words


def _base(verb: str) -> str:
    """The base form of a third-person verb: supports -> support, applies -> apply."""
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if re.search(r"(ss|sh|ch|x|z|o)es$", verb):
        return verb[:-2]
    return verb[:-1]


def _object(words: list[str]) -> list[str]:
    """The words after the verb up to the first preposition or conjunction (at most 6)."""
    out: list[str] = []
    for word in words:
        if word.lower().strip(",;:") in STOPS - {"and", "or"} or len(out) == 6:
            break
        out.append(word.strip(",;:"))
        if word.endswith((",", ";", ":")):
            break
    return out


def _third_person(word: str, before: str) -> bool:
    return (
        len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is", "ics", "'s"))
        and word.islower()
        and before.lower() not in DETERMINERS
        and word.isalpha()
    )


def _verb_at(words: list[str]) -> int | None:
    """Where the main verb is, if the subject before it is a plain noun phrase (no clause or
    preposition in it: "any changes to your source files flow" is not read)."""
    for i, word in enumerate(words[: MAX_SUBJECT + 1]):
        lowered = word.lower()
        if i == 0:
            continue
        if lowered.strip(",") in STOPS - {"of"}:
            return None
        following = words[i + 1].lower() if i + 1 < len(words) else ""
        if (
            lowered in BE | MODALS | HAVE
            or lowered in {"does", "do"}
            or (
                _third_person(word, words[i - 1])
                and following not in ("and", "or", "of", *BE, *MODALS, *HAVE)
                and not following.endswith("ed")
            )
        ):  # "the templates provided ...": a noun, not a verb
            return i
    return None


def _question_words(words: list[str]) -> str | None:
    """The question for a sentence read as words, or None when no rule fits."""
    first = words[0].lower()
    if first in IMPERATIVES and len(words) > 1:
        rest = words[1:]
        if "to" in [w.lower() for w in rest[:-1]]:
            purpose = rest[[w.lower() for w in rest].index("to") + 1 :]
            if purpose and purpose[0].lower() not in DETERMINERS:
                return f"How do I {' '.join(_person(purpose))}?"
        thing = _object(rest)
        return f"How do I {first} {' '.join(_person(thing))}?" if thing else None
    at = _verb_at(words)
    if at is None:
        return None
    subject, verb, rest = words[:at], words[at].lower(), words[at + 1 :]
    if (
        subject[0].lower() in PRONOUNS | BE | MODALS | HAVE
        or (
            subject[0].lower().endswith("s")
            and subject[0][0].isupper()
            and len(subject) > 1
            and subject[1].lower() in DETERMINERS
        )
        or subject[-1].endswith(",")
    ):  # "Sets the ...": no subject
        return None
    who = " ".join(_person(_lower_first(subject)))
    follow = rest[0].lower().strip(",") if rest else ""
    wh = "How" if follow in PREPOSITIONS or not rest else "What"
    if verb in BE:
        if follow.endswith("ed") or follow in PARTICIPLES:
            when = "When" if DATE.search(" ".join(rest)) else "How"
            return f"{when} {verb} {who} {follow}?"
        then = rest[1].lower() if len(rest) > 1 else ""
        if follow in ("never", "not", "always", "only", "also", "usually", "often") and (
            then.endswith("ed") or then in PARTICIPLES
        ):
            return f"What happens to {who}?"
        if follow.endswith("ing") or follow == "not":
            return None
        return f"What {verb} {who}?"
    if verb in MODALS:
        if not rest or follow in ("be", "not", "have") or follow in PREPOSITIONS:
            return None
        action = [rest[0].lower()]
        if len(rest) > 2 and rest[1].lower() == "to":
            action += ["to", rest[2].lower()]
        after = rest[len(action) :]
        wh = "How" if not after or after[0].lower().strip(",") in PREPOSITIONS else "What"
        return f"{wh} {verb} {who} {' '.join(action)}?"
    if verb in HAVE:
        if follow in ("been", "to") or follow.endswith("ed"):
            return None
        return f"What {'does' if verb == 'has' else 'do'} {who} have?"
    if verb in ("does", "do"):
        return None
    return f"{wh} does {who} {_base(verb)}?"


def question_from(sentence: str) -> str | None:
    """A question the sentence answers, as a person would ask it; None when no rule fits."""
    text = _expanded(plain(sentence)).rstrip(" .!?:;…")
    words = text.split()
    while words and words[0].lower().strip(",") in LEAD_WORDS and words[0].lower() not in IMPERATIVES:
        words = words[1:]
    if words and words[0].lower() in CONDITION_WORDS:
        comma = next((i for i, w in enumerate(words[:12]) if w.endswith(",")), None)
        if comma is None:
            return None
        words = words[comma + 1 :]
    label = next((i for i, w in enumerate(words[:5]) if w.endswith(":")), None)
    if label is not None:  # "Command Line: Use ...": a label before the sentence
        words = words[label + 1 :]
    if len(words) < 3:
        return None
    asked = _question_words(words)
    if asked is None or len(asked.split()) < 3:
        return None
    asked = asked[0].upper() + asked[1:]
    return re.sub(r"\s+([?,])", r"\1", asked)
