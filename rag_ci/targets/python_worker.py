"""The process behind `kind: python`: imports the user's `module:function` and answers
JSON-lines requests on stdin, one at a time, like a `kind: command` target.

The user's code runs here, not in rag-ci, so that it cannot end or block the run:
`SystemExit`, `KeyboardInterrupt` and any other exception become that question's
error, and a call that hangs is cut by killing this process (`timeout_s`).

Started by file path and written for the standard library only, so it needs nothing
of rag-ci and imports nothing the user's module could shadow: any Python 3 runs it,
and the one that does (the RAG's own venv in rag-ci's image, `target.python`, else
rag-ci's interpreter: targets/python.py) is the one whose packages the module sees.
Protocol, one JSON line each:
  out, once at start:  {"ready": true} or {"ready": false, "error": "..."} (then exit 2)
  in, per question:    the request {"id", "question", "corpora"}
  out, per question:   {"id", "reply": <what the function returned>} or {"id", "raised": "Type: message"}
"""

import os
import sys

# Run as a script, the interpreter put this file's folder (rag_ci/targets) first on sys.path,
# where http.py would shadow the standard library's http for the user's imports.
if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.dirname(os.path.realpath(__file__)):
    del sys.path[0]

import asyncio  # noqa: E402
import dataclasses  # noqa: E402
import importlib  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import signal  # noqa: E402


def _protocol_streams():
    """Keep the real stdin/stdout for the protocol; give user code stderr and an empty stdin.

    fd-level, so that a print, a C extension or a child process writing to fd 1
    lands in the stderr log instead of between two replies.
    """
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the process
    return requests, replies


def _load(entry, search_path):
    for folder in reversed(search_path):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    module_name, _, attr = entry.partition(":")
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:  # the user's import may fail in any way, even sys.exit()
        raise LookupError(f"target entry {entry}: cannot import {module_name}: {exc!r}") from None
    function = module
    for part in attr.split("."):
        function = getattr(function, part, None)
        if function is None:
            raise LookupError(f"target entry {entry}: {module_name} has no attribute {attr}")
    if not callable(function):
        raise LookupError(f"target entry {entry} is not callable")
    return function


def _plain(value):
    """JSON for the objects a RAG commonly returns besides dicts (pydantic, dataclasses, numpy)."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _send(replies, message):
    replies.write(json.dumps(message, ensure_ascii=False, default=_plain) + "\n")
    replies.flush()


def main(argv):
    # Ctrl-C is rag-ci's to handle: it stops this process when it stops the run.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests, replies = _protocol_streams()
    entry, search_path = argv[0], argv[1:]
    try:
        function = _load(entry, search_path)
    except LookupError as exc:
        _send(replies, {"ready": False, "error": str(exc)})
        return 2
    # One loop for the whole run: an async RAG's clients and pools stay bound to it.
    loop = asyncio.new_event_loop()
    _send(replies, {"ready": True})
    for line in requests:
        request = json.loads(line)
        try:
            reply = function(request)
            if inspect.isawaitable(reply):
                reply = loop.run_until_complete(reply)
            message = json.dumps({"id": request["id"], "reply": reply}, ensure_ascii=False, default=_plain)
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included: one question's error
            message = json.dumps({"id": request["id"], "raised": f"{type(exc).__name__}: {exc}"}, ensure_ascii=False)
        sys.stderr.flush()
        replies.write(message + "\n")
        replies.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
