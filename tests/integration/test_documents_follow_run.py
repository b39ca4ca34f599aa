"""Questions follow their documents, on the example: a run fingerprints every cited document, a PR
that edits one shows its regressions as "source changed", validate warns about a removed one."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from builders import EXAMPLES
from rag_ci.cli import cli

pytestmark = pytest.mark.slow


def test_a_regression_after_its_document_changed_is_labelled_stale_and_still_gates(tmp_path):
    example = tmp_path / "ex"
    shutil.copytree(
        EXAMPLES, example, ignore=shutil.ignore_patterns("baseline", "out", ".index", "*.sqlite*", ".rag-ci*")
    )
    config = str(example / "rag-ci.yml")
    base = CliRunner().invoke(
        cli, ["run", "--config", config, "-o", str(tmp_path / "base.json"), "--no-progress"]
    )
    assert base.exit_code == 0, base.output
    recorded = json.loads((tmp_path / "base.json").read_text())
    assert set(recorded["meta"]["corpus_fingerprints"]) == {"du2", "du3"}
    charge = next(q for q in recorded["questions"] if q["id"] == "DU2-CHARGE-TIME")
    assert (
        list(charge["source_fingerprints"]) == ["du2/battery.md"]
        and charge["source_fingerprints"]["du2/battery.md"]
    )

    battery = example / "corpora" / "du2" / "docs" / "battery.md"
    battery.write_text(battery.read_text().replace("in 6.5 hours", "in 7 hours"))  # the PR edits the manual
    head = CliRunner().invoke(
        cli,
        [
            "run",
            "--config",
            config,
            "-o",
            str(tmp_path / "head.json"),
            "--baseline",
            str(tmp_path / "base.json"),
            "--no-progress",
            "--format",
            "json",
        ],
    )
    assert head.exit_code == 1, head.output  # it still gates
    report = json.loads(head.stdout)
    regression = next(r for r in report["regressions"] if r["id"] == "DU2-CHARGE-TIME")
    assert regression["source_changed"] == ["du2/battery.md"]
    assert all(
        r["source_changed"] == [] for r in report["regressions"] if "du2/battery.md" not in json.dumps(r)
    )
    markdown = CliRunner().invoke(cli, ["compare", str(tmp_path / "base.json"), str(tmp_path / "head.json")])
    # Its own stage: the right chunk came back with the new fact, so not "Retrieval"
    # and no "the chunk that held … was cut"; Next says what to do.
    assert "### Source changed (1)" in markdown.output and "### Retrieval" not in markdown.output
    row = next(line for line in markdown.output.splitlines() if line.startswith("| DU2-CHARGE-TIME |"))
    assert "du2/battery.md changed in this PR: the reference may be stale" in row and "was cut" not in row
    assert "update the reference or the document" in markdown.output

    (example / "corpora" / "du3" / "docs" / "can-bus.md").unlink()
    checked = CliRunner().invoke(cli, ["validate", "--config", config])
    assert checked.exit_code == 0
    assert (
        "warning: DU3-CAN cites du3/can-bus.md, which no document of corpus 'du3' matches" in checked.output
    )
    assert "warning: ADV-CAN cites du3/can-bus.md" in checked.output
