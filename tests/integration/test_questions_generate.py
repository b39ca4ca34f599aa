"""`rag-ci questions generate` on the example's two corpora: the fake writer offline, a real
provider path over HTTP against a fake OpenAI-protocol server, the writer kept apart from the judge."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

from builders import EXAMPLES, REPO
from fakes.judge_servers import FakeOpenAIJudgeServer
from rag_ci.cli import cli
from rag_ci.core.questionset.draft_text import normalise
from rag_ci.core.questionset.questions import parse_question_set
from rag_ci.judges.fake import JudgePolicy
from rag_ci.judges.fake_writer import WriterPolicy

pytestmark = pytest.mark.slow
CORPORA = {"du2", "du3"}


@pytest.fixture
def example(tmp_path):
    shutil.copytree(
        EXAMPLES,
        tmp_path / "ex",
        ignore=shutil.ignore_patterns("baseline", "out", ".index", "*.sqlite*", ".rag-ci*"),
    )
    return tmp_path / "ex"


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def document_text(example, source: str) -> str:
    corpus, name = source.split("/", 1)
    return (example / "corpora" / corpus / "docs" / name).read_text(encoding="utf-8")


def drafts_of(example):
    questions = parse_question_set(
        (example / "questions.yml").read_text(), "q.yml", CORPORA, allow_drafts=True
    )
    return questions, [q for q in questions.questions if q.status == "draft"]


def test_the_fake_writer_drafts_routed_checkable_questions_with_an_adversarial_mix_and_no_duplicates(example):
    original = (example / "questions.yml").read_text()
    result = invoke(
        "questions", "generate", "--config", str(example / "rag-ci.yml"), "--writer", "fake", "--no-progress"
    )
    assert result.exit_code == 0, result.output
    text = (example / "questions.yml").read_text()
    assert text.startswith(original)  # appended: every comment and line of the file stays
    questions, drafts = drafts_of(example)
    assert len(drafts) >= 60
    for draft in drafts:
        assert (
            "generated" in draft.tags
            and draft.provenance.writer == "fake"
            and re.fullmatch(r"[A-Z0-9-]+-\d{2}", draft.id)
        )
        if draft.is_refusal:
            assert not draft.doc_id and not draft.sources and "out_of_scope" in draft.tags
            continue
        # the corpus of the cited document
        assert draft.doc_id == tuple(s.split("/", 1)[0] for s in draft.sources)
        cited = " ".join(document_text(example, s) for s in draft.sources)
        assert 1 <= len(draft.keywords) <= 5 and all(k in cited for k in draft.keywords), draft
        sentences = re.split(r"(?<=[.!?])\s+", draft.reference)
        assert len(sentences) == len(set(sentences)), draft  # two manuals sharing a sentence: said once
    adversarial = [d for d in drafts if "adversarial" in d.tags]
    assert len(adversarial) >= 0.2 * len(drafts)
    kinds = {t for d in adversarial for t in d.tags} - {"generated", "adversarial"}
    assert kinds == {"misspelt", "vague", "cross_corpus", "out_of_scope"}
    assert any(set(d.doc_id) == CORPORA for d in drafts)  # cross-corpus: routed to both manuals
    routes = [
        (normalise(q.question), "refusal" if q.is_refusal else frozenset(q.doc_id))
        for q in questions.questions
    ]
    assert len(routes) == len(set(routes))  # no duplicates, against the set or among the drafts
    assert "dropped" in result.output and "duplicates" in result.output
    assert re.search(
        r"added \d+: \d+ plain, \d+ misspelt, \d+ vague, \d+ cross-corpus, \d+ out-of-scope", result.output
    )
    assert re.search(
        r"writer fake: \d+ calls, [\d,]+ tokens, \$0\.0000; [\d.]+ calls per document \(25 documents",
        result.output,
    )

    refused = invoke("validate", "--config", str(example / "rag-ci.yml"))
    assert (
        refused.exit_code == 2
        and "machine-written by fake on" in refused.output
        and drafts[0].id in refused.output
    )

    again = invoke(
        "questions", "generate", "--config", str(example / "rag-ci.yml"), "--writer", "fake", "--no-progress"
    )
    assert again.exit_code == 0 and "added none" in again.output  # the same drafts again: all duplicates
    assert (example / "questions.yml").read_text() == text

    reviewed = example / "reviewed.yml"
    reviewed.write_text(
        "reviewer: ana\ndrafts:\n"
        + "".join(f"  - {{id: {d.id}, hash: {d.content_hash}, decision: approve}}\n" for d in drafts)
    )
    applied = invoke("questions", "apply", str(reviewed), "--config", str(example / "rag-ci.yml"))
    assert applied.exit_code == 0 and f"{len(drafts)} approved" in applied.output
    assert invoke("validate", "--config", str(example / "rag-ci.yml")).exit_code == 0
    ran = invoke(
        "run",
        "--config",
        str(example / "rag-ci.yml"),
        "-o",
        str(example / "out" / "results.json"),
        "--no-progress",
    )
    assert ran.exit_code == 0, ran.output
    results = json.loads((example / "out" / "results.json").read_text())
    generated = [q for q in results["questions"] if "generated" in q["tags"]]
    assert len(generated) == len(drafts) and not [q["id"] for q in generated if q["verdict"] == "error"]
    assert sum(q["verdict"] == "pass" for q in generated) >= 0.8 * len(generated)


def test_a_writer_of_the_judges_family_is_refused_before_any_call(example, fake_judge):
    server = fake_judge("openai-compatible")
    config = example / "rag-ci.yml"
    config.write_text(
        config.read_text()
        + f"judge: {{provider: openai-compatible, model: Qwen/Qwen2.5-7B-Instruct, base_url: '{server.base_url}'}}\n"
    )
    before = (example / "questions.yml").read_text()
    result = invoke(
        "questions",
        "generate",
        "--config",
        str(config),
        "--writer",
        f"openai-compatible:qwen2.5:14b-instruct@{server.base_url}",
    )
    assert result.exit_code == 2
    assert (
        "the writer 'qwen2.5:14b-instruct' and the judge 'Qwen/Qwen2.5-7B-Instruct' are both of the alibaba family"
        in result.output
    )
    assert server.requests == 0 and (example / "questions.yml").read_text() == before


def test_estimate_prices_the_run_and_calls_nothing(example, fake_judge):
    server = fake_judge("openai-compatible")
    writer = f"openai-compatible:meta-llama/Llama-3.1-8B-Instruct@{server.base_url}"
    before = (example / "questions.yml").read_text()
    result = invoke(
        "questions",
        "generate",
        "--config",
        str(example / "rag-ci.yml"),
        "--writer",
        writer,
        "--estimate",
        "--corpus",
        "du3",
    )
    assert result.exit_code == 0, result.output
    assert re.search(
        r"\d+ drafts from 13 documents in \d+ jobs: [\d,]+ writer calls \(up to [\d,]+ if .*\), ~[\d,]+ tokens, "
        r"~\$0\.00 .*nothing was called",
        result.output,
    )
    assert server.requests == 0 and (example / "questions.yml").read_text() == before


def test_a_real_provider_drafts_over_http_with_retries_and_the_estimate_bounds_its_calls(example, fake_judge):
    server = fake_judge("openai-compatible")
    writer = f"openai-compatible:meta-llama/Llama-3.1-8B-Instruct@{server.base_url}"
    args = [
        "questions",
        "generate",
        "--config",
        str(example / "rag-ci.yml"),
        "--writer",
        writer,
        "--corpus",
        "du3",
        "--per-document",
        "1",
    ]
    estimated = invoke(*args, "--estimate")
    low, high = (
        int(n.replace(",", ""))
        for n in re.search(r"([\d,]+) writer calls \(up to ([\d,]+)", estimated.output).groups()
    )
    server.queue_faults("429", "500")  # the judge's retry layer: Retry-After honoured, 5xx retried
    result = invoke(*args, "--progress")
    assert result.exit_code == 0, result.output
    answered = sum(1 for r in server.log if r.status == 200)
    made = int(
        re.search(
            r"writer openai-compatible:meta-llama/Llama-3\.1-8B-Instruct: (\d+) calls", result.output
        ).group(1)
    )
    assert made == server.requests == answered + 2 and low <= answered <= high
    assert {"synth_inputs", "synth_filter", "synth_evolve", "synth_style", "synth_expected"} <= set(
        server.kinds()
    )
    assert re.search(r"\[rag-ci\] \d+/\d+ writer jobs \(0 failed\)", result.output)  # the progress, in a log
    _, drafts = drafts_of(example)
    assert drafts and {d.provenance.writer for d in drafts} == {
        "openai-compatible:meta-llama/Llama-3.1-8B-Instruct"
    }
    assert all(set(d.doc_id) <= {"du3"} for d in drafts)


def test_uncovered_only_drafts_for_the_documents_no_question_cites(example):
    config = str(example / "rag-ci.yml")
    nothing = invoke(
        "questions", "generate", "--config", config, "--writer", "fake", "--uncovered-only", "--no-progress"
    )
    assert nothing.exit_code == 2 and "every document is cited" in nothing.output  # the example cites all 25
    (example / "corpora" / "du3" / "docs" / "led-codes.md").write_text(
        "# LED codes (DU-3)\n\nThree green LEDs mean the PowerPack 625 holds more than 70 percent charge. "
        "A red LED blinking twice means error E-31, a loose battery contact.\n"
    )
    result = invoke(
        "questions",
        "generate",
        "--config",
        config,
        "--writer",
        "fake",
        "--uncovered-only",
        "--no-progress",
        "--per-document",
        "2",
    )
    assert result.exit_code == 0, result.output
    _, drafts = drafts_of(example)
    assert {d.sources for d in drafts if not d.is_refusal} == {("du3/led-codes.md",)}
    assert any(d.is_refusal for d in drafts)


def test_out_of_scope_drafts_of_one_corpus_stay_out_of_every_corpus(example):
    from rag_ci.core.questionset.draft_plan import plan_drafts
    from rag_ci.drafting.question_drafts import documents_to_draft, scope_documents
    from rag_ci.drafting.question_sources import read_sources

    sources = read_sources(example / "rag-ci.yml", corpora=("du3",))
    documents, _ = documents_to_draft(sources, uncovered_only=False)
    assert {d.corpus for d in documents} == {"du3"}
    plan = plan_drafts(
        documents, per_document=1, adversarial=0.25, seed=0, descriptions={}, scope=scope_documents(sources)
    )
    context = next(j for j in plan.jobs if j.kind == "out_of_scope").context
    assert [line.split("'")[1] for line in context] == ["du2", "du3"]  # what both manuals cover is in scope


def test_a_writer_failing_on_every_call_ends_with_exit_2_and_writes_nothing(example, fake_judge):
    server = fake_judge("openai-compatible", always_fault="400")
    config = example / "rag-ci.yml"
    config.write_text(
        config.read_text()
        + f"writer: {{provider: openai-compatible, model: meta-llama/Llama-3.1-8B-Instruct, "
        f"base_url: '{server.base_url}'}}\n"
    )
    before = (example / "questions.yml").read_text()
    result = invoke(
        "questions",
        "generate",
        "--config",
        str(config),
        "--corpus",
        "du2",
        "--per-document",
        "1",
        "--no-progress",
    )
    assert (
        result.exit_code == 2
        and "the writer failed on every job" in result.output
        and "HTTP 400" in result.output
    )
    assert (example / "questions.yml").read_text() == before


def test_a_question_set_that_does_not_exist_yet_is_started_with_the_drafts(example):
    (example / "questions.yml").unlink()
    result = invoke(
        "questions",
        "generate",
        "--config",
        str(example / "rag-ci.yml"),
        "--writer",
        "fake",
        "--corpus",
        "du2",
        "--per-document",
        "1",
        "--no-progress",
    )
    assert result.exit_code == 0, result.output
    questions, drafts = drafts_of(example)
    assert questions.version == 1 and drafts == list(questions.questions) and len(drafts) >= 10
    # nothing cites the corpus yet: drafts name documents by their path in the corpus folder
    assert all(s.startswith("du2/docs/") for d in drafts for s in d.sources)


# -- clean passages, checked writer output, bounds --------------------------

REAL_DOCS = EXAMPLES.parent / "tests" / "fixtures" / "real_docs"


MKDOCS_DOCS = EXAMPLES.parent / "tests" / "fixtures" / "mkdocs_docs"
FIXTURE_CORPORA = {"du2", "du3", "uvicorn", "llm-app", "ferry", "harbor"}


def _fake_drafts(config):
    result = invoke("questions", "generate", "--config", str(config), "--writer", "fake", "--no-progress")
    assert result.exit_code == 0, result.output
    data = parse_question_set(
        (config.parent / "questions.yml").read_text(), "q.yml", FIXTURE_CORPORA, allow_drafts=True
    )
    return result, [q for q in data.questions if q.status == "draft"]


def test_fake_writer_drafts_have_under_3_percent_unusable_references_and_no_markup_in_questions(
    example, tmp_path
):
    """On the example's manuals, a real project's documentation (uvicorn's docs and llm-app's
    READMEs: badges, HTML, code fences, mermaid, tables, link lists) and MkDocs-style docs
    (admonitions `!!!` and `///`, attribute lists, snippet includes, tabs, lead-ins, split
    list items, pointers, bold lines as headings), fewer than 3 % of the drafted references
    are what a reviewer rejects on sight (tests/reference_quality.py), and no question holds markup."""
    from reference_quality import question_problems, share_rejected

    shutil.copytree(REAL_DOCS, tmp_path / "real")
    shutil.copytree(MKDOCS_DOCS, tmp_path / "mkdocs")
    counts = {}
    rejected_all, counted_all, why_all, questions = 0, 0, {}, []
    for name, config, at_least in [
        ("example", example / "rag-ci.yml", 60),
        ("real_docs", tmp_path / "real" / "rag-ci.yml", 15),
        ("mkdocs_docs", tmp_path / "mkdocs" / "rag-ci.yml", 10),
    ]:
        _, drafts = _fake_drafts(config)
        rejected, counted, why = share_rejected([d.reference for d in drafts])
        assert len(drafts) >= at_least and counted >= at_least - 6, name
        counts[name] = (rejected, counted)
        rejected_all, counted_all = rejected_all + rejected, counted_all + counted
        why_all.update(why)
        questions += [d.question for d in drafts]
    assert rejected_all < 0.03 * counted_all, (counts, why_all)  # was 4 of 11 on the MkDocs-style docs
    assert [q for q in questions if question_problems(q)] == []


def test_fake_writer_questions_are_sentences_ending_in_a_question_mark_and_the_summary_counts_placeholders(
    tmp_path,
):
    from rag_ci.judges.fake_writer import PLACEHOLDER_PATTERN

    shutil.copytree(REAL_DOCS, tmp_path / "real")
    result, drafts = _fake_drafts(tmp_path / "real" / "rag-ci.yml")
    plain = [d.question for d in drafts if "generated" in d.tags and not set(d.tags) & {"adversarial"}]
    assert plain and all(q.endswith("?") and q[0].isupper() for q in plain), plain
    placeholders = sum(1 for d in drafts if PLACEHOLDER_PATTERN.search(d.question))
    assert placeholders < len(plain) / 2  # before: every question was "What do the documents say about ...?"
    assert (
        f"fake writer: the questions are phrased by rules from their reference sentence, {placeholders} of "
        f"{len(drafts)} are placeholders"
    ) in result.output


class _HugeWriter(WriterPolicy):
    """A writer whose every question is 8 MB long."""

    def _inputs(self, prompt: str) -> dict:
        return {"data": [{"input": "What is " + "very " * 1_600_000 + "long?"}]}


def _generate_process(config, writer: str, *args: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "rag_ci",
            "questions",
            "generate",
            "--config",
            str(config),
            "--writer",
            writer,
            "--no-progress",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_a_writer_reply_over_the_size_bound_fails_its_job_in_seconds_not_minutes(example):
    # Before: a writer returning an 8 MB question per reply kept generate running past 120 s,
    # every later prompt of the job carrying the 8 MB question back to the writer.
    with FakeOpenAIJudgeServer(policy=JudgePolicy(writer=_HugeWriter())) as server:
        done = _generate_process(
            example / "rag-ci.yml",
            f"openai-compatible:meta-llama/Llama-3.1-8B-Instruct@{server.base_url}",
            "--corpus",
            "du3",
            "--per-document",
            "1",
            timeout=300,  # a hang guard only (a normal run takes ~20 s)
        )
    assert (
        done.returncode == 2
        and "a writer reply of 8,000,0" in done.stderr
        and "over the 32,000 a reply may have" in done.stderr
    )
    # Each job stopped at its first oversized reply: no prompt sent to the writer carried one.
    assert server.log and all(len(json.dumps(r.body)) < 32_000 for r in server.log)
    # the bounds, stated up front
    assert "each writer call waits at most 60 s (writer.timeout_s" in done.stderr


class _SlowOnOneDocument(WriterPolicy):
    """A writer that never answers, within the test, about pairing phones (the app-pairing page):
    that call waits until the test releases it, however slow or fast the machine is."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def answer(self, kind: str, prompt: str) -> dict:
        if re.search(r"\b(pairing|paired)\b", prompt):
            self.release.wait(timeout=300)
        return super().answer(kind, prompt)


def test_the_time_limit_ends_the_jobs_still_running_and_keeps_what_the_others_drafted(example):
    # The limit leaves a loaded machine (a parallel suite) time for the other documents' jobs; the
    # slow one is never answered before the process ends, so the limit is what ends it.
    slow = _SlowOnOneDocument()
    with FakeOpenAIJudgeServer(policy=JudgePolicy(writer=slow)) as server:
        try:
            done = _generate_process(
                example / "rag-ci.yml",
                f"openai-compatible:meta-llama/Llama-3.1-8B-Instruct@{server.base_url}",
                "--corpus",
                "du3",
                "--per-document",
                "1",
                "--time-limit",
                "30",
                timeout=120,
            )
        finally:
            slow.release.set()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the drafting stops after 30 s (--time-limit, writer.time_limit_s)" in done.stderr
    assert re.search(
        r"time limit of 30 s reached: [1-9]\d* of \d+ writer jobs did not finish; the drafts of the others are kept",
        done.stdout,
    ), done.stdout
    _, drafts = drafts_of(example)
    sources = {s for d in drafts for s in d.sources}
    assert drafts and "du3/app-pairing.md" not in sources and "du3/battery.md" in sources


class _EchoingWriter(WriterPolicy):
    """A writer that echoes its prompt ("Scenario/Task/Input Format" in a question)."""

    def _inputs(self, prompt: str) -> dict:
        reply = super()._inputs(prompt)
        if "about a subject none of these documents covers" in prompt:  # rag-ci's out-of-scope styling
            reply["data"][0]["input"] = (
                "Scenario: A user of an assistant asks about a subject none of these documents "
                "covers. Task: The assistant must say the documents do not cover it. Input Format: "
                "One plain question?"
            )
        else:
            reply["data"][0]["input"] = "What does the manual say about [insert topic] on the {product}?"
        return reply


def test_writer_prompt_echoes_and_placeholders_are_dropped_and_counted(example):
    with FakeOpenAIJudgeServer(policy=JudgePolicy(writer=_EchoingWriter())) as server:
        result = invoke(
            "questions",
            "generate",
            "--config",
            str(example / "rag-ci.yml"),
            "--writer",
            f"openai-compatible:meta-llama/Llama-3.1-8B-Instruct@{server.base_url}",
            "--corpus",
            "du3",
            "--per-document",
            "2",
            "--no-progress",
        )
    assert result.exit_code == 0, result.output
    _, drafts = drafts_of(example)
    assert drafts and not [
        d.question for d in drafts if "Scenario" in d.question or "{product}" in d.question
    ]
    assert re.search(r"dropped \d+: .*\d+ the question holds a placeholder", result.output)
    assert re.search(r"\d+ the question echoes the writer's prompt", result.output)


def test_estimate_works_for_a_model_rag_ci_knows_neither_the_family_nor_the_price_of(example):
    # Before: an unknown writer model was refused even for --estimate.
    result = invoke(
        "questions",
        "generate",
        "--config",
        str(example / "rag-ci.yml"),
        "--writer",
        "openai-compatible:house-model-7b@http://127.0.0.1:9/v1",
        "--estimate",
        "--corpus",
        "du2",
    )
    assert result.exit_code == 0, result.output
    # a warning now
    assert "does not know which family the writer model 'house-model-7b' belongs to" in result.output
    priced = invoke(
        "questions",
        "generate",
        "--config",
        str(example / "rag-ci.yml"),
        "--writer",
        "openai:gpt-9-2030-01-01",
        "--estimate",
        "--corpus",
        "du2",
    )
    assert priced.exit_code == 0, priced.output
    assert re.search(
        r"[\d,]+ writer calls .*~[\d,]+ tokens \([\d,]+ in, [\d,]+ out\), dollars unknown: rag-ci has no price "
        r"for 'gpt-9-2030-01-01'",
        priced.output,
    )
    refused = invoke(
        "questions",
        "generate",
        "--config",
        str(example / "rag-ci.yml"),
        "--writer",
        "openai-compatible:house-model-7b@http://127.0.0.1:9/v1",
        "--corpus",
        "du2",
        "--no-progress",
    )
    # drafting still needs the family
    assert refused.exit_code == 2 and "set `writer.family`" in refused.output


def test_generate_says_why_it_drafted_no_cross_corpus_questions(example, tmp_path):
    one = invoke(
        "questions",
        "generate",
        "--config",
        str(example / "rag-ci.yml"),
        "--writer",
        "fake",
        "--corpus",
        "du3",
        "--estimate",
    )
    assert (
        "no cross-corpus drafts: they need documents of two corpora, and only du3 is drafted from (--corpus)"
        in one.output
    )
    shutil.copytree(REAL_DOCS, tmp_path / "real")
    apart = invoke(
        "questions",
        "generate",
        "--config",
        str(tmp_path / "real" / "rag-ci.yml"),
        "--writer",
        "fake",
        "--no-progress",
    )
    assert re.search(
        r"no cross-corpus drafts: no two documents of different corpora share a topic \(the closest, \S+ and \S+, "
        r"share \d+% of their words; 30% or the same file name make a topic\)",
        apart.output,
    ), apart.output


def test_generate_never_copies_a_documents_escape_sequences_into_the_question_set(example):
    config = str(example / "rag-ci.yml")
    (example / "corpora" / "du3" / "docs" / "led-codes.md").write_text(
        "# LED codes (DU-3)\n\nThree green LEDs\x1b]0;pwned\x07 mean the PowerPack 625 holds more than 70 percent "
        "charge.\x1b[8m A red LED blinking twice means error E-31, a loose battery\x9b2J contact.\n"
    )

    result = invoke(
        "questions",
        "generate",
        "--config",
        config,
        "--writer",
        "fake",
        "--uncovered-only",
        "--no-progress",
        "--per-document",
        "2",
    )

    assert result.exit_code == 0, result.output
    written = (example / "questions.yml").read_text(encoding="utf-8")
    _, drafts = drafts_of(example)
    assert any(d.sources == ("du3/led-codes.md",) for d in drafts)
    assert not re.search(r"[\x1b\x07\x9b]|\\e|\\x1b|\\u001b|\\x9b|\\u009b|\\a\b", written)


def test_a_writer_that_never_answers_in_json_is_called_the_writer_not_the_judge(example, fake_judge):
    server = fake_judge("openai-compatible", always_invalid_json=True)
    writer = f"openai-compatible:meta-llama/Llama-3.1-8B-Instruct@{server.base_url}"

    result = invoke(
        "questions",
        "generate",
        "--config",
        str(example / "rag-ci.yml"),
        "--writer",
        writer,
        "--corpus",
        "du3",
        "--per-document",
        "1",
        "--no-progress",
    )

    assert result.exit_code == 2, result.output
    assert "invalid JSON from the writer" in result.output and "the judge" not in result.output


def test_latin1_and_utf16_documents_are_drafted_from_not_called_no_prose(example):
    config = str(example / "rag-ci.yml")
    text = (
        "# Café (DU-3)\n\nThe crème brûlée mode of the PowerPack 625 holds 70 percent charge for twelve days. "
        "A red LED blinking twice means error E-31, a loose battery contact.\n"
    )
    (example / "corpora" / "du3" / "docs" / "latin.md").write_bytes(text.encode("latin-1"))
    wide = (
        "Wide charger (DU-3)\n\nThe wide charger of the Lumen 9 fills the pack in 4.5 hours at 18 °C. "
        "Its display shows code W-12 when the fan is blocked by dust.\n"
    )
    (example / "corpora" / "du3" / "docs" / "wide.txt").write_bytes(wide.encode("utf-16"))

    result = invoke(
        "questions",
        "generate",
        "--config",
        config,
        "--writer",
        "fake",
        "--uncovered-only",
        "--no-progress",
        "--per-document",
        "1",
    )

    assert result.exit_code == 0, result.output
    assert "no prose" not in result.output
    _, drafts = drafts_of(example)
    assert {"du3/latin.md", "du3/wide.txt"} <= {s for d in drafts for s in d.sources}


def test_reading_the_documents_counts_against_the_time_limit(example):
    from rag_ci.drafting.question_drafts import documents_to_draft
    from rag_ci.drafting.question_sources import read_sources
    from rag_ci.errors import RagCiError

    sources = read_sources(example / "rag-ci.yml")

    with pytest.raises(
        RagCiError, match=r"time limit .* was reached while reading the documents \(0 read\).*--time-limit"
    ):
        documents_to_draft(sources, False, time_limit_s=-1)  # already past: not one document is cut
    assert documents_to_draft(sources, False, time_limit_s=600)[0]


def test_the_writers_spend_cap_stops_its_calls_with_exit_2(example, fake_judge):
    server = fake_judge("openai-compatible")
    config = example / "rag-ci.yml"
    config.write_text(
        config.read_text()
        + "writer:\n  provider: openai-compatible\n  model: meta-llama/Llama-3.1-8B-Instruct\n"
        + f"  base_url: {server.base_url}\n  prices: {{input_per_mtok: 100.0, output_per_mtok: 100.0}}\n"
        + "  max_cost_usd: 0.5\n  concurrency: 1\n"
    )
    args = ["questions", "generate", "--config", str(config), "--corpus", "du3", "--no-progress"]
    low = int(
        re.search(r"([\d,]+) writer calls \(up to", invoke(*args, "--estimate").output)[1].replace(",", "")
    )
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert re.search(
        r"writer stopped at \$[0-9.]+ of \$0\.5: raise writer\.max_cost_usd or run on fewer questions",
        result.output,
    ), result.output
    assert 0 < server.requests < low  # the calls stopped at the cap, well before the drafting's end
