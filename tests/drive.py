"""Drive a target the way the engine does, for the target tests: start it, send each
request in turn, stop it, and hand back every reply or error in order."""

from __future__ import annotations

import asyncio

from rag_ci.errors import TargetError


def replay(target, *steps, wait_s: float = 5):
    """Start, query each request (a number is a pause in seconds), stop: replies, or the
    TargetError / asyncio.TimeoutError (after `wait_s`) each request ended with."""

    async def go():
        await target.start()
        try:
            results = []
            for step in steps:
                if isinstance(step, (int, float)):
                    await asyncio.sleep(step)
                    continue
                try:
                    results.append(await asyncio.wait_for(target.query(step), wait_s))
                except (TargetError, asyncio.TimeoutError) as exc:
                    results.append(exc)
            return results
        finally:
            await target.stop()

    return asyncio.run(go())
