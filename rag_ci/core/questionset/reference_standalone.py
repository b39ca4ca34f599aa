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
    r"[\w.-]+/[\w.-]+#\d+|\b[A-Za-z][\w.-]*#\d{2,}\b|\b(?:issue|pull request|PR|ticket) #?\d+|(?<![\w&])#\d{2,}\b",
    re.I,
)
# Said of something named elsewhere: a demonstrative or a pronoun as the first sentence's subject
# ("This/These/Those/Such …", "It/They + verb"), or inside its opening clause ("If this variable …").
_DANGLING = re.compile(
    # "Sometimes, they …", "By default, it …" (not "If you set X, it …": X is named)
    r"^(?!(?:if|when|once|unless|while|because|since|although|after|before|whenever)\b)"
    r"(?:[\w'’.-]+\s+){0,3}?[\w'’.-]+,\s+(?:this|these|those|they|them|its|their|it)\b|"
    r"^(?:this|these|those|that|such|they|them|its|their|the above|the former|the latter|both|then)\b|"
    r"^(?:otherwise|instead|in (?:this|that|which|either|both|such (?:a )?)cases?)\b|"
    r"^it\b(?!\s+(?:is|was|can be|may be|will be)\s+(?:\w+\s+)?(?:to|that)\b)|"
    r"^(?:if|when|once|unless|while|because|since|although|after|before)\s+(?:this|these|that|those|it|they)\b|"
    # the main clause's subject after an opening clause: "If you create a class with X this is fulfilled"
    r"^(?:if|when|once|unless|because|since|as long as)\b[^.;]*?\s(?:this|these|those)\s+"
    r"(?:is|are|was|were|will|would|can|must|should|has|have|means|makes|does)\b",
    re.I,
)
# A subordinate clause with no main clause: "Although attrs would serve you just as well!"
_CLAUSE_ONLY = re.compile(r"^(?:although|though|because|whereas|even though|even if)\b[^,;:]*[.!?]$", re.I)


def standalone_problem(reference: str) -> str | None:
    """Why `reference` does not stand on its own (see the module), or None."""
    text = " ".join(reference.split())
    first = re.split(r"(?<=[.!?])\s+", text, maxsplit=1)[0]
    if _LEAD_IN.search(first) or _LEAD_IN.search(text):
        return "the reference does not stand on its own (a lead-in to a list or example it does not hold)"
    if _POINTER.search(text):
        return "the reference does not stand on its own (a pointer elsewhere)"
    if dangling(first):
        return DANGLING_REASON
    if _CLAUSE_ONLY.match(first):
        return "the reference does not stand on its own (a clause whose main clause is elsewhere)"
    return None


DANGLING_REASON = "the reference does not stand on its own (its subject is named elsewhere: “this”, “it”)"


def dangling(sentence: str) -> bool:
    """The sentence's subject is a word pointing elsewhere ("this", "it", "they"): the reader
    must be told what it is (rag_ci.core.questionset.heading_subject may tell them)."""
    return bool(_DANGLING.match(" ".join(sentence.split())))
