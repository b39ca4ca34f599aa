"""The words the fake writer's phrasing rules (rag_ci.judges.fake_questions) read a sentence by.

Kept apart from the rules because they are data, not logic: the forms of "be", "have" and the
modal verbs that mark a sentence's verb, the pronouns that make a subject no question can
repeat, the determiners, prepositions and conjunctions that end a subject or an object, the
lead-in words and condition words that open a clause to skip, the imperatives that open an
instruction, the irregular participles of a passive, the contractions spelled out, and the
years and months that make a passive's question "When ...?".
"""

from __future__ import annotations

import re

BE = frozenset({"is", "are", "was", "were"})
MODALS = frozenset({"can", "could", "should", "must", "will", "may", "might", "would"})
HAVE = frozenset({"has", "have"})
PRONOUNS = frozenset(
    {
        "it",
        "this",
        "that",
        "these",
        "those",
        "they",
        "he",
        "she",
        "which",
        "there",
        "here",
        "then",
        "such",
        "its",
        "what",
        "who",
        "one",
        "some",
        "most",
        "many",
        "all",
        "none",
    }
)
DETERMINERS = frozenset(
    {
        "the",
        "a",
        "an",
        "any",
        "each",
        "every",
        "all",
        "some",
        "this",
        "these",
        "those",
        "its",
        "your",
        "our",
        "their",
        "my",
        "no",
        "most",
        "many",
        "other",
        "both",
    }
)
PREPOSITIONS = frozenset(
    {
        "in",
        "on",
        "at",
        "by",
        "with",
        "from",
        "to",
        "for",
        "via",
        "using",
        "when",
        "if",
        "as",
        "into",
        "through",
        "without",
        "after",
        "before",
        "while",
        "during",
        "alongside",
        "across",
        "over",
        "under",
        "until",
        "because",
        "unless",
        "whenever",
        "once",
        "so",
        "independently",
        "automatically",
        "only",
        "also",
        "not",
        "always",
        "never",
        "immediately",
        "directly",
        "then",
    }
)
STOPS = PREPOSITIONS | frozenset(
    {"and", "or", "but", "which", "that", "where", "who", "whose", "like", "such", "than", "of"}
)
LEAD_WORDS = frozenset(
    {
        "however",
        "then",
        "also",
        "so",
        "thus",
        "therefore",
        "note",
        "finally",
        "additionally",
        "alternatively",
        "otherwise",
        "instead",
        "now",
        "next",
        "first",
        "second",
        "here",
    }
)
CONDITION_WORDS = frozenset(
    {
        "for",
        "by",
        "in",
        "when",
        "if",
        "once",
        "after",
        "before",
        "with",
        "on",
        "to",
        "since",
        "because",
        "while",
        "as",
        "during",
        "unless",
        "at",
        "from",
        "without",
        "whenever",
        "under",
    }
)
IMPERATIVES = frozenset(
    [
        "use",
        "run",
        "set",
        "add",
        "install",
        "create",
        "call",
        "pass",
        "open",
        "enable",
        "disable",
        "configure",
        "choose",
        "select",
        "click",
        "make",
        "keep",
        "check",
        "put",
        "import",
        "define",
        "write",
        "read",
        "start",
        "stop",
        "press",
        "hold",
        "remove",
        "replace",
        "change",
        "specify",
        "provide",
        "send",
        "mount",
        "connect",
        "declare",
        "return",
        "avoid",
        "include",
        "edit",
        "copy",
        "move",
        "rename",
        "delete",
        "build",
        "deploy",
        "upgrade",
        "update",
        "download",
        "clone",
        "launch",
        "restart",
        "register",
        "follow",
        "type",
        "enter",
        "save",
        "load",
        "apply",
        "attach",
        "bind",
        "expose",
        "point",
        "see",
        "refer",
        "consider",
        "note",
        "ensure",
        "make",
    ]
)
PARTICIPLES = frozenset(
    {
        "done",
        "given",
        "made",
        "shown",
        "written",
        "built",
        "run",
        "sent",
        "set",
        "kept",
        "known",
        "taken",
        "found",
        "held",
        "put",
        "read",
        "seen",
        "chosen",
        "driven",
        "begun",
        "spent",
        "left",
    }
)
CONTRACTIONS = {"'ll": " will", "n't": " not", "'re": " are", "'ve": " have", "'m": " am"}
DATE = re.compile(
    r"\b(1[89]\d\d|20\d\d|January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\b"
)
