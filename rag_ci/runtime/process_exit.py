"""Ending the `rag-ci` process: its exit code, without the interpreter's teardown.

A judged run has imported DeepEval, its provider SDK and pydantic models by the
thousand; after `main` has returned, freeing every module, object and class one by one
(and collecting the cycles among them) takes most of a second of CPU that changes
nothing: the process is about to end. So once `main` is done and everything is written
(results.json and every report are written, fsynced and closed before `main` returns), the
`atexit` handlers are run (they flush what others registered: logging, coverage data,
thread pools), the standard streams are flushed, and the process ends with `os._exit` and
the same exit code. Only the processes' entry points call this; `main` itself returns
its code, so tests and embedders calling it in-process are untouched.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn


def exit_process(code: int | None) -> NoReturn:
    """`sys.exit(code)`, minus the interpreter's teardown (see the module's docstring)."""
    code = 0 if code is None else code
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)  # CPython's; elsewhere: the ordinary exit
    if run_exit_handlers is None or not isinstance(code, int):
        sys.exit(code)
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe (`rag-ci ... | head`), a closed stream
            if stream is sys.stdout:
                code = code or 120  # what Python's own exit does when stdout cannot be flushed
    os._exit(code)
