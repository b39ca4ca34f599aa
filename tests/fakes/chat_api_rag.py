"""A fake chat RAG with an OpenAI-style chat-completions API: `python chat_api_rag.py PORT`.

POST /v1/chat/completions takes `{"model", "messages": [{role, content}...], "user": <conversation>,
"metadata": {"collections": [...]}}` and answers in the chat-completions shape, its retrieved
chunks in a field of its own: `{"choices": [{"message": {"role": "assistant", "content": ...}}],
"citations": [{"content", "collection", "file"}], "model", "usage": {"prompt_tokens", ...}}`.
It answers from the whole conversation: a follow-up ("and how long does that take?") is read
with the user's earlier messages. A body without `messages` ending in a user message is refused
with 422. `prompt_tokens` is the number of messages it was sent (so a test can see the history
reached it). CHAT_API_FORGET=1 reads the last message only (a chat RAG that lost its history).
"""

import os

from http_rag import JsonHandler, serve

CHUNKS = {
    "a": ("a/charging.md", "Charging the battery takes 6 hours with the standard charger."),
    "b": ("b/storage.md", "Store the battery at half charge in a dry room."),
}
TOPICS = {"a": {"charge", "charging", "charger"}, "b": {"store", "storage", "stored"}}


def words(text):
    return {w.strip("?.,!").lower() for w in text.split()}


class Handler(JsonHandler):
    def do_POST(self):
        body = self.read_json()
        messages = body.get("messages") if isinstance(body, dict) else None
        if (
            self.path != "/v1/chat/completions"
            or not isinstance(messages, list)
            or not messages
            or messages[-1].get("role") != "user"
        ):
            self.send_json(422, {"detail": "messages: a list ending with the user's message"})
            return
        said = [m["content"] for m in messages if m.get("role") == "user"]
        if os.environ.get("CHAT_API_FORGET"):
            said = said[-1:]
        heard = set().union(*(words(s) for s in said))
        collections = body.get("metadata", {}).get("collections", [])
        found = [c for c in collections if c in CHUNKS and heard & TOPICS[c]]
        citations = [{"content": CHUNKS[c][1], "collection": c, "file": CHUNKS[c][0]} for c in found]
        text = " ".join(x["content"] for x in citations) or "I could not find this in the documents."
        self.send_json(
            200,
            {
                "choices": [{"message": {"role": "assistant", "content": text}}],
                "citations": citations,
                "model": "chat-llm-1",
                "conversation": body.get("user"),
                "usage": {"prompt_tokens": len(messages), "completion_tokens": len(text.split())},
            },
        )


if __name__ == "__main__":
    serve(Handler)
