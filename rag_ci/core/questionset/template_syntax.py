"""Template syntax in documentation sources: Hugo shortcodes (`{{< relref "x.md" >}}`,
`{{% notice %}}`), Jinja/Liquid tags (`{% include note.html %}`) and expressions
(`{{ .Site.Params.cmd }}`, `{{ version }}`). A site generator replaces them before anyone reads
the page, so a draft must never quote them (issue 55: Hugo shortcodes stayed in references).

- `without_template_tags`: tags that wrap or place content are removed, their content kept; a
  link whose target is a shortcode (`[the ports page]({{< relref "ports.md" >}})`) keeps its text;
- `TEMPLATE_EXPRESSION`: what remains, an expression standing for words only the site knows: a
  block holding one is not prose a reference can quote (rag_ci.core.questionset.doc_blocks drops
  it), and a reference holding any template syntax is dropped (.draft_checks), whichever writer
  wrote it.

Pure.
"""

from __future__ import annotations

import re

_SHORTCODE = r"\{\{[<%].*?[%>]\}\}"
_LINK_TO_SHORTCODE = re.compile(r"\[([^\]\n]+)\]\(\s*" + _SHORTCODE + r"\s*\)")
_TAGS = re.compile(_SHORTCODE + r"|\{%-?.*?-?%\}")
TEMPLATE_EXPRESSION = re.compile(r"\{\{-?\s*[^{}\n]*?\s*-?\}\}")
ANY_TEMPLATE_SYNTAX = re.compile(r"\{\{|\}\}|\{%|%\}")


def without_template_tags(text: str) -> str:
    """`text` without shortcodes and template tags (their content kept), links to a shortcode as
    their text; template expressions (`{{ x }}`) are left for the caller to refuse."""
    if "{" not in text:
        return text
    text = _LINK_TO_SHORTCODE.sub(r"\1", text)
    return _TAGS.sub("", text)
