"""A credential as a value that cannot leak by accident: the action's settings hold the
GitHub token and the judge keys as `Secret`, and the GitHub adapter takes one."""

from __future__ import annotations

from typing import Any


class Secret:
    """A credential. `str()`/`repr()` give '***'; only `reveal()` gives the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return "Secret('***')" if self._value else "Secret('')"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # pickling would write the value somewhere
        raise TypeError("a Secret cannot be pickled")
