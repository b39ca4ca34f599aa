"""`rag-ci questions approve/reject` choose drafts without naming each (issue 55: a review of 31
drafts was 31 commands): --all, --tag, --corpus, --kind, alone or together, and ids beside them.
Each test failed before the fix (ids were required, and no option chose drafts)."""

from __future__ import annotations

from pathlib import Path

from test_review_cli import _invoke, _project, _set

DRAFTS = {"DU2-BATTERY-02", "DU2-BATTERY-03", "OOS-01"}


def _drafts_left(tmp_path: Path) -> set[str]:
    return {qid for qid, q in _set(tmp_path).items() if q.status == "draft"}


def test_approve_all_approves_every_draft_and_only_drafts(tmp_path: Path):
    config = _project(tmp_path)
    result = _invoke("questions", "approve", "--all", "--config", str(config), "--reviewer", "ana")
    assert result.exit_code == 0, result.output
    assert "3 approved (0 edited), 0 rejected, 0 still drafts" in result.output
    assert _drafts_left(tmp_path) == set()
    assert _set(tmp_path)["OOS-01"].provenance.reviewed_by == "ana"
    assert set(_set(tmp_path)) == {"DU2-BATTERY-01", *DRAFTS}


def test_reject_by_kind_removes_the_refusal_drafts_only(tmp_path: Path):
    config = _project(tmp_path)
    result = _invoke("questions", "reject", "--kind", "refusal", "--config", str(config))
    assert result.exit_code == 0, result.output
    assert "OOS-01" not in _set(tmp_path)
    assert _drafts_left(tmp_path) == {"DU2-BATTERY-02", "DU2-BATTERY-03"}


def test_filters_given_together_choose_the_drafts_matching_each(tmp_path: Path):
    config = _project(tmp_path)
    result = _invoke("questions", "approve", "--tag", "misspelt", "--corpus", "du2", "--config", str(config))
    assert result.exit_code == 0, result.output
    assert _drafts_left(tmp_path) == {"DU2-BATTERY-02", "OOS-01"}


def test_an_id_beside_a_filter_is_decided_too(tmp_path: Path):
    config = _project(tmp_path)
    result = _invoke("questions", "approve", "OOS-01", "--corpus", "du2", "--config", str(config))
    assert result.exit_code == 0, result.output
    assert _drafts_left(tmp_path) == set()


def test_a_filter_matching_no_draft_is_a_clear_error_and_changes_nothing(tmp_path: Path):
    config = _project(tmp_path)
    before = (tmp_path / "questions.yml").read_text()
    result = _invoke("questions", "approve", "--corpus", "du3", "--config", str(config))
    assert result.exit_code == 2
    assert "no draft matches --corpus du3 (3 drafts in the set)" in result.output
    assert (tmp_path / "questions.yml").read_text() == before


def test_nothing_named_is_a_clear_error(tmp_path: Path):
    config = _project(tmp_path)
    result = _invoke("questions", "reject", "--config", str(config))
    assert result.exit_code == 2
    assert "name the drafts: ID…, or --all, --tag TAG, --corpus CORPUS or --kind KIND" in result.output
