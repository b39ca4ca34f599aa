"""One redaction boundary: every secret rag-ci knows becomes `***` in whatever the target says.

The target is the user's (in CI: the pull request's) code. Whatever it returns or prints
(answers, contexts, error messages, stderr tails, build and container logs) passes through
one `Redactor` before rag-ci stores, renders or posts it. The redactor is built once per
run from the secrets rag-ci knows:

- judge keys (OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY, GEMINI_API_KEY, the
  variable named by `judge.api_key_env`) and the GitHub token, wherever they came from;
- values of `target.env` entries that are secret: written `${NAME}`, named in
  `target.secret_env`, or under a secret-looking name;
- every variable of rag-ci's environment named like a credential: a part of its name
  (split at `_`, `-`, `.`) is, or ends with, KEY, TOKEN, SECRET, PASSWORD or PASSWD
  (`OPENAI_APIKEY`, `INPUT_GITHUB-TOKEN`; not `TOKENIZER_MODEL` nor `PIP_KEYRING_PROVIDER`),
  when its value looks like one (the target may pass them on, or read them from its parent).

Matching rules, and why:
- A value shorter than 8 characters is never redacted: it is no credential, and
  replacing every `true` or `1234` would shred answers (and their scores).
- A value guessed from its variable's name, or a `target.env` value written `${NAME}`
  without being declared secret, must also look like a credential (`looks_like_credential`):
  ordinary words, model names (`bert-base-uncased`, `gpt-4.1-mini-2025-04-14`), absolute
  paths and URLs are not. Of a URL only the password and credential-looking query values
  are secret (`secret_parts`). Redacting an ordinary word would change verdicts: a keyword
  blanked out of an answer fails keyword coverage.
- A line break (or `\\n`, as repr() writes it) may sit anywhere inside a secret: a key
  printed across two stderr lines is still one secret.
- A secret's first 12 characters or more are enough: rag-ci cuts long messages (a reply
  shown in an error is cut at 200 characters), and the cut may fall inside a key.
- So are its last 12 characters or more: a message cut to its first line, or a tail of
  stderr, may hold only a key's second half (a 401 quoting the key across two lines).
  They are found by their last 12 characters, then followed back through the secret.
- Wrapped text is still one secret: indentation and quote marks around the line break,
  or spaces where a line break was collapsed.

- Encoded forms are secrets too: the base64 (standard and URL-safe, at any alignment inside a
  longer encoded text), the percent-encoded form, and the base64 of `x-access-token:<secret>`,
  the form in which git's Authorization header carries a GitHub token.

Redaction keeps accidents out of reports; it cannot stop a target that encodes a key on
purpose (reversed, split...). That is what the target's allow-listed environment and,
when rag-ci runs as root, its unprivileged user are for (rag_ci.targets.processes).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from rag_ci.core.config.providers import PROVIDERS

MASK = "***"
MIN_SECRET_CHARS = 8
MIN_PREFIX_CHARS = 12  # a cut secret is still recognised from this many leading characters
_NESTING_LIMIT = 100  # longer secrets: prefixes longer than this are not matched one by one
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# A line break, or one written as `\n` (a tail of stderr lines quoted with repr()), with
# the indentation or quote marks a wrapped message puts around it; or spaces alone (a
# message whose whitespace was collapsed, `" ".join(text.split())`).
_LINE_BREAK = r"(?:[ \t]*(?:\r?\n|\r|[\u2028\u2029\x85]|(?:\\r)?\\n)[ \t>|#]*|[ \t]+)?"
# What may sit between two characters of a secret, for the backward walk of a cut secret's tail.
_BREAK_CHARS = frozenset(" \t\r\n\u2028\u2029\x85>|#")

# The variables the judge providers (their table: rag_ci.core.config.providers; GEMINI_API_KEY is
# the Google SDK's other name) and the GitHub integration read their credentials from.
KNOWN_SECRET_VARIABLES = (
    *(facts.api_key_env for facts in PROVIDERS.values() if facts.api_key_env),
    *(name for facts in PROVIDERS.values() for name in facts.secret_envs),
    "GEMINI_API_KEY",
    "GITHUB_TOKEN",
)


def secret_name(name: str) -> bool:
    """A variable name that announces a credential (`OPENAI_API_KEY`, `INPUT_GITHUB-TOKEN`,
    `AWS_SECRET_ACCESS_KEY`), not one that merely contains such a word (`TOKENIZER_MODEL`)."""
    parts = re.split(r"[_\-.]", name.upper())
    return any(part.rstrip("S").endswith(word) for part in parts for word in _SECRET_WORDS)


def looks_like_credential(value: str) -> bool:
    """Whether a value could be a key, token or password rather than a word, a name or a URL.

    Not: short values, values with spaces, absolute paths, URLs, values of one kind of
    character, and names made of ordinary segments (split at `-_./:@+`: words of letters,
    numbers, short codes such as `v2`, `L6`, `7b`). `bert-base-uncased`, `all-MiniLM-L6-v2`
    and `gpt-4.1-mini-2025-04-14` are names; `tok_4Fq9ZkLm2` and `sk-proj-…` are not."""
    if len(value) < MIN_SECRET_CHARS or value.startswith("/") or any(c.isspace() for c in value):
        return False
    if _URL.match(value):
        return False
    kinds = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() for c in value),
    )
    if sum(kinds) < 2:
        return False
    return not all(_ordinary_segment(part) for part in re.split(r"[-_./:@+]", value) if part)


def _ordinary_segment(part: str) -> bool:
    if part.isalpha():
        return len(part) < 16  # a long run of letters may be a random key
    if part.isdigit():
        return len(part) <= 8  # a version, a date
    return len(part) <= 6  # a short code: v2, L6, 7b, A100, 4o


def secret_parts(value: str) -> list[str]:
    """What is secret in a value that is not declared secret: the whole value when it looks
    like a credential; of a URL, its password and its credential-looking query values."""
    if not _URL.match(value):
        return [value] if looks_like_credential(value) else []
    parts = urlsplit(value)
    found = [parts.password] if parts.password else []
    found += [v for _, v in parse_qsl(parts.query) if looks_like_credential(v)]
    return [unquote(v) for v in found if v]


def encoded_forms(secret: str) -> set[str]:
    """How a secret may appear encoded: its base64 at each of the three alignments (only the
    characters that depend on the secret alone, so it is found inside a longer base64 text),
    URL-safe base64 alike, the base64 of `x-access-token:<secret>`, its percent-encoding."""
    raw = secret.encode("utf-8", errors="replace")
    forms = {quote(secret, safe=""), base64.b64encode(b"x-access-token:" + raw).decode().rstrip("=")}
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + raw).decode()
        skip = (offset * 8 + 5) // 6  # characters that carry bits of what comes before
        core = encoded[skip : (offset + len(raw)) * 8 // 6]  # ...and of what comes after
        forms |= {core, core.replace("+", "-").replace("/", "_")}
    return {f for f in forms if len(f) >= MIN_SECRET_CHARS and f != secret}


def _pattern(secret: str) -> str:
    """The secret, a line break allowed between any two characters, its long prefixes too."""
    chars = [re.escape(c) for c in secret]
    head_len = min(len(chars), MIN_PREFIX_CHARS)
    head = _LINE_BREAK.join(chars[:head_len])
    rest = chars[head_len:]
    # One optional group per further character, nested; past the nesting limit, per block
    # of 8 characters (a cut there leaves at most 7 characters of a very long secret).
    steps = [[c] for c in rest[:_NESTING_LIMIT]]
    steps += [rest[i : i + 8] for i in range(_NESTING_LIMIT, len(rest), 8)]
    tail = ""
    for step in reversed(steps):
        tail = f"(?:{''.join(_LINE_BREAK + c for c in step)}{tail})?"
    return head + tail


class Redactor:
    """Replaces known secrets by `***`. Immutable; `Redactor()` redacts nothing."""

    def __init__(self, secrets: Iterable[str] = ()):
        values = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        self._count = len(values)
        self._regex = re.compile("|".join(_pattern(s) for s in values)) if values else None
        # A cut secret's tail: its last MIN_PREFIX_CHARS characters (no capturing groups: they
        # would slow the search down; which secret matched is read from the match itself).
        self._tails = {
            s[-MIN_PREFIX_CHARS:]: s[:-MIN_PREFIX_CHARS]
            for s in reversed(values)
            if len(s) > MIN_PREFIX_CHARS
        }
        self._tail_regex = (
            re.compile("|".join(_LINE_BREAK.join(re.escape(c) for c in tail) for tail in self._tails))
            if self._tails
            else None
        )
        encoded = sorted({form for s in values for form in encoded_forms(s)}, key=len, reverse=True)
        self._encoded_regex = re.compile("|".join(map(re.escape, encoded))) if encoded else None

    def __bool__(self) -> bool:
        return self._regex is not None

    def __repr__(self) -> str:  # never the values
        return f"Redactor({self._count} secrets)"

    def __call__(self, text: str) -> str:
        if self._regex is None or not text:
            return text
        if self._encoded_regex is not None:
            text = self._encoded_regex.sub(MASK, text)
        if self._tail_regex is None or not self._tail_regex.search(text):
            return self._regex.sub(MASK, text)
        out, last = [], 0
        for lo, hi in self.spans(text):
            out += [text[last:lo], MASK]
            last = hi
        return "".join(out) + text[last:]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the secrets are in `text`: sorted, overlapping ones merged."""
        if self._regex is None:
            return []
        found = [m.span() for m in self._regex.finditer(text)]
        if self._encoded_regex is not None:
            found += [m.span() for m in self._encoded_regex.finditer(text)]
        if self._tail_regex is not None:
            for m in self._tail_regex.finditer(text):
                tail = _without_breaks(m.group())
                found.append((_start_of_tail(text, m.start(), self._tails.get(tail, "")), m.end()))
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(found):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
            else:
                merged.append((lo, hi))
        return merged

    def tree(self, value: Any) -> Any:
        """A decoded JSON value with every string (keys too) redacted."""
        if self._regex is None:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self(k) if isinstance(k, str) else k: self.tree(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.tree(v) for v in value]
        return value

    def lines(self) -> LineRedactor:
        return LineRedactor(self)

    @classmethod
    def from_environment(
        cls,
        environ: Mapping[str, str],
        *,
        declared: Iterable[str] = (),
        variables: Iterable[str] = (),
    ) -> Redactor:
        """Secrets of a run: `declared` values, the named `variables` and the known credential
        variables of `environ`, and every credential-looking value under a secret name."""
        found = list(declared)
        for name in (*KNOWN_SECRET_VARIABLES, *variables):
            if environ.get(name):
                found.append(environ[name])
        found += [part for k, v in environ.items() if secret_name(k) for part in secret_parts(v)]
        return cls(found)


def _without_breaks(text: str) -> str:
    """A matched piece of a secret without the line breaks, escapes and indentation in it."""
    return (
        re.sub(r"\\r|\\n", "", "".join(c for c in text if c not in _BREAK_CHARS))
        if len(text) > MIN_PREFIX_CHARS
        else text
    )


def _start_of_tail(text: str, end: int, before: str) -> int:
    """Where a secret's tail found at `end` begins: walking back through `text` while its
    characters are the secret's (`before`: the characters ahead of the tail), line breaks,
    indentation and `\\n` escapes between them allowed."""
    start, pos, want = end, end - 1, len(before) - 1
    while pos >= 0 and want >= 0:
        if text[pos] == before[want]:
            want, pos = want - 1, pos - 1
            start = pos + 1
        elif text[pos] in _BREAK_CHARS:
            pos -= 1
        elif text[pos] in "nr" and pos > 0 and text[pos - 1] == "\\":
            pos -= 2
        else:
            break
    return start


class LineRedactor:
    """Redacts a stream read line by line. Each line is let out one line late, redacted with
    its neighbours in view, so a secret cut across a line break is masked in both halves."""

    def __init__(self, redactor: Redactor):
        self._redactor = redactor
        self._previous = ""
        self._held: str | None = None

    def feed(self, line: str) -> list[str]:
        if self._held is None:
            self._held = line
            return []
        out = self._middle(self._previous, self._held, line)
        self._previous, self._held = self._held, line
        return [out]

    def flush(self) -> list[str]:
        if self._held is None:
            return []
        out = self._middle(self._previous, self._held, "")
        self._previous, self._held = "", None
        return [out]

    def _middle(self, before: str, line: str, after: str) -> str:
        if not self._redactor:
            return line
        start = len(before) + 1
        masked = [False] * len(line)
        for lo, hi in self._redactor.spans(before + "\n" + line + "\n" + after):
            for pos in range(max(lo, start), min(hi, start + len(line))):
                masked[pos - start] = True
        out, inside = [], False
        for char, hidden in zip(line, masked):
            if hidden and not inside:
                out.append(MASK)
            elif not hidden:
                out.append(char)
            inside = hidden
        return "".join(out)
