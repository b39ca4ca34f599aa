"""`LeanModel`: a pydantic model that does not keep pydantic's "fields set" per object.

pydantic records, on every object it builds, the set of field names its input named (and
adds to it on assignment and `model_copy`); only `exclude_unset` reads it, and no code uses
that on questions or results. Kept per object it was half the memory of a loaded
results.json (a set of ~14 names per metric, per context and per question: 50,000 questions
took 0.7 GiB for it alone), and ~730 bytes per question of a question set. Every lean
object shares one set that keeps nothing instead.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class _NothingKept(set[str]):
    """A "fields set" that stays empty: what pydantic adds to it is dropped, and its copies are itself."""

    def add(self, _name: object) -> None:
        pass

    def update(self, *_names: object) -> None:
        pass

    def __copy__(self) -> _NothingKept:
        return self

    def __deepcopy__(self, _memo: object) -> _NothingKept:
        return self


_FIELDS_SET_NOT_KEPT = _NothingKept()


class LeanModel(BaseModel):
    def model_post_init(self, context: Any, /) -> None:
        object.__setattr__(self, "__pydantic_fields_set__", _FIELDS_SET_NOT_KEPT)
