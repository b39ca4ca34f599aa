"""What a reviewer gets from `rag-ci questions generate --writer fake` on the repository's
documentation fixtures (tests/fixtures: a real project's mkdocs docs, an mkdocs site, a Hugo
site, a Sphinx reST project, a real Docusaurus site's MDX, a real Sphinx project's MyST
Markdown): per fixture, the drafts kept, the drafts whose question or reference holds template,
MDX or MyST syntax, the share of references that do not stand on their own (markup
left, a lead-in, a pointer, a subject named elsewhere: rag_ci.core.questionset.draft_checks),
and the share of drafts whose keywords are all distinctive terms (numbers, codes, names,
identifiers, or words neither generic nor adverbs: rag_ci.core.questionset.distinctive; never
markup such as `{/*`).
The targets of issue 55: no template syntax, < 5 % not standing alone, ≥ 90 % distinctive.

The rules it counts with are the rules the drafts pass through, so on this checkout they count
what slipped past them (a rule a draft escaped); run with `--source` on another checkout for a
before/after. `python -m benchmarks.draft_quality [--source DIR]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from rag_ci.core.questionset.distinctive import is_generic
from rag_ci.core.questionset.draft_checks import MDX_OR_MYST, markup_in
from rag_ci.core.questionset.draft_text import STOP_WORDS
from rag_ci.core.questionset.reference_standalone import standalone_problem
from rag_ci.core.questionset.template_syntax import ANY_TEMPLATE_SYNTAX

REPO = Path(__file__).resolve().parents[1]
FIXTURES = ("real_docs", "mkdocs_docs", "hugo_docs", "rst_docs", "mdx_docs", "myst_docs")


def distinctive(keyword: str) -> bool:
    """A number, a code or identifier, a name of several words, or a word neither generic nor stop;
    never markup (`{/*`, `x <target>`)."""
    if not re.search(r"[^\W_]", keyword) or re.search(r"[{}`]|\s<\w+\.[\w.]+>$", keyword):
        return False
    if re.search(r"\d", keyword) or re.search(r"[A-Z_./-]", keyword[1:]) or len(keyword.split()) > 1:
        return True
    return keyword.lower() not in STOP_WORDS and not is_generic(keyword)


def _drafts(fixture: Path, source: Path, folder: Path) -> list[dict[str, Any]]:
    project = shutil.copytree(fixture, folder / fixture.name)
    env = {**os.environ, "PYTHONPATH": str(source), "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}
    command = [sys.executable, "-c", "from rag_ci.cli.__main__ import main; main()"]
    args = ["questions", "generate", "--writer", "fake", "--no-progress"]
    done = subprocess.run(
        [*command, *args], cwd=project, env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(f"{fixture.name}: generate exited {done.returncode}: {done.stderr[-2000:]}")
    data = yaml.safe_load((project / "questions.yml").read_text(encoding="utf-8")) or {}
    return [q for q in data.get("questions") or [] if q.get("status") == "draft"]


def _syntax_leak(text: str) -> bool:
    """Template syntax, or MDX/MyST syntax outside inline code (a reference may quote `{/*`)."""
    return bool(ANY_TEMPLATE_SYNTAX.search(text) or MDX_OR_MYST.search(re.sub(r"`[^`\n]+`", "`code`", text)))


def measure(drafts: list[dict[str, Any]]) -> dict[str, Any]:
    answered = [d for d in drafts if d.get("reference")]
    templated = [
        d["id"]
        for d in drafts
        if _syntax_leak(f"{d['question']}\n{d.get('reference') or ''}")
        or any(_syntax_leak(k) or not re.search(r"[^\W_]", k) for k in d.get("keywords") or [])
    ]
    alone = [
        (d["id"], d["reference"])
        for d in answered
        if markup_in(d["reference"]) or standalone_problem(d["reference"])
    ]
    generic = [
        (d["id"], d.get("keywords")) for d in answered if not all(map(distinctive, d.get("keywords") or []))
    ]
    n = max(1, len(answered))
    return {
        "drafts": len(drafts),
        "with_reference": len(answered),
        "template_syntax": len(templated),
        "not_standing_alone_share": len(alone) / n,
        "distinctive_keywords_share": 1 - len(generic) / n,
        "not_standing_alone": alone[:10],
        "generic_keywords": generic[:10],
    }


def draft_quality(source: Path = REPO) -> dict[str, Any]:
    out = {}
    with tempfile.TemporaryDirectory(prefix="rag-ci-drafts-") as tmp:
        for name in FIXTURES:
            out[name] = measure(_drafts(REPO / "tests" / "fixtures" / name, source, Path(tmp)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.draft_quality")
    parser.add_argument("--source", type=Path, default=REPO, help="the checkout whose rag-ci drafts")
    print(json.dumps(draft_quality(parser.parse_args(argv).source), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
