"""How every command ends on a problem the user can fix: exit code 2, one clean line.

1 is reserved for a failed gate (a regression), so unusable input never exits 1.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import click

from rag_ci.core.base.text import visible_controls
from rag_ci.errors import RagCiError
from rag_ci.safety.logsafe import neutralise

EXIT_CODES = """\b
Exit codes:
  0  success; no regression against the baseline
  1  the gate fails: a regression, a question that got worse, a routing leak
  2  unusable input: invalid config or question set, missing/corrupt/
     incompatible/broken baseline, target that cannot be built or started,
     a broken run (more errors than gate.max_error_rate allows);
     or an environment error: output not writable, disk full, another
     run writing the same output
  130/143  interrupted (Ctrl-C / SIGTERM): continue with --resume
"""

# `validate` calls nothing and compares nothing: no regression, no interruption to resume.
VALIDATE_EXIT_CODES = """\b
Exit codes:
  0  the config, the question set and the routing are valid
  2  they are not: each problem is printed with its file and line
"""

F = TypeVar("F", bound=Callable)


class UserError(click.ClickException):
    """A problem the user can fix; exit code 2 (1 is reserved for regressions)."""

    exit_code = 2

    def format_message(self) -> str:
        # Error messages quote what the user (or a pull request) wrote: ids, paths, values.
        # At a terminal they must not carry live escape sequences either.
        return visible_controls(neutralise(self.message))


def user_errors(func: F) -> F:
    """Turn RagCiError into a clean message and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except RagCiError as exc:
            raise UserError(str(exc)) from None

    return wrapper  # type: ignore[return-value]
