"""Judge prices from a maintained price table (genai-prices), preferred to rag-ci's hand-kept one.

genai-prices (pydantic's table of LLM API prices, by provider and model, updated with each
release) covers the clouds' own ids (`anthropic.claude-…-v1:0` on Bedrock, `claude-…@…` on
Vertex, Azure's deployments of OpenAI models). Only its bundled snapshot is read, never a
download: the price of a run does not depend on the network. It is an optional package
(`pip install 'rag-ci-gate[prices]'`); without it, or for a model it does not know, rag-ci's
table and then DeepEval's answer (rag_ci.judges.prices).
"""

from __future__ import annotations

import functools
import importlib.util

from rag_ci.judges.prices import Price

# rag-ci's provider → genai-prices' provider id (the self-hosted ones are priced by their owner).
_PROVIDER_IDS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "azure-openai": "azure",
    "bedrock": "aws",
    "vertex": "google",
}
# Priced at a small request: some models cost more per token past a long context (a tier).
_TOKENS = 1000


def maintained_price(provider: str) -> functools.partial[Price | None] | None:
    """The lookup for `provider`'s models, or None (a self-hosted provider, or genai-prices absent)."""
    if provider not in _PROVIDER_IDS or importlib.util.find_spec("genai_prices") is None:
        return None
    return functools.partial(_lookup, _PROVIDER_IDS[provider])


def _lookup(provider_id: str, model: str) -> Price | None:
    from genai_prices import Usage, calc_price

    try:
        found = calc_price(Usage(input_tokens=_TOKENS, output_tokens=_TOKENS), model, provider_id=provider_id)
    except LookupError:
        return None
    per_mtok = 1_000_000 / _TOKENS
    return Price(float(found.input_price) * per_mtok, float(found.output_price) * per_mtok)
