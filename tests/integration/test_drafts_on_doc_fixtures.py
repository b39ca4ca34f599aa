"""`rag-ci questions generate --writer fake` on the documentation fixtures of four styles (a real
project's mkdocs docs, an mkdocs site, a Hugo site, a Sphinx reST project): the drafts carry no
template syntax, their references stand on their own, their keywords are distinctive terms
(issue 55). On the code before the fix, the Hugo site's drafts held a `{{< relref >}}` shortcode
and a pointer ("See the queues page."), and generic keywords (`single`, `page`, `project`)."""

from __future__ import annotations

import re
import shutil

import pytest
import yaml
from click.testing import CliRunner

from builders import REPO
from rag_ci.cli import cli
from rag_ci.core.questionset.distinctive import is_generic
from rag_ci.core.questionset.draft_checks import markup_in
from rag_ci.core.questionset.draft_text import STOP_WORDS
from rag_ci.core.questionset.reference_standalone import standalone_problem

pytestmark = pytest.mark.slow


def _distinctive(keyword: str) -> bool:
    if re.search(r"\d", keyword) or re.search(r"[A-Z_./:\[-]", keyword[1:]) or len(keyword.split()) > 1:
        return True
    return keyword.lower() not in STOP_WORDS and not is_generic(keyword)


@pytest.mark.parametrize("fixture", ["real_docs", "mkdocs_docs", "hugo_docs", "rst_docs"])
def test_fake_drafts_have_no_template_syntax_stand_on_their_own_and_have_distinctive_keywords(
    fixture, tmp_path
):
    project = shutil.copytree(REPO / "tests" / "fixtures" / fixture, tmp_path / fixture)
    result = CliRunner().invoke(
        cli,
        [
            "questions",
            "generate",
            "--config",
            str(project / "rag-ci.yml"),
            "--writer",
            "fake",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    drafts = [
        q for q in yaml.safe_load((project / "questions.yml").read_text())["questions"] if q.get("status")
    ]
    answered = [d for d in drafts if d.get("reference")]
    assert len(answered) >= 5, drafts
    text = yaml.safe_dump(drafts)
    assert not re.search(r"\{\{|\}\}|\{%|%\}", text)
    not_alone = [
        d["reference"] for d in answered if markup_in(d["reference"]) or standalone_problem(d["reference"])
    ]
    assert not_alone == []
    generic = [(d["id"], d["keywords"]) for d in answered if not all(map(_distinctive, d["keywords"]))]
    assert len(generic) <= 0.1 * len(answered), generic
