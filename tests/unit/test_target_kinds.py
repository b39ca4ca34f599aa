"""One target kind, one class: every kind of the config (rag_ci.core.config.TARGET_CONFIGS) has
its description (and the name messages give it), its runner and its `rag-ci init` block, and nothing else has one."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rag_ci.cli import cli
from rag_ci.cli.errors import UserError
from rag_ci.cli.init import Corpus, render_config
from rag_ci.cli.init_targets import TARGET_TEMPLATES, default_settings, kinds_question
from rag_ci.core.config import TARGET_CONFIGS, Config, parse_config
from rag_ci.targets import TARGET_KINDS, describe_target

# What `init` writes without asking, for a repository that suggests port 8000.
SETTINGS = default_settings(8000)


def test_every_kind_has_a_runner_and_an_init_block_and_nothing_else_has_one():
    assert set(TARGET_KINDS) == set(TARGET_CONFIGS)
    assert set(TARGET_TEMPLATES) == set(TARGET_CONFIGS)


@pytest.mark.parametrize("kind", list(TARGET_CONFIGS))
def test_every_kind_carries_its_description_and_init_asks_with_it(kind):
    config = TARGET_CONFIGS[kind]
    assert config.summary.strip() and config.model_fields["kind"].description.startswith(f"`{kind}`: ")
    assert f"{kind} ({config.summary})" in kinds_question()
    assert kind in Config.model_fields["target"].description


@pytest.mark.parametrize("kind", list(TARGET_CONFIGS))
def test_init_writes_a_block_of_each_kind_that_parses_as_that_kind(kind):
    text = render_config([Corpus("manual", "docs/manual", 1)], kind, SETTINGS)
    target = parse_config(text, "rag-ci.yml").target
    assert type(target) is TARGET_CONFIGS[kind]
    assert describe_target(target).startswith(f"{kind} ")  # how messages name it, said by the class


def test_an_unknown_kind_is_refused_never_written_as_another_kind():
    with pytest.raises(UserError, match=r"unknown target kind 'grpc'.*python, command, http, docker"):
        render_config([Corpus("manual", "docs/manual", 1)], "grpc", SETTINGS)


def test_init_offers_exactly_the_kinds(tmp_path: Path):
    (tmp_path / "docs" / "a").mkdir(parents=True)
    (tmp_path / "docs" / "a" / "guide.md").write_text("# a\n\nThe unit charges in 6.5 hours.\n")
    done = CliRunner().invoke(cli, ["init", str(tmp_path), "--no-workflows", "--target", "grpc", "--yes"])
    assert done.exit_code != 0 and "'grpc' is not one of 'python', 'command', 'http', 'docker'" in done.output
    assert not (tmp_path / "rag-ci.yml").exists()


@pytest.mark.parametrize("kind", list(TARGET_CONFIGS))
def test_init_asks_for_each_kind_its_settings_and_writes_that_kind(kind, tmp_path: Path):
    (tmp_path / "docs" / "a").mkdir(parents=True)
    (tmp_path / "docs" / "a" / "guide.md").write_text("# a\n\nThe unit charges in 6.5 hours.\n")
    asks = TARGET_TEMPLATES[kind].asks
    done = CliRunner().invoke(
        cli, ["init", str(tmp_path), "--no-workflows"], input=kind + "\n" * (len(asks) + 1)
    )
    assert done.exit_code == 0, done.output
    for _setting, question, _default in asks:
        assert question in done.output
    target = parse_config((tmp_path / "rag-ci.yml").read_text(), "rag-ci.yml").target
    assert type(target) is TARGET_CONFIGS[kind]
