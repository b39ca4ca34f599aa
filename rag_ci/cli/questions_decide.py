"""`rag-ci questions approve` and `reject`: decide on drafts named by id, or on every draft, or
on those of a tag, a corpus or a kind (rag_ci.core.review.draft_selection), applied at once
like the review page's export (rag_ci.cli.questions_review.decide)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from rag_ci.cli.errors import user_errors
from rag_ci.cli.questions_review import config_option, decide, questions_option, reviewer_option


def _selection(verb: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """ID… and the filters that choose drafts without naming them."""

    def apply(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(
            (
                click.argument("ids", nargs=-1, metavar="[ID…]"),
                click.option("--all", "every", is_flag=True, help=f"{verb} every draft of the set."),
                click.option(
                    "--tag", "tags", multiple=True, metavar="TAG", help="Drafts with this tag (repeat: any)."
                ),
                click.option(
                    "--corpus",
                    "corpora",
                    multiple=True,
                    metavar="CORPUS",
                    help="Drafts routed to this corpus (repeat: any).",
                ),
                click.option(
                    "--kind",
                    type=click.Choice(["answer", "refusal"]),
                    help="Drafts that expect an answer, or a refusal.",
                ),
            )
        ):
            command = option(command)
        return command

    return apply


def _filter(every: bool, tags: tuple[str, ...], corpora: tuple[str, ...], kind: str | None) -> Any:
    from rag_ci.core.review.draft_selection import DraftFilter

    return DraftFilter(every=every, tags=tags, corpora=corpora, kind=kind)


@click.command("approve")
@_selection("Approve")
@reviewer_option
@config_option
@questions_option
@user_errors
def approve(
    ids: tuple[str, ...],
    every: bool,
    tags: tuple[str, ...],
    corpora: tuple[str, ...],
    kind: str | None,
    reviewer: str | None,
    config_path: Path,
    questions_path: Path | None,
) -> None:
    """Approve drafts as they are: they lose `status: draft` and join the gated set. Name them
    (ID…), or choose them: --all, --tag, --corpus, --kind (given together: drafts matching each)."""
    chosen = _filter(every, tags, corpora, kind)
    decide(config_path, questions_path, ids, "approve", reviewer, chosen=chosen)


@click.command("reject")
@_selection("Reject")
@config_option
@questions_option
@user_errors
def reject(
    ids: tuple[str, ...],
    every: bool,
    tags: tuple[str, ...],
    corpora: tuple[str, ...],
    kind: str | None,
    config_path: Path,
    questions_path: Path | None,
) -> None:
    """Remove drafts from the question set (their own lines and comments only). Name them (ID…),
    or choose them: --all, --tag, --corpus, --kind (given together: drafts matching each)."""
    decide(config_path, questions_path, ids, "reject", None, chosen=_filter(every, tags, corpora, kind))
