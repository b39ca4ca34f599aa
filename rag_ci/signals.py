"""A cancelled CI job sends SIGTERM; treat it like Ctrl-C so targets are cleaned up.

Without this, Python dies on SIGTERM without running `finally` blocks, leaving
the target's container or server process behind.
"""

from __future__ import annotations

import signal


def _interrupt(signum, frame):  # noqa: ARG001 - signal handler signature
    raise KeyboardInterrupt(f"signal {signum}")


def terminate_like_interrupt() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
