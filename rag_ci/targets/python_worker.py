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
  in, per question:    {"nonce": "<random>", "request": {"id", "question", "corpora"}}
  out, per question:   {"nonce", "reply": <what the function returned>} or {"nonce", "raised": "Type: message"}

The user's code shares this process, so it can find the reply channel and write on it.
What it writes there answers nothing: rag-ci takes only the line that carries the nonce
of the request in flight, which it chose at random when it sent the request (a forged
line for that request is no more than what the function could have returned). And what
the module does to the interpreter (replacing builtins, json's functions, sys.modules
entries) cannot break this loop: everything it uses is bound before the import, and the
builtins it replaced are swapped out around the worker's own code.
"""

import os
import sys

# Run as a script, the interpreter put this file's folder (rag_ci/targets) first on sys.path,
# where http.py would shadow the standard library's http for the user's imports.
if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.dirname(os.path.realpath(__file__)):
    del sys.path[0]

import asyncio
import builtins
import dataclasses
import importlib
import inspect
import json
import signal


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


def _load(entry, search_path, saved):
    for folder in reversed(search_path):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    module_name, _, attr = entry.partition(":")
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:  # the user's import may fail in any way, even sys.exit()
        saved.worker()
        raise LookupError(f"target entry {entry}: cannot import {module_name}: {exc!r}") from None
    saved.worker()  # the builtins the module may have replaced are its own, from here on
    function = module
    for part in attr.split("."):
        function = getattr(function, part, None)
        if function is None:
            raise LookupError(f"target entry {entry}: {module_name} has no attribute {attr}")
    if not callable(function):
        raise LookupError(f"target entry {entry} is not callable")
    return function


def _plain(
    value,
    _hasattr=hasattr,
    _isinstance=isinstance,
    _is_dataclass=dataclasses.is_dataclass,
    _asdict=dataclasses.asdict,
    _type=type,
    _error=TypeError,
):
    """JSON for the objects a RAG commonly returns besides dicts (pydantic, dataclasses, numpy).
    What it uses is bound when this file is read: the user's module cannot replace it."""
    if _hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if _is_dataclass(value) and not _isinstance(value, _type):
        return _asdict(value)
    if _hasattr(value, "tolist"):
        return value.tolist()
    raise _error(f"{_type(value).__name__} is not JSON serializable")


def _private_encoder():
    """A JSON encoder made of json's parts as they are now, before the user's module runs:
    `json.JSONEncoder(...).encode` looks up `iterencode`, `c_make_encoder` and the string
    escapers at every call, so a function that replaced them (inside this process) made
    every later message, its own exception included, whatever it wanted (issue 34)."""
    import json.encoder as parts

    make_c, make_python = parts.c_make_encoder, parts._make_iterencode
    escape, float_repr, infinity, join = parts.encode_basestring, float.__repr__, float("inf"), "".join

    def floatstr(number):
        if number != number:
            return "NaN"
        if number == infinity or number == -infinity:
            return "Infinity" if number > 0 else "-Infinity"
        return float_repr(number)

    def encode(message):
        if make_c is not None:
            return join(make_c({}, _plain, escape, None, ": ", ", ", False, False, True)(message, 0))
        return join(
            make_python({}, _plain, escape, None, floatstr, ": ", ", ", False, False, True)(message, 0)
        )

    return encode


class _Builtins:
    """The builtins as they were before the user's module ran, and as that module left them:
    the worker's code runs with the first, the user's function with the second."""

    def __init__(self):
        self.space = vars(builtins)
        self.pristine = dict(self.space)
        self.users = self.pristine

    def worker(self):
        self.users = dict(self.space)
        self.space.update(self.pristine)

    def user(self):
        self.space.update(self.users)


def main(argv):
    # Ctrl-C is rag-ci's to handle: it stops this process when it stops the run.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests, replies = _protocol_streams()
    # Bound before the import: the module cannot replace what this loop uses.
    encode = _private_encoder()
    decode = json.JSONDecoder().decode
    isawaitable = inspect.isawaitable
    text, kind, catchable = str, type, BaseException
    # Written by hand, in case even the reply cannot be encoded: no user text in it.
    unencodable = '{"nonce": "%s", "raised": "rag-ci worker: the reply could not be encoded%s"}\n'
    too_deep = RecursionError

    def described(exc):
        try:
            return f"{kind(exc).__name__}: {exc}"
        except catchable:  # an exception whose str() raises
            return f"{kind(exc).__name__} (its message could not be read)"

    def send(message, nonce=""):
        try:
            line = encode(message) + "\n"
        except catchable as exc:  # a reply the encoder cannot take, or an encoder the module broke
            line = unencodable % (nonce, " (nested too deeply)" if kind(exc) is too_deep else "")
        replies.write(line)
        replies.flush()

    def as_user(call, *args):
        """`call(*args)` with the module's builtins: (result, None) or (None, what it raised)."""
        saved.user()
        try:
            return call(*args), None
        except catchable as exc:  # SystemExit and KeyboardInterrupt included: one question's error
            return None, exc
        finally:
            saved.worker()

    # One loop for the whole run, made before the import: an async RAG's clients and pools
    # stay bound to it, and a module that empties sys.modules cannot keep it from being made.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    entry, search_path = argv[0], argv[1:]
    saved = _Builtins()
    try:
        function = _load(entry, search_path, saved)
    except LookupError as exc:
        send({"ready": False, "error": text(exc)})
        return 2
    send({"ready": True})
    for line in requests:
        try:
            message = decode(line.decode("utf-8"))
            nonce, request = message["nonce"], message["request"]
        except catchable:  # not a request from rag-ci: nobody waits for its answer
            continue
        reply, error = as_user(function, request)
        if error is None and isawaitable(reply):
            reply, error = as_user(loop.run_until_complete, reply)
        try:
            sys.stderr.flush()
        except catchable:  # the module may have replaced sys.stderr
            pass
        send(
            {"nonce": nonce, "raised": described(error)}
            if error is not None
            else {"nonce": nonce, "reply": reply},
            nonce,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
