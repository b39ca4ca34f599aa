"""What a target process writes on stdout, as lines read as they arrive (command.py, by_id.py, python.py)."""

from __future__ import annotations

import asyncio
from collections import deque

LINE_LIMIT = 64 * 1024 * 1024  # replies with many contexts can be long
_EOF = b""
STDOUT_RULE = "stdout is for replies only: write logs to stderr"


class _Lines:
    """Lines a process wrote to stdout, read as they arrive (so a stray one can be seen
    before the next request goes out). `b""` marks the end of the stream."""

    def __init__(self) -> None:
        self._items: deque[bytes | ValueError] = deque()
        self._arrived = asyncio.Event()

    def put(self, item: bytes | ValueError) -> None:
        self._items.append(item)
        self._arrived.set()

    async def get(self) -> bytes | ValueError:
        while not self._items:
            self._arrived.clear()
            await self._arrived.wait()
        return self._items.popleft()

    async def wait_for_more(self, timeout_s: float) -> None:
        """Until a line is pending or `timeout_s` passed, whichever is first."""
        if self._items:
            return
        self._arrived.clear()
        try:
            await asyncio.wait_for(self._arrived.wait(), timeout_s)
        except TimeoutError:
            pass

    def stray(self) -> bytes | ValueError | None:
        """The first pending line that is not the end of the stream, if any."""
        return next((item for item in self._items if item != _EOF), None)

    def take_pending(self) -> list[bytes | ValueError]:
        """Every pending line but the end of the stream, removed."""
        taken = [item for item in self._items if item != _EOF]
        self._items = deque(item for item in self._items if item == _EOF)
        return taken

    def ended(self) -> bool:
        return _EOF in self._items

    async def follow(self, stream: asyncio.StreamReader) -> None:
        try:
            while True:
                line = await stream.readline()
                self.put(line)
                if not line:
                    return
        except ValueError as exc:  # a line longer than the limit
            self.put(exc)


def shown(line: bytes | ValueError) -> str:
    if isinstance(line, ValueError):
        return f"a line longer than {LINE_LIMIT} bytes"
    return repr(line[:200].decode("utf-8", "replace").rstrip("\n"))
