"""Interrupts: a cancelled CI job (SIGTERM, or SIGINT first) and Ctrl-C end a run cleanly.

Without a handler Python dies on SIGTERM without running `finally` blocks, leaving the
target's container or server process behind. SIGTERM is therefore handled like SIGINT:
inside `asyncio.run`, by asyncio's own SIGINT handler (it cancels the run, so every
`finally` stops what it started and the resume journal is closed), elsewhere by raising
KeyboardInterrupt. Each face's `main` then ends with `interrupted()`: one line, and exit
128 + the signal's number (130 for SIGINT, 143 for SIGTERM), never 1, which means "regression".
"""

from __future__ import annotations

import signal
import sys

# The first interrupting signal received, for the exit code; None: SIGINT (Python's own
# handler, which asyncio.run needs to see unchanged to take over, records nothing).
_received: int | None = None


def _interrupt(signum, frame):  # signal handler signature
    global _received
    _received = _received or signum
    on_sigint = signal.getsignal(signal.SIGINT)
    if callable(on_sigint) and on_sigint is not signal.default_int_handler:
        on_sigint(signum, frame)  # asyncio.run's: cancels the main task, raises on a second signal
        return
    raise KeyboardInterrupt(f"signal {signum}")


def terminate_like_interrupt() -> None:
    signal.signal(signal.SIGTERM, _interrupt)


def interrupted_signal() -> signal.Signals:
    return signal.Signals(_received or signal.SIGINT)


def interrupt_exit_code() -> int:
    return 128 + interrupted_signal()


def interrupted(what: str = "a `rag-ci run` continues where it stopped with --resume") -> int:
    """Say that the run was interrupted, on stderr, and return the exit code for it."""
    print(f"rag-ci: interrupted by {interrupted_signal().name}; {what}", file=sys.stderr, flush=True)
    return interrupt_exit_code()
