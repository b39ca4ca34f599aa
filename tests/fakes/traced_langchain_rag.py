"""A RAG that answers over HTTP with the answer only, and tells what it did through its own
OpenTelemetry spans: a LangChain pipeline (langchain-core's retriever and chat model interfaces)
instrumented with OpenInference's LangChain instrumentation, exported with the OTLP/HTTP
(protobuf) exporter to whatever OTEL_EXPORTER_OTLP_* says, as a team's app would.

The retriever and the chat model are in-process fakes (word overlap over a few chunks; a model
that quotes its best chunk), so it runs offline; everything between them and rag-ci is the real
instrumentation, SDK, exporter and wire format. What a pull request could change is read from
the environment: TRACED_RAG_FILTER=off searches every corpus, not the routed ones (the answer
path's own leak), TRACED_RAG_TOP_K cuts the documents handed to the model (default 3),
TRACED_RAG_RETRIEVER_SPAN=off searches without LangChain's callbacks (no retriever span), and
TRACED_RAG_EXPORT=off sets up no exporter (no span leaves the process).

`traced_langchain_rag.py PORT`: serve POST /query ({"question", "corpora"} in, {"answer"} out).
"""

import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry import context, propagate
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

CHUNKS = [
    ("a", "a/x.md#0", "The delay is 10 ms on CAN."),
    ("a", "a/faq.md#0", "What is the delay on the CAN bus? Ask the team."),
    ("b", "b/y.md#0", "The delay is 20 ms on LIN."),
]
MODEL = os.environ.get("TRACED_RAG_MODEL", "mistral-small-2409")  # the generator a PR may swap
NOT_FOUND = "I could not find this in the documents."


def words(text):
    return set(re.findall(r"[a-z0-9]+", text.lower()))


class CorpusRetriever(BaseRetriever):
    corpora: list[str]
    filtered: bool = True
    k: int = 3

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun):
        asked = words(query)
        scored = [
            (len(asked & words(text)), corpus, source, text)
            for corpus, source, text in CHUNKS
            if corpus in self.corpora or not self.filtered
        ]
        ranked = sorted((s for s in scored if s[0] >= 3), key=lambda s: -s[0])[: self.k]
        return [
            Document(page_content=text, metadata={"corpus": corpus, "source": source})
            for _, corpus, source, text in ranked
        ]


class QuotingChatModel(BaseChatModel):
    """Answers with the last line of its prompt (the best chunk), and reports its tokens."""

    model_name: str = MODEL

    @property
    def _llm_type(self):
        return "quoting"

    @property
    def _identifying_params(self):
        return {"model_name": self.model_name}

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        prompt = messages[-1].content
        chunks = prompt.split("\n")[1:]
        text = next((c for c in chunks if re.search(r"\d+ ms", c)), chunks[0] if chunks else NOT_FOUND)
        usage = {"input_tokens": len(prompt.split()), "output_tokens": len(text.split())}
        message = AIMessage(content=text, usage_metadata={**usage, "total_tokens": sum(usage.values())})
        return ChatResult(
            generations=[ChatGeneration(message=message)], llm_output={"model_name": self.model_name}
        )


def answer(request):
    retriever = CorpusRetriever(
        corpora=request["corpora"],
        filtered=os.environ.get("TRACED_RAG_FILTER", "on") != "off",
        k=int(os.environ.get("TRACED_RAG_TOP_K", "3")),
    )
    if os.environ.get("TRACED_RAG_RETRIEVER_SPAN", "on") == "off":
        documents = retriever._get_relevant_documents(request["question"], run_manager=None)
    else:
        documents = retriever.invoke(request["question"])
    if not documents:
        return NOT_FOUND
    prompt = request["question"] + "\n" + "\n".join(d.page_content for d in documents)
    return QuotingChatModel().invoke(prompt).content


PIPELINE = RunnableLambda(answer).with_config(run_name="rag")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self._send(200, {"status": "ok"})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        # the request's trace continues here: rag-ci's traceparent header is the parent
        token = context.attach(propagate.extract(dict(self.headers)))
        try:
            self._send(200, {"answer": PIPELINE.invoke(request)})
        finally:
            context.detach(token)

    def _send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    provider = TracerProvider()
    if os.environ.get("TRACED_RAG_EXPORT", "on") != "off":
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    LangChainInstrumentor().instrument(tracer_provider=provider)
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    print(f"traced RAG listening on {server.server_address}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
