"""The RAG simulator (benchmarks/simulators.py) as a `kind: command` process: JSON lines on stdin/stdout.

`python benchmarks/simulated_rag_server.py [--latency 0.02] [--no-ids]`

Each request is answered `--latency` seconds after it arrived, with SimulatedTarget's
deterministic reply. With ids (the default) requests are answered concurrently, each reply
carrying its request's `id`, in whatever order they finish: one process serves as many
requests at once as rag-ci sends (a RAG server with async I/O). With `--no-ids` it answers
one request at a time, in order, without ids: rag-ci reads it in lock-step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: `benchmarks` from this tree

from benchmarks.simulators import SimulatedTarget


async def serve(latency_s: float, ids: bool) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout.buffer

    def answer(request: dict) -> None:
        reply = SimulatedTarget.reply(request)
        if ids:
            reply = {"id": request["id"], **reply}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()

    while line := await reader.readline():
        request = json.loads(line)
        if ids:
            loop.call_later(latency_s, answer, request)
        else:
            await asyncio.sleep(latency_s)
            answer(request)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--no-ids", action="store_true")
    args = parser.parse_args()
    asyncio.run(serve(args.latency, not args.no_ids))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
