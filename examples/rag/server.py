"""The example RAG as a rag-ci target.

    python rag/server.py                  JSON lines: one request per stdin line, one reply per stdout line
    python rag/server.py --http 8000      HTTP: POST /query (same JSON), GET /health

Request: {"id": "Q1", "question": "...", "corpora": ["du3"]}
    `corpora` is the routing decision made by rag-ci; only those corpora are
    searched. Missing or empty means every corpus.
Reply:   {"id", "answer", "contexts": [{"text", "doc_id", "source", "score"}], "usage": {...}}
    or {"id", "error"} for a bad request; the server keeps running.

`usage` is simulated: no model is called, tokens are word counts and the cost
is computed from made-up prices, so rag-ci's cost reporting has data to show.

A conversation's turn also carries `messages` (the chat so far, ending with this
question) and `conversation_id`. In this chat mode the retriever searches with the
question and the user's earlier messages: "And how long does that take?" finds the
charging section because the first message asked about charging.

EXAMPLE_RAG_REGRESSION=routing makes the server ignore `corpora` and search
everything: the routing bug rag-ci reports as a routing leak.
EXAMPLE_RAG_REGRESSION=history drops the conversation: the retriever is queried
with the last message only, the bug of a chat RAG whose follow-ups break.
Logs go to stderr; stdout carries replies only.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from answer import REFUSAL, compose_answer
from ingest import INDEX_FILE, IngestError, regression_switch
from retrieval import Bm25Index

MODEL = "extractive-bm25-1"
TOP_CONTEXTS = 5
# Contexts scoring under half the best one share a stray word or two with the
# question; passing them on would only dilute the answer's sources.
RELATIVE_CUTOFF = 0.5
PRICE_PER_INPUT_TOKEN = 0.15 / 1_000_000  # simulated USD prices
PRICE_PER_OUTPUT_TOKEN = 0.60 / 1_000_000


def log(message: str) -> None:
    print(f"example-rag: {message}", file=sys.stderr, flush=True)


class BadRequest(Exception):
    pass


class ExampleRag:
    def __init__(self, index: dict, regression: str = ""):
        self.chunks = index["chunks"]
        self.corpora = sorted(index["corpora"])
        self.chunking = index["chunking"]
        self.routing_bug = regression == "routing"
        self.history_bug = regression == "history"
        # The heading is indexed with the text: "Battery and charging - Storage"
        # is what a question about storing the battery matches first.
        self.bm25 = Bm25Index(
            [f"{c['heading']}\n{c['text']}" for c in self.chunks], [c["corpus"] for c in self.chunks]
        )

    @classmethod
    def load(cls, index_file: Path = INDEX_FILE) -> ExampleRag:
        if not index_file.is_file():
            raise IngestError(f"no index at {index_file}: run `python rag/ingest.py` from examples/ first")
        return cls(json.loads(index_file.read_text(encoding="utf-8")), regression_switch())

    def routed_corpora(self, request: dict) -> list[str]:
        requested = request.get("corpora") or []
        if not isinstance(requested, list) or not all(isinstance(c, str) for c in requested):
            raise BadRequest("`corpora` must be a list of corpus names")
        unknown = sorted(set(requested) - set(self.corpora))
        if unknown:
            raise BadRequest(f"unknown corpora {unknown}; this index has {self.corpora}")
        if self.routing_bug or not requested:
            return list(self.corpora)
        return sorted(set(requested))

    def search_text(self, request: dict, question: str) -> str:
        """What the retriever searches with: the question, and in a conversation the user's
        earlier messages (the subject a follow-up refers to), unless the history bug drops them."""
        messages = request.get("messages") or []
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise BadRequest("`messages` must be a list of {role, content} objects")
        earlier = [
            str(m.get("content", "")) for m in messages[:-1] if m.get("role") == "user"
        ]  # the last message is this question
        if self.history_bug or not earlier:
            return question
        # The question twice, then the last earlier message: what is asked now weighs most.
        return " ".join([question, question, earlier[-1]])

    def answer(self, request: dict) -> dict:
        """One request -> one reply dict (the whole pipeline; also usable in-process)."""
        if not isinstance(request, dict):
            raise BadRequest("a request is a JSON object")
        question = request.get("question")
        if not isinstance(question, str) or not question.strip():
            raise BadRequest("`question` must be a non-empty string")
        corpora = self.routed_corpora(request)

        result = self.bm25.search(self.search_text(request, question), corpora)
        answer = compose_answer(result, self.chunks, corpora)
        contexts = []
        if answer != REFUSAL:  # a refusal cites nothing
            best = result.hits[0].score
            for hit in result.hits[:TOP_CONTEXTS]:
                if hit.score < RELATIVE_CUTOFF * best:
                    break
                chunk = self.chunks[hit.chunk]
                text = f"{chunk['heading']}\n{chunk['text']}" if chunk["heading"] else chunk["text"]
                contexts.append(
                    {
                        "text": text,
                        "doc_id": chunk["corpus"],
                        "source": chunk["source"],
                        "score": round(hit.score, 4),
                    }
                )

        input_tokens = len(question.split()) + sum(len(c["text"].split()) for c in contexts)
        output_tokens = len(answer.split())
        cost = input_tokens * PRICE_PER_INPUT_TOKEN + output_tokens * PRICE_PER_OUTPUT_TOKEN
        return {
            "id": request.get("id"),
            "answer": answer,
            "contexts": contexts,
            "usage": {
                "model": MODEL,
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cost_usd": round(cost, 8),
            },
        }

    def reply(self, request: object) -> tuple[dict, bool]:
        """Like answer(), but a bad request becomes {"error": ...}. -> (reply, ok)."""
        try:
            return self.answer(request), True  # type: ignore[arg-type]
        except BadRequest as exc:
            request_id = request.get("id") if isinstance(request, dict) else None
            log(f"bad request {request_id!r}: {exc}")
            return {"id": request_id, "error": str(exc)}, False


def serve_json_lines(rag: ExampleRag) -> None:
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    while line := sys.stdin.readline():
        if not line.strip():
            continue
        try:
            reply, _ = rag.reply(json.loads(line))
        except json.JSONDecodeError as exc:
            log(f"invalid JSON: {exc}")
            reply = {"id": None, "error": f"invalid JSON: {exc}"}
        except Exception as exc:
            log(f"internal error: {exc!r}")
            reply = {"id": None, "error": f"internal error: {exc!r}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def serve_http(rag: ExampleRag, host: str, port: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        def send_json(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/health":
                self.send_json(200, {"status": "ok"})
            else:
                self.send_json(404, {"error": f"no route GET {self.path}"})

        def do_POST(self) -> None:
            if self.path != "/query":
                self.send_json(404, {"error": f"no route POST {self.path}"})
                return
            try:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                reply, ok = rag.reply(json.loads(body))
                self.send_json(200 if ok else 400, reply)
            except (ValueError, UnicodeDecodeError) as exc:
                self.send_json(400, {"error": f"invalid JSON: {exc}"})
            except Exception as exc:
                log(f"internal error: {exc!r}")
                self.send_json(500, {"error": f"internal error: {exc!r}"})

        def log_message(self, format: str, *args: object) -> None:
            log(f"{self.address_string()} {format % args}")

    server = ThreadingHTTPServer((host, port), Handler)
    log(f"listening on http://{host}:{server.server_address[1]}")
    try:
        server.serve_forever()
    finally:
        server.server_close()


def main() -> int:
    parser = argparse.ArgumentParser(description="The example RAG as a rag-ci target.")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve HTTP on PORT instead of JSON lines")
    parser.add_argument("--host", default="0.0.0.0", help="HTTP bind address (default 0.0.0.0)")
    args = parser.parse_args()
    # As PID 1 in a container, SIGTERM is ignored unless handled: exit cleanly on it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    started = time.perf_counter()
    try:
        rag = ExampleRag.load()
    except IngestError as exc:
        log(f"error: {exc}")
        return 2
    mode = "routing bug ON (searching every corpus)" if rag.routing_bug else "routing ok"
    mode += ", history bug ON (follow-ups searched alone)" if rag.history_bug else ""
    log(
        f"{len(rag.chunks)} chunks from {len(rag.corpora)} corpora {rag.corpora}, "
        f"{len(rag.bm25.vocabulary)} terms, chunking={rag.chunking}, {mode}, "
        f"ready in {1000 * (time.perf_counter() - started):.0f} ms"
    )
    try:
        if args.http is not None:
            serve_http(rag, args.host, args.http)
        else:
            serve_json_lines(rag)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
