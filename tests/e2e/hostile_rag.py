"""A RAG whose output is hostile, for the end-to-end escaping test (kind: python target).

With HOSTILE_RAG_BROKEN unset it answers correctly (the baseline). With it set, every
answer fails with a message crafted to break the PR comment: HTML/script, @mentions,
table-breaking pipes and newlines, code fences, a fake marker, and whatever GitHub token
it can find in its environment (there must be none: the action removes it).
"""

import os

DOCS = {"a": ("a/x.md", "The delay is 10 ms on CAN."), "b": ("b/y.md", "The delay is 20 ms on LIN.")}
HOSTILE = (
    "<script>alert('pwned')</script> <img src=x onerror=alert(1)> @everyone @acme/maintainers "
    "| broken | table |\n| injected | row |\n```\ncode fence\n``` <!-- rag-ci:comment --> [click](javascript:alert(1))"
)


def answer(request):
    if os.environ.get("HOSTILE_RAG_BROKEN"):
        leaked = [
            os.environ.get(name, "") for name in ("RAG_CI_GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "GITHUB_TOKEN")
        ]
        raise RuntimeError(HOSTILE + " token=" + "/".join(leaked))
    corpora = request["corpora"]
    contexts = [
        {"text": DOCS[c][1], "doc_id": c, "source": DOCS[c][0] + "#0", "score": 1.0}
        for c in corpora
        if c in DOCS
    ]
    text = " ".join(DOCS[c][1] for c in corpora if c in DOCS)
    return {"answer": text, "contexts": contexts, "usage": {"model": "hostile-1", "cost_usd": 0.0}}
