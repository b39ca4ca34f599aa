"""A fake `kind: python` RAG whose function misbehaves on purpose, chosen by the question text:
  "exit zero" raises SystemExit(0), "interrupt" raises KeyboardInterrupt,
  "hang" never returns, "chatty" prints to stdout before answering,
  "deep" answers with a list nested 200,000 deep, "deep line" writes such a line on stdout first,
  "nested" answers with a list nested 150 deep (encodable, deeper than rag-ci reads).
Otherwise it answers like tiny_rag. `answer_async` is the same as a coroutine function.
"""

import asyncio
import threading

import tiny_rag

_LOOP_OF_FIRST_CALL = []  # an async client is bound to one event loop: it must stay the same


def answer(request):
    question = request["question"].lower()
    if "exit zero" in question:
        raise SystemExit(0)
    if "interrupt" in question:
        raise KeyboardInterrupt
    if "hang" in question:
        threading.Event().wait()
    if "deep line" in question:
        import os

        os.write(1, b"[" * 200_000 + b"]" * 200_000 + b"\n")
    elif "deep" in question or "nested" in question:
        nested = []
        for _ in range(200_000 if "deep" in question else 150):
            nested = [nested]
        return {**tiny_rag.answer(request), "extra": nested}
    if "chatty" in question:
        print("DEBUG: loaded model")
    return tiny_rag.answer(request)


async def answer_async(request):
    loop = asyncio.get_running_loop()
    _LOOP_OF_FIRST_CALL.append(loop)
    if _LOOP_OF_FIRST_CALL[0] is not loop:
        raise RuntimeError("called on another event loop than the first call")
    await asyncio.sleep(0)
    return answer(request)
