"""What a reviewer rejects on sight in a drafted reference: markup, or a fragment instead of
sentences. Defined here, apart from rag-ci's own checks (rag_ci.core.questionset.draft_text),
so a test that counts with it does not grade rag-ci by rag-ci's own rule.

A reference is "markup or fragment" when it
- holds an HTML tag (`<img ...>`, `<a href=...>`, `</p>`, `<br>`), or an HTML entity (`&nbsp;`),
  outside inline code (`--host <str>` in backticks reads as code);
- holds image or badge Markdown (`![alt](...)`, `[![...`), a bare Markdown link (`[text](url)`)
  or a link reference definition (`[id]: http...`);
- holds a code fence line (```` ``` ````, `~~~`), a mermaid/diagram line (`sequenceDiagram`,
  `graph TD`, `A-->>B`), a table row (`| a | b |`) or table rule (`|---|`);
- is a bare heading (`## Usage`, or a short line with no verb that ends without punctuation);
- does not end as a sentence (`.`, `!`, `?`, optionally followed by a closing quote or bracket),
  or starts mid-sentence (a lower-case first letter, or `and`/`or`/`,`...);
- holds MkDocs / reST directive syntax (`!!! note`, `=== "pip"`, `/// note`, `.. note::`, `:ref:`), an
  attribute list (`{ #install }`, `{: .md-button }`) or a snippet include (`{* app.py *}`, `--8<--`);
- is a lead-in whose example is missing: it ends with ":", "..." or "…" ("For example, the
  following configuration...");
- misses its subject: it starts with an auxiliary or a verb ("Will send debug level output
  ...", "Sets the number ...", "`--jobs`: Sets ..."), the rest of a split list item;
- is a pointer ("See issue #409 for more on this issue.", "For an overview of X, see Y.",
  "… welcome in attrs#795.");
- holds MDX or MyST syntax outside inline code: a colon fence (`:::tip`, `:::{note}`), an MDX
  comment (`{/* truncate */}`), an `import`/`export` line, a role marker ({func}`x`), a
  `(label)=` target;
- has its subject named elsewhere: its first sentence's subject is "this", "it", "they"...
  ("Sometimes, they are called …", "If this variable is set, …").

`keyword_problem` says why a keyword names nothing an answer must hold: punctuation only, markup,
or a word any answer may use (a list of its own, not rag-ci's).

`question_problems` says what is markup in a drafted question: backticks, brackets, braces,
angle brackets, emphasis stars, `#id` attributes, directive markers.
"""

from __future__ import annotations

import re

_CHECKS = (
    ("html tag", re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(\s[^<>]*)?/?>|&(nbsp|amp|lt|gt|quot|#\d+);")),
    ("image or badge", re.compile(r"!\[[^\]]*\]\(|\[!\[|shields\.io|badge\.svg|badge\.fury")),
    ("markdown link", re.compile(r"\[[^\]]+\]\([^)]*\)|^\s*\[[^\]]+\]:\s*\S", re.M)),
    ("code fence", re.compile(r"^\s*(```|~~~)", re.M)),
    ("diagram", re.compile(r"sequenceDiagram|graph (TD|LR)|flowchart |-->>|->>|@startuml|digraph ")),
    ("table", re.compile(r"^\s*\|.*\|\s*$|\|\s*:?-{3,}", re.M)),
    ("heading", re.compile(r"^\s{0,3}#{1,6}\s", re.M)),
    (
        "directive",
        re.compile(r"^\s*(!!!|\?\?\?|===\s+\"|///)|^\s*\.\.\s+[a-z-]+::|:(ref|doc|class|func):`", re.M),
    ),
    ("mkdocs attribute or include", re.compile(r"\{:?\s*[#.][\w-]|\{:|\{\*|\*\}|--8<--")),
    (
        "mdx or myst syntax",
        re.compile(
            r"^\s*:::|^\s*(import|export) .*(from|const|default)|\{[a-z][a-z:-]*\}`|^\s*\([a-z0-9_.:-]+\)=$",
            re.M,
        ),
    ),
    (
        "pointer",
        re.compile(
            r"^(see|refer to|read more|check out)\b|^for (an? |the )?(overview|more|further|details)\b.*\bsee\b|"
            r"\b[a-z][\w-]*#[0-9]{2,}\b",
            re.I,
        ),
    ),
    (
        "missing its subject",
        re.compile(
            r"^(`[^`]+`:?\s+|[\w-]+:\s+)?(Will|Can|Should|Is|Are|Must|May|Does|Has|Sets|Removes|Enables|"
            r"Disables|Returns|Sends|Prints|Adds|Controls|Defines|Specifies|Allows|Makes|Runs|"
            r"Shows|Uses|Takes|Gives|Keeps)\b"
        ),
    ),
)
# A first sentence whose subject is a word standing for something the reference does not name
# ("This is fulfilled by …", "Sometimes, they are called …", "If it is set, …").
_SUBJECT_ELSEWHERE = re.compile(
    r"^(?:(?:\S+ ){0,3}\S+, )?(?:this|these|those|it|they|such)\b(?! (?:is|was) \w+ (?:to|that)\b)|"
    r"^(?:if|when|once|unless) (?:this|these|it|they)\b",
    re.I,
)
_MDX_COMMENT = re.compile(r"\{/\*|\*/\}")
_QUESTION_MARKUP = re.compile(r"[`\[\]{}<>*|]|(^|\s)#[\w-]|^\s*(!!!|///|===|\?\?\?)|--8<--")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")


def problems(reference: str | None) -> list[str]:
    """Why a reviewer would reject this reference on sight (empty: nothing)."""
    if reference is None:
        return []
    text = reference.strip()
    without_code = re.sub(r"`[^`\n]+`", "`code`", text)
    found = [
        name for name, pattern in _CHECKS if pattern.search(without_code if name == "html tag" else text)
    ]
    if not _SENTENCE_END.search(text):
        found.append("not ending as a sentence")
    if re.search(r"(:|\.\.\.|…)[\"')\]]*$", text):
        found.append("a lead-in whose example is missing")
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    if _SUBJECT_ELSEWHERE.match(first) and not re.match(
        r"^(if|when|once|unless) (?!this|these|it|they)\S+ [^,]*,", first, re.I
    ):
        found.append("its subject named elsewhere")
    if _MDX_COMMENT.search(without_code):
        found.append("mdx or myst syntax")
    if text[:1].islower() or re.match(r"^(and|or|but|,|;|\))\b", text):
        found.append("starting mid-sentence")
    if len(text.split()) < 4:
        found.append("too short to be a sentence")
    return found


def share_rejected(references: list[str | None]) -> tuple[int, int, dict[str, list[str]]]:
    """(rejected, counted, reference -> its problems), out-of-scope drafts (no reference) not counted."""
    counted = [r for r in references if r is not None]
    bad = {r: problems(r) for r in counted if problems(r)}
    return sum(1 for r in counted if problems(r)), len(counted), bad


def question_problems(question: str) -> list[str]:
    """What is markup in a drafted question (empty: nothing)."""
    return ["markup"] if _QUESTION_MARKUP.search(question) else []


# Words that name nothing a right answer must hold: function words, and words any page uses.
# (A list of its own, apart from rag_ci.core.questionset.distinctive's.)
_NOT_A_KEYWORD = frozenset(
    re.findall(
        r"\w+",
        """
    a an the and or but if then else when while of to in on at by for with from into onto about as
    is are was were be been being do does did have has had can could will would should may might must
    it its this that these those they them their there here what which who whom whose how why where
    not no yes all any some each every more most less many much few other others such same own very
    also just only even still yet already again always never often sometimes usually really actually
    simply basically generally typically especially quite rather well so too now then thus however
    thing things way ways kind example examples following page pages section sections chapter note
    notes information details detail overview part parts use used using make made get got set new
    one two first second last next good better best great easy simple important different various
        """,
    )
)


def keyword_problem(keyword: str) -> str | None:
    """Why a keyword names nothing an answer must hold (None: it does)."""
    word = keyword.strip()
    if not re.search(r"[^\W_]", word):
        return "no letter or digit"
    if re.search(r"[{}`]|^\*|\*$|\s<\w+\.[\w.]+>$", word):  # `--host <str>` is an option
        return "markup"
    if " " in word or re.search(r"\d", word) or re.search(r"[A-Z_./:()=-]", word[1:]):
        return None  # a name, a number, an identifier
    lowered = word.lower()
    if lowered in _NOT_A_KEYWORD or re.fullmatch(r"[a-z]{3,}ly", lowered) or len(word) < 2:
        return "a word any answer may use"
    return None
