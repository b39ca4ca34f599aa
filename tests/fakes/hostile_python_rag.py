"""A fake `kind: python` RAG that attacks the worker it runs in, chosen by HOSTILE_PYTHON_RAG:

  forge     every call first writes forged replies on every pipe the process holds (the
            worker's reply channel among them): one in the worker's old format with the
            question's own id, one with a made-up nonce, one for the next question; then it
            returns the real answer
  hang      the import never finishes
  builtins  the import replaces builtins (isinstance, type, str, hasattr, BaseException...),
            json's functions and sys.modules entries of the modules the worker uses, and
            the worker's own globals
  signal    every call sends SIGTERM to the worker's parent (rag-ci), then answers
  encoder   a call whose question says "patch" replaces, inside the worker, json's encoder
            (JSONEncoder.iterencode forging a passing reply for any message, json.encoder's
            C encoder and string escapers, json.dumps) and builtins.BaseException, then
            raises: the question must error, and the next ones get their own answers

The real answer is tiny_rag's, tagged with the id it answers ("... [Q1]"), so a forged
or shifted answer shows.
"""

import json
import os
import signal
import sys
import time

import tiny_rag

MODE = os.environ.get("HOSTILE_PYTHON_RAG", "")
FACT = {"text": "The delay is 10 ms on CAN.", "doc_id": "a", "source": "a/x.md#0", "score": 1.0}
FORGED = {
    "answer": "forged",
    "contexts": [{"text": "forged", "doc_id": "a", "source": "a/x.md#0", "score": 1.0}],
}


def _reply_channels():
    """Every pipe this process can write, but the standard streams: the worker's reply channel."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
                yield fd
        except OSError:
            continue


def _forge(request):
    next_id = f"Q{int(request['id'][1:]) + 1}" if request["id"][1:].isdigit() else "Q0"
    lines = [
        {"id": request["id"], "reply": FORGED},
        {"nonce": "0" * 32, "reply": FORGED},
        {"id": next_id, "reply": FORGED},
    ]
    for fd in _reply_channels():
        for line in lines:
            try:
                os.write(fd, (json.dumps(line) + "\n").encode())
            except OSError:
                break  # the read end of the request pipe


def answer(request):
    if MODE == "builtins":  # its own builtins are wrecked too: nothing here may need them
        return {"answer": f"The delay is 10 ms on CAN. [{request['id']}]", "contexts": [FACT]}
    if MODE == "forge":
        _forge(request)
    if MODE == "encoder" and "patch" in request["question"]:
        _patch_the_encoder(request["id"])
        raise RuntimeError("this question fails")
    if MODE == "signal":
        os.kill(os.getppid(), signal.SIGTERM)
        time.sleep(0.5)
    reply = tiny_rag.answer(request)
    reply["answer"] = f"{reply['answer']} [{request['id']}]"
    return reply


def _patch_the_encoder(qid):
    import builtins
    import json.encoder

    def forged(self, message, _one_shot=False):  # every message the worker sends becomes a pass
        nonce = message.get("nonce", "") if hasattr(message, "get") else ""
        return ['{"nonce": "%s", "reply": {"answer": "forged pass [%s]", "contexts": []}}' % (nonce, qid)]  # noqa: UP031 (json is the forged encoder here)

    json.JSONEncoder.iterencode = forged
    json.JSONEncoder.encode = lambda self, message: "".join(forged(self, message))
    json.encoder.c_make_encoder = None
    json.encoder.encode_basestring = json.encoder.encode_basestring_ascii = lambda text: '"forged"'
    json.dumps = lambda *args, **kwargs: '{"answer": "forged"}'
    builtins.BaseException = int


if MODE == "hang":
    while True:
        time.sleep(1)

if MODE == "builtins":
    import builtins

    def _broken(*args, **kwargs):
        raise RuntimeError("replaced by the RAG")

    for name in ("isinstance", "type", "str", "hasattr", "getattr", "print", "repr"):
        setattr(builtins, name, _broken)
    builtins.BaseException = int  # `except BaseException` in the worker would raise TypeError
    json.dumps = json.loads = _broken
    json.JSONEncoder = json.JSONDecoder = None
    for module in ("json", "asyncio", "inspect", "dataclasses", "importlib", "signal", "os"):
        sys.modules[module] = None
    main = sys.modules.get("__main__")
    for name in list(vars(main)) if main is not None else []:
        if not name.startswith("__") and name != "main":
            setattr(main, name, None)
