"""`kind: python`: call `module:function` in-process with the request dict."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rag_ci.errors import RagCiError, TargetError


class PythonTarget:
    def __init__(self, entry: str, *, search_path: list[Path]):
        self.entry = entry
        self.search_path = search_path
        self._function: Callable[[dict[str, Any]], Any] | None = None
        self._last_error = ""

    async def start(self) -> None:
        module_name, _, attr = self.entry.partition(":")
        for folder in reversed(self.search_path):
            if str(folder) not in sys.path:
                sys.path.insert(0, str(folder))
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # the user's import may fail in any way
            raise RagCiError(f"target entry {self.entry}: cannot import {module_name}: {exc!r}") from exc
        function: Any = module
        for part in attr.split("."):
            function = getattr(function, part, None)
            if function is None:
                raise RagCiError(f"target entry {self.entry}: {module_name} has no attribute {attr}")
        if not callable(function):
            raise RagCiError(f"target entry {self.entry} is not callable")
        self._function = function

    async def query(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self._function is not None, "target not started"
        try:
            if inspect.iscoroutinefunction(self._function):
                reply = await self._function(request)
            else:
                # A sync RAG call must not block the event loop (other questions, the judge).
                reply = await asyncio.to_thread(self._function, request)
                if inspect.isawaitable(reply):
                    reply = await reply
        except Exception as exc:
            self._last_error = f"{type(exc).__name__}: {exc}"
            raise TargetError(f"target raised {type(exc).__name__}: {exc}") from exc
        return reply

    async def stop(self) -> None:
        self._function = None

    def diagnostics(self) -> str:
        return self._last_error
