"""The pages a newcomer reads first, as mkdocs builds them (issue 55): Getting started promises
the demo the demo is (a routing bug, not a chunking bug), How a run works opens with a diagram
that fits the page and says a flipped question is re-asked and re-judged, and Targets shows each
kind's reply and an app's own environment for every kind. Each failed on the pages before."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from builders import REPO

pytestmark = pytest.mark.slow
PAGE_COLUMNS = 100  # a code block wider than this is cut at the edge of the page (Material's width)


class _Text(HTMLParser):
    """The page's text, and the text of each <pre> block."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.pre: list[str] = []
        self._in_pre = 0

    def handle_starttag(self, tag, attrs):
        if tag == "pre":
            self._in_pre += 1
            self.pre.append("")

    def handle_endtag(self, tag):
        if tag == "pre":
            self._in_pre -= 1

    def handle_data(self, data):
        self.text.append(data)
        if self._in_pre:
            self.pre[-1] += data


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    assert mkdocs, "mkdocs is a dev dependency: pip install -e '.[dev]'"
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def _page(site: Path, name: str) -> _Text:
    parser = _Text()
    parser.feed((site / name / "index.html").read_text(encoding="utf-8"))
    return parser


def _words(parser: _Text) -> str:
    return " ".join("".join(parser.text).split())


def test_getting_started_promises_the_demo_the_demo_is(site):
    text = _words(_page(site, "getting-started"))
    demo = text[text.index("pipx run rag-ci-gate demo") :][:400]
    assert "routing" in demo and "chunking bug" not in demo  # before: "… again with a chunking bug"


def test_how_a_run_works_opens_with_a_diagram_that_fits_and_names_re_asks_and_re_judging(site):
    page = _page(site, "how-it-works")
    diagram = page.pre[0]
    assert "rag-ci.yml" in diagram and "compare" in diagram
    assert max(len(line) for line in diagram.splitlines()) <= PAGE_COLUMNS  # before: 118 columns
    text = _words(page)
    assert re.search(r"re-asked", text) and re.search(r"re-judged", text)


def test_targets_shows_each_kinds_reply_and_an_apps_own_environment(site):
    text = _words(_page(site, "targets"))
    assert "The reply, by kind." in text
    for kind in ("python", "command", "http", "docker"):
        assert re.search(rf"\b{kind}\b", text[text.index("The reply, by kind.") :][:1500]), kind
    assert "Your app's own environment, for every kind." in text
    assert ".venv-rag/bin/python" in text and ".venv-rag/bin/uvicorn" in text
