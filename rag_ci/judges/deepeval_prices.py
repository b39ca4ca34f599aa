"""Fallback judge prices from DeepEval's own model tables (kept up to date upstream)."""

from __future__ import annotations

from rag_ci.judges.env import prepare_deepeval_environment
from rag_ci.judges.prices import Price


def deepeval_price(model: str) -> Price | None:
    prepare_deepeval_environment()
    try:
        from deepeval.models.llms import constants
    except ImportError:
        return None
    for table_name in (
        "OPENAI_MODELS_DATA",
        "ANTHROPIC_MODELS_DATA",
        "GEMINI_MODELS_DATA",
        "GROK_MODELS_DATA",
        "DEEPSEEK_MODELS_DATA",
        "KIMI_MODELS_DATA",
    ):
        table = getattr(constants, table_name, None)
        if table is None or model not in table:
            continue
        data = table[model]
        if data.input_price is not None and data.output_price is not None:
            # DeepEval stores USD per token.
            return Price(data.input_price * 1_000_000, data.output_price * 1_000_000)
    return None
