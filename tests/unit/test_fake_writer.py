"""The fake writer answers the prompts the installed DeepEval's Synthesizer renders."""

import pytest

from rag_ci.drafting.writer_prompts import OUT_OF_SCOPE_STYLE, VAGUE_FORMAT
from rag_ci.judges.env import prepare_deepeval_environment
from rag_ci.judges.fake import JudgePolicy

prepare_deepeval_environment()
templates = pytest.importorskip("deepeval.synthesizer.templates")
Synth, Filter, Evolve = templates.SynthesizerTemplate, templates.FilterTemplate, templates.EvolutionTemplate

PASSAGE = (
    "## Charging\n\nThe standard 2 A charger fills an empty PowerPack 400 in 6.5 hours. "
    "Charge only between 0 °C and 40 °C; outside this range the charger LED blinks red."
)
policy = JudgePolicy()


def inputs(context, n, **style):
    prompt = Synth.generate_synthetic_inputs(
        context=str(context),
        max_goldens_per_context=str(n),
        scenario=style.get("scenario"),
        task=style.get("task"),
        input_format=style.get("input_format"),
        available_source_files=style.get("files"),
    )
    assert policy.kind(prompt) == "synth_inputs"
    return [d["input"] for d in policy.answer(prompt)["data"]]


def test_questions_come_from_the_passages_telling_sentences_and_the_reference_is_their_sentence():
    asked = inputs([PASSAGE], 2)
    assert len(asked) == 2 and asked[0] != asked[1] and all(q.endswith("?") for q in asked)
    prompt = Synth.generate_synthetic_expected_output(asked[0], PASSAGE, None)
    assert policy.kind(prompt) == "synth_expected"
    assert policy.answer(prompt)["response"] in PASSAGE  # verbatim: its keywords are the passage's own
    styled = inputs([PASSAGE], 2, input_format=VAGUE_FORMAT)
    assert styled == list(reversed(asked))  # a vague job asks about the other sentences first


def test_filtration_rewrite_evolution_and_styling_are_answered_deterministically():
    good, vague = (
        Filter.evaluate_synthetic_inputs("How long does the standard charger need?"),
        Filter.evaluate_synthetic_inputs("Why?"),
    )
    assert policy.kind(good) == "synth_filter"
    assert policy.answer(good)["score"] == 1.0 and policy.answer(vague)["score"] < 0.5
    rewrite = Synth.rewrite_synthetic_inputs([PASSAGE], "Why?", "too vague")
    assert policy.answer(rewrite)["rewritten_input"] == "Why in Charging?"
    for evolution in (
        Evolve.reasoning_evolution,
        Evolve.concretizing_evolution,
        Evolve.comparative_question_evolution,
        Evolve.in_breadth_evolution,
        Evolve.multi_context_evolution,
    ):
        prompt = evolution(input="How long does the charger need?", context=[PASSAGE])
        assert (
            policy.kind(prompt) == "synth_evolve"
            and policy.answer(prompt)["response"] == "How long does the charger need?"
        )
    styled = Synth.rewrite_evolved_input(
        "What do the documents say about standard charger fills?", input_format=VAGUE_FORMAT
    )
    casual = policy.answer(styled)["input"]
    assert (
        casual == policy.answer(styled)["input"] and "standard charger fills" in casual and casual.islower()
    )
    plain = Synth.rewrite_evolved_input("Which chess opening?", **OUT_OF_SCOPE_STYLE)
    assert policy.answer(plain)["input"] == "Which chess opening?"


def test_a_cross_file_context_gets_a_comparison_and_out_of_scope_gets_everyday_subjects():
    files = ["du2/battery.md", "du3/battery.md"]
    labelled = [
        f"[SOURCE: {files[0]}] {PASSAGE}",
        f"[SOURCE: {files[1]}] The 4 A fast charger fills the PowerPack 625 in 4 hours.",
    ]
    prompt = Synth.generate_synthetic_inputs(
        context=str(labelled),
        max_goldens_per_context="1",
        scenario=None,
        task=None,
        input_format=None,
        available_source_files=files,
    )
    (item,) = policy.answer(prompt)["data"]
    assert item["used_source_files"] == files and "compare between du2 and du3" in item["input"]
    outside = inputs(["The 'du2' documents cover: Battery."], 3, **OUT_OF_SCOPE_STYLE)
    assert len(set(outside)) == 3 and not any("battery" in q.lower() for q in outside)


def test_the_fake_writer_drafts_from_whole_sentences_never_from_code_headings_or_list_markers():
    context = (
        "## Disabling lifespan\n\nTo disable the lifespan protocol, start the server with this option:\n\n"
        "```bash\n# the option takes on, off or auto\nuvicorn main:app --lifespan off\n```\n\n"
        "- The default is auto, which enables the protocol when the application supports it.\n- on\n\n"
        "Lifespan events run once per worker process."
    )
    asked = inputs([context], 5)
    answers = [
        policy.answer(Synth.generate_synthetic_expected_output(q, context, None))["response"] for q in asked
    ]
    assert answers and set(answers) <= {
        "The default is auto, which enables the protocol when the application supports it.",
        "Lifespan events run once per worker process.",
    }
