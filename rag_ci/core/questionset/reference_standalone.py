"""A reference must stand on its own: a reviewer reads it without its page (issue 55: on two
real doc sets, 36 % of drafted references were unusable though markup-free). Three kinds do not:

- a lead-in to what the passage no longer holds, a list or an example ("Set the following
  environment parameters.", "Here is an example.", "… as shown below.");
- a pointer elsewhere ("For more details, please see encode/httpx#1434.", "See the FAQ.",
  "This is described in the deployment guide.");
- a sentence whose subject was the heading or the sentence before it ("If this environment
  variable is set, …", "It defaults to 30 seconds.", "These are loaded at start-up."): the
  reader cannot tell what "this" is.

`standalone_problem` returns why, or None. Every writer's references go through it
(rag_ci.core.questionset.draft_checks.reference_problem). Pure.
"""

from __future__ import annotations

import re

_LEAD_IN = re.compile(
    r"\b(?:(?:the|these) following(?:\s+[\w-]+){0,4}|as follows|(?:shown|listed|described|given|see) below|below:?|these steps|"
    r"here (?:is|are) (?:an? |some )?(?:example|examples|sample|snippet|list)|for example:?|e\.g\.:?)\s*[.:]?$",
    re.I,
)
_POINTER = re.compile(
    r"^(?:please\s+)?(?:see|refer to|check out|read|visit|consult|head over|take a look|have a look)\b|"
    r"\bplease (?:see|refer|check|read|visit)\b|\bfor more (?:information|details|info)\b|"
    r"\b(?:is|are|as) (?:described|explained|documented|covered|discussed|detailed) (?:in|on|at|under|here|there)\b|"
    r"[;,(]\s*(?:see|refer to|check)\s+(?:the\s+)?[\w.-]+(?:\s+[\w.-]+)?\s+(?:page|guide|section|docs|documentation)\b|"
    r"[\w.-]+/[\w.-]+#\d+|\b(?:issue|pull request|PR|ticket) #?\d+|(?<![\w&])#\d{2,}\b",
    re.I,
)
# Said of something named elsewhere: a demonstrative or a pronoun as the first sentence's subject
# ("This/These/Those/Such …", "It/They + verb"), or inside its opening clause ("If this variable …").
_DANGLING = re.compile(
    r"^(?:this|these|those|that|such|they|them|its|their|the above|the former|the latter|both|then)\b|"
    r"^it\b(?!\s+(?:is|was|can be|may be|will be)\s+(?:\w+\s+)?(?:to|that)\b)|"
    r"^(?:if|when|once|unless|while|because|since|although|after|before)\s+(?:this|these|that|those|it|they)\b",
    re.I,
)


def standalone_problem(reference: str) -> str | None:
    """Why `reference` does not stand on its own (see the module), or None."""
    text = " ".join(reference.split())
    first = re.split(r"(?<=[.!?])\s+", text, maxsplit=1)[0]
    if _LEAD_IN.search(first) or _LEAD_IN.search(text):
        return "the reference does not stand on its own (a lead-in to a list or example it does not hold)"
    if _POINTER.search(text):
        return "the reference does not stand on its own (a pointer elsewhere)"
    if _DANGLING.match(first):
        return "the reference does not stand on its own (its subject is named elsewhere: “this”, “it”)"
    return None
