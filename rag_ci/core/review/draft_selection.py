"""Which drafts `rag-ci questions approve` / `reject` decide on: ids, or every draft, or those of
a tag, a corpus or a kind (issue 55: a review of 31 drafts was 31 commands). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


class DraftLike(Protocol):
    @property
    def tags(self) -> tuple[str, ...]: ...

    @property
    def doc_id(self) -> tuple[str, ...]: ...

    @property
    def expect(self) -> str: ...


@dataclass(frozen=True)
class DraftFilter:
    """Every draft (`every`), narrowed by each filter given: any of `tags`, any of `corpora`, `kind`."""

    every: bool = False
    tags: tuple[str, ...] = ()
    corpora: tuple[str, ...] = ()
    kind: str | None = None  # the draft's `expect`: answer or refusal

    @property
    def given(self) -> bool:
        return self.every or bool(self.tags or self.corpora or self.kind)

    def matches(self, draft: DraftLike) -> bool:
        return (
            (not self.tags or bool(set(self.tags) & set(draft.tags)))
            and (not self.corpora or bool(set(self.corpora) & set(draft.doc_id)))
            and (self.kind is None or draft.expect == self.kind)
        )

    def describe(self) -> str:
        parts = [f"--tag {t}" for t in self.tags] + [f"--corpus {c}" for c in self.corpora]
        parts += [f"--kind {self.kind}"] if self.kind else []
        return " ".join(parts) or "--all"


def select_drafts(ids: Sequence[str], chosen: DraftFilter, drafts: Mapping[str, DraftLike]) -> list[str]:
    """The ids named, then the drafts the filter matches, each once, in the set's order for the
    latter. Raises ValueError with what to do when nothing is asked for or the filter matches none
    (an unknown id is the caller's to report: it names the set)."""
    if not ids and not chosen.given:
        raise ValueError("name the drafts: ID…, or --all, --tag TAG, --corpus CORPUS or --kind KIND")
    matched = [qid for qid, draft in drafts.items() if chosen.matches(draft)] if chosen.given else []
    if chosen.given and not matched:
        raise ValueError(f"no draft matches {chosen.describe()} ({len(drafts)} drafts in the set)")
    return list(dict.fromkeys([*ids, *matched]))
