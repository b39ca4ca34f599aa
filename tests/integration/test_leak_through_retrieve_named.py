"""A routing leak through `target.retrieve`'s search call is said to come from it (issue 55: the
report said "leaked: contexts from other" and nothing of which call returned them, though the
fix is the search call's filter). A real http target (tests/fakes/split_api_rag.py), its
comment read as GitHub renders it (cmark-gfm). Failed before the fix."""

from __future__ import annotations

from click.testing import CliRunner
from test_api_mapping_retrieve import ANSWER, RETRIEVE, _project

from gfm import body_rows, rendered
from rag_ci.cli import cli


def test_a_leak_through_the_search_call_names_it(tmp_path):
    config = _project(tmp_path, ANSWER + RETRIEVE)
    base = tmp_path / "base.json"
    made = CliRunner().invoke(cli, ["run", "--config", str(config), "-o", str(base), "--no-progress"])
    assert made.exit_code == 0, made.output
    leaking = CliRunner().invoke(
        cli,
        ["run", "--config", str(config), "-o", str(tmp_path / "r.json"), "--baseline", str(base)]
        + ["--format", "md", "--no-progress"],
        env={"SPLIT_API_LEAK": "1"},
    )
    assert leaking.exit_code == 1, leaking.output
    md = leaking.output[leaking.output.index("## rag-ci:") :]
    [table] = [t for t in rendered(md).find_all("table") if "what leaked" in t.text()]
    assert {row[2] for row in body_rows(table)} == {
        "leaked: 1 context from other (through target.retrieve's search call)"
    }
