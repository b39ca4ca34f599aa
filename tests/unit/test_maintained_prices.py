"""Prices from the maintained table (genai-prices' bundled snapshot), preferred to rag-ci's own."""

import pytest

from rag_ci.judges.maintained_prices import maintained_price
from rag_ci.judges.prices import Price, resolve_price

pytest.importorskip("genai_prices")


@pytest.mark.parametrize(
    ("provider", "model", "price"),
    [
        ("bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0", Price(0.8, 4.0)),  # a Bedrock id
        ("vertex", "claude-haiku-4-5@20251001", Price(1.0, 5.0)),  # a Vertex id
        ("azure-openai", "gpt-4o-2024-08-06", Price(2.5, 10.0)),
        ("gemini", "gemini-2.5-pro", Price(1.25, 10.0)),  # the short-context tier, not the long one
    ],
)
def test_the_clouds_ids_are_priced_from_the_maintained_table(provider, model, price):
    found = maintained_price(provider)(model)
    assert found == pytest.approx(price)


def test_self_hosted_providers_are_not_looked_up_and_an_unknown_model_is_left_to_the_next_table():
    assert maintained_price("ollama") is None and maintained_price("openai-compatible") is None
    assert maintained_price("openai")("acme-judge-7b") is None


def test_the_maintained_table_comes_before_rag_cis_and_after_the_override():
    maintained = {"gpt-4.1-mini-2025-04-14": Price(9.0, 9.0)}.get
    assert resolve_price("gpt-4.1-mini-2025-04-14", maintained=maintained) == Price(9.0, 9.0)
    assert resolve_price("gpt-4.1-mini-2025-04-14", maintained=maintained, override=Price(1, 1)) == Price(
        1, 1
    )
    assert resolve_price("gpt-4.1-mini-2025-04-14", maintained=lambda _: None) == Price(0.40, 1.60)
