"""`rag-ci questions generate`, wired: read the corpora, plan, write, check, append (docs/questions.md).

The I/O shell around the pure steps: the documents are read and cut into passages
(rag_ci.core.questionset.passages), the mix is planned (.draft_plan), the writer drafts
through DeepEval's Synthesizer (rag_ci.drafting.writer), the goldens become routed drafts
(.drafts) and duplicates go (.dedupe); then the drafts are appended to questions.yml
atomically, its comments and layout kept. The writer is checked before anything is read
that costs time: a writer of the judge's family stops the command before any call. What the
command prints (bounds, estimate, summary) is rag_ci.drafting.draft_report.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import date
from typing import TextIO

from rag_ci.core.config import Config, WriterConfig
from rag_ci.core.questionset.coverage import coverage
from rag_ci.core.questionset.dedupe import Known, dedupe, route_of
from rag_ci.core.questionset.documents import ambiguous_file_names, citation_style
from rag_ci.core.questionset.draft_checks import template_shingles
from rag_ci.core.questionset.draft_plan import DocumentPassages, Plan
from rag_ci.core.questionset.draft_text import content_terms
from rag_ci.core.questionset.drafts import append_drafts, assign_ids, build_drafts
from rag_ci.core.questionset.passages import Passage, cut_passages
from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.drafting.draft_report import Outcome, duration
from rag_ci.drafting.question_sources import Sources
from rag_ci.errors import RagCiError
from rag_ci.files.corpus_files import CorpusFiles


def documents_to_draft(
    sources: Sources, uncovered_only: bool, time_limit_s: float | None = None
) -> tuple[list[DocumentPassages], int]:
    """The documents of the chosen corpora cut into passages, and how many hold no prose to draft
    from (not text, source code or data, nothing but markup). Reading them counts against
    the time limit too (`--estimate` included): past it, the command stops and says so."""
    deadline = None if time_limit_s is None else time.monotonic() + time_limit_s
    paths = {c: ps for c, ps in sources.files.paths().items() if c in sources.chosen}
    if uncovered_only:
        report = coverage(sources.questions, sources.corpora, paths)
        uncited = set(report.uncited_documents)
        paths = {c: [p for p in ps if f"{c}/{p}" in uncited] for c, ps in paths.items()}
    documents: list[DocumentPassages] = []
    skipped = 0
    for corpus, corpus_paths in sorted(paths.items()):
        for path in corpus_paths:
            if deadline is not None and time.monotonic() > deadline:
                raise RagCiError(
                    f"the time limit of {duration(time_limit_s or 0)} was reached while reading the documents "
                    f"({len(documents) + skipped} read): draft fewer at a time (--corpus, --uncovered-only) "
                    "or raise --time-limit"
                )
            text = sources.files.texts.get((corpus, path))
            passages = tuple(cut_passages(corpus, path, text)) if text is not None else ()
            if not passages:
                skipped += 1
                continue
            documents.append(DocumentPassages(corpus, path, passages))
    return documents, skipped


def writer_config(config: Config, option: str | None) -> WriterConfig:
    """`--writer PROVIDER:MODEL[@BASE_URL]` over rag-ci.yml's `writer:` (like `--judge` over `judge:`)."""
    configured = config.writer or WriterConfig()
    if option is None:
        return configured
    from rag_ci.judges.build import parse_judge_option

    return WriterConfig(
        **{**configured.model_dump(exclude_unset=True), **parse_judge_option(option, "--writer")}
    )


def scope_documents(sources: Sources) -> list[DocumentPassages]:
    """Every text document of every corpus, as what out-of-scope drafts must stay out of."""
    return [
        DocumentPassages(c, p, tuple(cut_passages(c, p, text)))
        for (c, p), text in sorted(sources.files.texts.items())
    ]


def _document_terms(sources: Sources) -> dict[str, frozenset[str]]:
    """Every document's words, all corpora (an out-of-scope draft must not be in any of them)."""
    out = {}
    for (corpus, path), text in sorted(sources.files.texts.items()):
        out[f"{corpus}/{path}"] = frozenset(content_terms(text))
    return out


def generate(
    sources: Sources,
    plan: Plan,
    writer,
    *,
    seed: int,
    progress: bool = True,
    log: TextIO | None = None,
    time_limit_s: float | None = None,
) -> Outcome:
    """Draft, check, dedupe and append; `writer` is a rag_ci.drafting.writer.Writer. Past
    `time_limit_s` the jobs still running end and the finished ones' drafts are kept."""
    outcome = Outcome(plan=plan, writer=writer.label, time_limit_s=time_limit_s)
    results = _write(plan, writer, outcome, progress, log or sys.stderr, time_limit_s)
    from rag_ci.drafting.writer import TIME_LIMIT_REACHED
    from rag_ci.drafting.writer_prompts import prompt_templates

    outcome.failed_jobs = {key: r.error for key, r in results.items() if r.error is not None}
    outcome.unfinished = sum(1 for error in outcome.failed_jobs.values() if TIME_LIMIT_REACHED in error)
    if len(outcome.failed_jobs) == len(plan.jobs):
        if outcome.unfinished:
            raise RagCiError(
                f"the time limit of {duration(time_limit_s or 0)} was reached before any writer job finished: "
                "nothing was drafted; raise --time-limit (or writer.time_limit_s), or draft fewer documents "
                "at a time (--corpus, --per-document)"
            )
        raise RagCiError(
            f"the writer failed on every job; the first: {next(iter(outcome.failed_jobs.values()))}"
        )
    written = [w for job in plan.jobs for w in results[job.key].written]
    outcome.returned = len(written)

    existing_sources = [s for q in sources.questions.questions for s in q.sources]
    paths = sources.files.paths()
    styles = {c: citation_style(c, ps, existing_sources) for c, ps in paths.items()}
    ambiguous = {c: ambiguous_file_names(ps) for c, ps in paths.items()}
    drafts, outcome.rejected = build_drafts(
        plan,
        written,
        styles=styles,
        ambiguous=ambiguous,
        document_terms=_document_terms(sources),
        seed=seed,
        quoted=template_shingles(prompt_templates()),
    )
    known = [Known(q.id, q.question, route_of(q.doc_id, q.is_refusal)) for q in sources.questions.questions]
    labelled = [(f"draft:{n}", d) for n, d in enumerate(drafts)]
    kept, dropped = dedupe(
        labelled,
        existing=known,
        describe=lambda item: (
            item[0],
            item[1].question,
            route_of(item[1].doc_id, item[1].expect == "refusal"),
        ),
    )
    existing_ids = {q.id for q in sources.questions.questions}
    numbered = assign_ids([d for _, d in kept], existing_ids)
    names = {label: d.id for (label, _), d in zip(kept, numbered)}
    outcome.dropped = [(item.item[1], item.reason(names.get(item.of))) for item in dropped]
    outcome.added = numbered
    if numbered:
        outcome.added = _append_locked(sources, [d for _, d in kept], writer.label)
    if writer.client.stopped:  # writer.max_cost_usd: what was drafted is kept, the run is exit 2
        raise RagCiError(f"{writer.client.stopped} ({len(outcome.added)} draft(s) written before are kept)")
    return outcome


def _append_locked(sources: Sources, drafts: list, writer_label: str) -> list:
    """Append the drafts under the question set's lock, to the set as it is now (a review
    verb may have changed it while the writer worked), numbered after its ids then."""
    from rag_ci.files.atomic import write_text_keeping_newlines
    from rag_ci.files.lock import QuestionSetLock

    path = sources.questions_path
    with QuestionSetLock(path):
        text, existing = sources.questions_text, {q.id for q in sources.questions.questions}
        if not sources.new_set and (now := path.read_text(encoding="utf-8")) != text:
            text, existing = (
                now,
                {
                    q.id
                    for q in parse_question_set(
                        now, str(path), set(sources.corpora), allow_drafts=True
                    ).questions
                },
            )
        numbered = assign_ids(drafts, existing)
        text = append_drafts(text, str(path), numbered, writer=writer_label, date=date.today().isoformat())
        parse_question_set(text, str(path), set(sources.corpora), allow_drafts=True)  # still a valid set
        write_text_keeping_newlines(path, text)
    return numbered


def _write(
    plan: Plan, writer, outcome: Outcome, progress: bool, log: TextIO, time_limit_s: float | None
) -> dict:
    """The writer's jobs, with a progress bar; the calls, tokens and cost recorded in `outcome`."""
    from rag_ci.runtime.progress import make_progress

    bar = make_progress(len(plan.jobs), progress, stream=log, label="writer jobs", failures="failed")

    def done(job, result) -> None:
        bar.advance("pass" if result.error is None else "error")
        name = (
            f"{job.passages[0].corpus}/{job.passages[0].path}"
            if job.kind in ("document", "vague")
            else job.kind.replace("_", "-")
        )
        outcome.calls_per_document[name] = outcome.calls_per_document.get(name, 0) + result.meter.calls

    try:
        results = asyncio.run(writer.write(plan, on_job=done, time_limit_s=time_limit_s))
    finally:
        bar.close()
    stats = writer.client.stats
    outcome.calls, outcome.input_tokens, outcome.output_tokens, outcome.cost_usd = (
        stats.calls,
        stats.input_tokens,
        stats.output_tokens,
        stats.cost_usd,
    )
    return results


def passages_by_hash(files: CorpusFiles) -> dict[str, Passage]:
    """Every passage of every text document, by its hash (the review page finds a draft's passage)."""
    found = {}
    for (corpus, path), text in files.texts.items():
        for passage in cut_passages(corpus, path, text):
            found[passage.hash] = passage
    return found
