"""Judge prices per model id, in USD per million tokens.

DeepEval computes no cost for custom models, so rag-ci prices every judge call
itself from the token counts the provider returns. Resolution order:
`judge.prices` in rag-ci.yml > a maintained price table (genai-prices, when
installed) > this table (exact id, then the id without its date/version suffix) >
a fallback lookup (DeepEval's own model tables, passed in by
the provider layer) > free for self-hosted providers (ollama, openai-compatible).
A paid provider with no known price is a configuration error: a silent $0 would
make the cost report lie.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rag_ci.judges.families import normalise_model_id


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000


FREE = Price(0.0, 0.0)

# Public list prices (standard tier, no caching/batch discounts). Keys are bare
# model names; dated snapshots fall back to their base name below.
PRICE_TABLE: dict[str, Price] = {
    # OpenAI
    "gpt-4.1": Price(2.00, 8.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.40),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4o-2024-05-13": Price(5.00, 15.00),
    "gpt-4o-mini": Price(0.15, 0.60),
    "o3": Price(2.00, 8.00),
    "o3-mini": Price(1.10, 4.40),
    "o4-mini": Price(1.10, 4.40),
    "gpt-5": Price(1.25, 10.00),
    "gpt-5-mini": Price(0.25, 2.00),
    "gpt-5-nano": Price(0.05, 0.40),
    # Anthropic
    "claude-haiku-4-5": Price(1.00, 5.00),
    "claude-sonnet-4-5": Price(3.00, 15.00),
    "claude-sonnet-4": Price(3.00, 15.00),
    "claude-opus-4-1": Price(15.00, 75.00),
    "claude-opus-4": Price(15.00, 75.00),
    "claude-3-7-sonnet": Price(3.00, 15.00),
    "claude-3-5-sonnet": Price(3.00, 15.00),
    "claude-3-5-haiku": Price(0.80, 4.00),
    "claude-3-haiku": Price(0.25, 1.25),
    # Google
    "gemini-2.5-pro": Price(1.25, 10.00),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.5-flash-lite": Price(0.10, 0.40),
    "gemini-2.0-flash": Price(0.10, 0.40),
    "gemini-2.0-flash-lite": Price(0.075, 0.30),
    "gemini-1.5-pro": Price(1.25, 5.00),
    "gemini-1.5-flash": Price(0.075, 0.30),
}

# Suffixes that name a snapshot of a base model: -2025-04-14, -20251001, -0613, -001, -v1:0.
_SNAPSHOT_SUFFIX = re.compile(
    r"(-v\d+(:\d+)?|-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{4}|-\d{3}|-preview(-\d{2}-\d{2})?)$"
)


def base_model_names(model: str) -> list[str]:
    """`model`, then the names left after stripping snapshot suffixes one by one."""
    names = [model]
    current = model
    while True:
        stripped = _SNAPSHOT_SUFFIX.sub("", current)
        if stripped == current or not stripped:
            return names
        names.append(stripped)
        current = stripped


def resolve_price(
    model: str,
    *,
    override: Price | None = None,
    self_hosted: bool = False,
    fallback: Callable[[str], Price | None] | None = None,
    maintained: Callable[[str], Price | None] | None = None,
) -> Price | None:
    """The price of `model`, or None when unknown (the caller decides whether that is fatal).
    `maintained` (a maintained price table: rag_ci.judges.maintained_prices) is asked first."""
    if override is not None:
        return override
    if maintained is not None and (found := maintained(model)) is not None:
        return found
    # The clouds' ids name the same models: `us.anthropic.claude-…-v1:0` (Bedrock),
    # `claude-haiku-4-5@20251001` (Vertex).
    bare = normalise_model_id(model)[1].replace("@", "-")
    for name in base_model_names(bare):
        if name in PRICE_TABLE:
            return PRICE_TABLE[name]
    if fallback is not None:
        for name in base_model_names(bare):
            found = fallback(name)
            if found is not None:
                return found
    if self_hosted:
        return FREE
    return None
