"""`questions generate --writer fake` with the base install: the fake writer's policy
(rag_ci.judges.fake_writer) applied to each job directly, without DeepEval's Synthesizer
(issue 55: the dry run needed the `deepeval` extra).

With DeepEval installed, the fake writer answers the Synthesizer's prompts as a model would, so
the dry run exercises the real drafting path; without it, the same policy runs the same steps
in the same order: questions from the context, the filtration (a vague question rewritten with
the context's heading), the vague styling, the reference from the context's sentences. The
drafts then go through the same checks as every writer's (rag_ci.core.questionset.drafts).
"""

from __future__ import annotations

import importlib.util

from rag_ci.core.questionset.draft_plan import Job
from rag_ci.core.questionset.drafts import Written
from rag_ci.judges.fake_writer import casual, clear, expected_answer, inputs_for, rewritten


def deepeval_installed() -> bool:
    try:
        return importlib.util.find_spec("deepeval") is not None
    except ImportError:  # a broken or blocked installation is not one
        return False


def draft_offline(job: Job) -> list[Written]:
    """The job's goldens as the fake writer drafts them (see the module)."""
    out_of_scope = job.kind == "out_of_scope"
    if len(job.passages) > 1:  # a cross-corpus job: each passage labelled with its file
        chunks = [f"[SOURCE: {p.corpus}/{p.path}] {p.text}" for p in job.passages]
    else:
        chunks = list(job.context)
    context = "\n\n".join(job.context)
    items = inputs_for(
        chunks, job.goldens, out_of_scope=out_of_scope, styled=job.kind == "vague", seed=job.key
    )
    written = []
    for item in items[: job.goldens]:
        question, quality = item["input"], 1.0
        if not clear(question):  # the filtration's one rewrite
            question = rewritten(question, context)
            quality = 1.0 if clear(question) else 0.3
        if job.kind == "vague":
            question = casual(question)
        written.append(
            Written(
                job=job.key,
                question=question,
                reference=None if out_of_scope else expected_answer(context, question),
                quality=quality,
                used_sources=tuple(item.get("used_source_files", ())),
            )
        )
    return written
