"""The writer is not the judge: the checks `questions generate` makes before any call."""

import pytest

from rag_ci.core.config import Config, WriterConfig
from rag_ci.drafting.question_drafts import writer_config
from rag_ci.drafting.writer_check import FAKE_WRITER_MODEL, check_writer
from rag_ci.errors import RagCiError


def config(judge=None, generator="mistral-small-2409", writer=None):
    data = {"target": {"kind": "command", "command": ["x"], "generator_model": generator}}
    if judge:
        data["judge"] = judge
    if writer:
        data["writer"] = writer
    return Config.model_validate(data)


def test_a_writer_of_the_judges_family_is_refused_naming_both():
    cfg = config(judge={"provider": "anthropic", "model": "claude-haiku-4-5-20251001"})
    with pytest.raises(
        RagCiError,
        match=r"the writer 'claude-sonnet-4-5-20250929' and the judge 'claude-haiku-4-5-20251001' "
        r"are both of the anthropic family",
    ):
        check_writer(cfg, WriterConfig(provider="anthropic", model="claude-sonnet-4-5-20250929"))
    # An override says which lab trained a self-hosted model: it counts like the guessed family.
    with pytest.raises(RagCiError, match="both of the anthropic family"):
        check_writer(cfg, WriterConfig(provider="openai-compatible", model="my-finetune", family="claude"))
    ok = check_writer(cfg, WriterConfig(provider="openai", model="gpt-4.1-mini-2025-04-14"))
    assert (ok.label, ok.family, ok.warnings) == ("openai:gpt-4.1-mini-2025-04-14", "openai", ())


def test_a_writer_sharing_the_generators_family_is_warned_about_and_no_judge_is_noted():
    check = check_writer(
        config(generator="mistral-small-2409"),
        WriterConfig(provider="openai-compatible", model="mistral-large-2411"),
    )
    assert any("shares the RAG generator's family (mistral)" in w for w in check.warnings)
    assert any("no judge configured" in w for w in check.warnings)


def test_the_writer_must_be_pinned_named_and_of_a_known_family():
    with pytest.raises(RagCiError, match="no writer"):
        check_writer(config(), WriterConfig())
    with pytest.raises(RagCiError, match="writer.model .*Pin an exact"):
        check_writer(config(), WriterConfig(provider="openai", model="gpt-4o-latest"))
    with pytest.raises(
        RagCiError, match=r"which family the writer model 'house-model' belongs to; set `writer.family`"
    ):
        check_writer(config(), WriterConfig(provider="openai-compatible", model="house-model"))
    assert check_writer(config(judge={"provider": "fake"}), WriterConfig(provider="fake")).label == "fake"
    with pytest.raises(RagCiError, match="the fake writer has one model"):
        check_writer(config(), WriterConfig(provider="fake", model="gpt-4.1"))
    assert FAKE_WRITER_MODEL != "rag-ci-fake-judge-1"


def test_writer_option_overrides_the_writer_block_like_judge_does():
    cfg = config(
        writer={
            "provider": "openai",
            "model": "gpt-4.1-mini-2025-04-14",
            "concurrency": 3,
            "family": "openai",
        }
    )
    merged = writer_config(cfg, "ollama:qwen2.5:7b@http://127.0.0.1:11434")
    assert (merged.provider, merged.model, merged.base_url, merged.concurrency, merged.family) == (
        "ollama",
        "qwen2.5:7b",
        "http://127.0.0.1:11434",
        3,
        None,
    )
    assert writer_config(cfg, None) == cfg.writer
    with pytest.raises(RagCiError, match=r"^--writer 'nope:': "):
        writer_config(cfg, "nope:")
    with pytest.raises(Exception, match="writer.model is required"):
        config(writer={"provider": "openai"})
    # a writer changes no run
    assert config(writer={"provider": "fake"}).fingerprint() == config().fingerprint()


# -- what the writer wrote is checked for its own prompt ------------------------------------------------

from rag_ci.core.questionset.draft_checks import echo_problem, template_shingles  # noqa: E402
from rag_ci.drafting.writer_prompts import prompt_templates  # noqa: E402


@pytest.mark.parametrize(
    "text, reason",
    [
        (
            "Scenario: A user asks about a subject none of these documents covers. Task: refuse. Input Format: One plain question",
            "echoes the writer's prompt ('Scenario:')",
        ),
        (
            "Input: What is the charge time?\nContext: the battery page",
            "echoes the writer's prompt (Context:, Input:)",
        ),
        (
            "What is the charge time?\nGenerated Response: 6 hours",
            "echoes the writer's prompt ('Generated Response:')",
        ),
        ('{"input": "What is the charge time?"}', "echoes the writer's prompt"),
        (
            "I want you to act as a copywriter: what is the charge time?",
            "holds the writer's instructions ('I want you to act as')",
        ),
        (
            "Based on the provided context, how long does charging take?",
            "holds the writer's instructions ('the provided context')",
        ),
        ("Sure, here is the question: how long does charging take?", "holds the writer's instructions"),
        ("How long does the {product} take to charge?", "holds a placeholder ('{product}')"),
        ("How long does [insert product name] take to charge?", "holds a placeholder"),
    ],
)
def test_prompt_echoes_instructions_and_placeholders_are_found(text, reason):
    assert (echo_problem(text) or "").startswith(reason)


def test_a_question_quoting_the_writers_templates_is_found_and_the_documents_own_words_are_not():
    quoted = template_shingles(prompt_templates())
    # DeepEval's own example (its in-breadth template) and rag-ci's out-of-scope styling, sent back as questions
    assert echo_problem("What is the boiling point of water at the top of Mount Everest?", quoted) == (
        "quotes the writer's template ('boiling point of water at')"
    )
    assert (
        echo_problem(
            "Which answers only from the documents described in the context asks about cats?", quoted
        )
        or ""
    ).startswith("quotes the writer's template")
    # documentation is not an echo: "must be", `{id}` in code, JSON in prose, a colon
    for fine in (
        "The battery must be charged between 0 °C and 40 °C.",
        "GET `/items/{id}` returns the item as a JSON object.",
        "How long does the PowerPack 400 take to charge: with the 2 A charger?",
        "What do the documents say about the task scheduler?",
        "Which input format does the importer read?",
        "Input: a list of file paths, one per line.",
        "Example: set `--port 8000` to listen on port 8000.",
    ):
        assert echo_problem(fine, quoted) is None, fine
