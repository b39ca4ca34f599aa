"""Text rag-ci did not write, made inert before it is printed where a CI runner parses it.

The GitHub Actions runner reads a step's output line by line and obeys workflow commands
in it: a line that starts with `::` (after leading spaces: `::stop-commands::TOKEN`,
`::add-mask::`, `::error::`), and, in the legacy form, `##[command]` *anywhere* in a line
(`##[set-output name=verdict]pass`). It also ends a line at a bare carriage return, so
`ok\\r::warning::x` is two lines to it, the second a command.

Much of what rag-ci prints is not its own: build-step output and the build steps
themselves (rag-ci.yml is the pull request's), question ids, policy values, paths, error
messages and output tails of the target. `neutralise` is the one function every such
print goes through (rag_ci.github.workflow.Runner, the engine, the targets, the CLI):

- a bare CR is shown as `\\r`, and `\\r\\n` becomes `\\n`: only LF breaks a line;
- other control characters (NUL, backspace, ...; not tab, LF or ESC) are shown as `\\xNN`;
- a line whose first non-blank characters are `::` gets `:\\:` instead;
- every `##[` becomes `#\\#[`.

The changes are visible on purpose (a reader sees the text was altered), and rag-ci's own
workflow commands never go through it (rag_ci.github.workflow escapes their data the way
the runner unescapes it).
"""

from __future__ import annotations

import re

_BARE_CR = re.compile(r"\r(?!\n)")
# C0 controls and DEL, except tab, line feed, carriage return (handled above) and ESC
# (terminal colours, harmless to the runner).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")
# The runner trims every Unicode space (.NET String.Trim) before looking for `::`.
_COMMAND_AT_LINE_START = re.compile(r"^([^\S\n]*):(?=:)", re.MULTILINE)
_LEGACY_COMMAND = "##["


def neutralise(text: str) -> str:
    """`text` with nothing the Actions runner would read as a workflow command."""
    if not text:
        return text
    text = text.replace("\r\n", "\n")
    text = _BARE_CR.sub(r"\\r", text)
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    text = _COMMAND_AT_LINE_START.sub(lambda m: m.group(1) + ":\\", text)
    return text.replace(_LEGACY_COMMAND, "#\\#[")
