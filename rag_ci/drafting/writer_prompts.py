"""What the writer is told: rag-ci's styling of the kinds DeepEval has no evolution for, and
the fixed text of every prompt (a draft quoting it is the prompt echoed back)."""

from __future__ import annotations

from rag_ci.judges.fake_writer import OUT_OF_SCOPE_MARKER, VAGUE_MARKER

QUALITY_RETRIES = 3  # DeepEval's FiltrationConfig.max_quality_retries default
# rag-ci's styling of the two kinds DeepEval has no evolution for (StylingConfig).
VAGUE_FORMAT = (
    f"A short, {VAGUE_MARKER} as a hurried user would type it into a chat: lower case, "
    "no greeting, leaves out the product and the exact terms"
)
OUT_OF_SCOPE_STYLE = {
    "scenario": "A user of an assistant that answers only from the documents described in the context asks "
    f"{OUT_OF_SCOPE_MARKER}, in the same everyday register",
    "task": "The assistant must say the documents do not cover it",
    "input_format": "One plain question, answerable in general but not from these documents",
}

_EVOLUTION_TEMPLATES = (
    "reasoning_evolution",
    "concretizing_evolution",
    "constrained_evolution",
    "hypothetical_scenario_evolution",
    "comparative_question_evolution",
    "multi_context_evolution",
    "in_breadth_evolution",
)


def prompt_templates() -> tuple[str, ...]:
    """The fixed text of every prompt the writer gets: rag-ci's styling and DeepEval's
    Synthesizer templates with empty inputs. A draft that quotes them is the prompt echoed
    back, not a question (rag_ci.core.questionset.draft_checks)."""
    from rag_ci.drafting.fake_offline import deepeval_installed
    from rag_ci.judges.env import prepare_deepeval_environment

    style = OUT_OF_SCOPE_STYLE
    if not deepeval_installed():  # the fake writer's offline run: only rag-ci's own prompts exist
        return (VAGUE_FORMAT, *style.values())
    prepare_deepeval_environment()
    from deepeval.synthesizer.templates import EvolutionTemplate, FilterTemplate, SynthesizerTemplate

    texts = [
        VAGUE_FORMAT,
        *style.values(),
        SynthesizerTemplate.generate_synthetic_inputs(
            context="",
            max_goldens_per_context="",
            scenario=style["scenario"],
            task=style["task"],
            input_format=style["input_format"],
        ),
        SynthesizerTemplate.rewrite_evolved_input(
            "", scenario=style["scenario"], task=style["task"], input_format=style["input_format"]
        ),
        SynthesizerTemplate.rewrite_synthetic_inputs("", "", ""),
        SynthesizerTemplate.generate_synthetic_expected_output("", "", None),
        FilterTemplate.evaluate_synthetic_inputs(""),
    ]
    texts += [getattr(EvolutionTemplate, name)(input="", context=[]) for name in _EVOLUTION_TEMPLATES]
    return tuple(texts)
