"""Judge prices: overrides, dated snapshots priced as their base model, unknown paid models flagged."""

from rag_ci.judges.prices import FREE, PRICE_TABLE, Price, base_model_names, resolve_price


def test_a_dated_snapshot_is_priced_as_its_base_model():
    assert resolve_price("gpt-4.1-mini-2025-04-14") == PRICE_TABLE["gpt-4.1-mini"]
    assert resolve_price("claude-haiku-4-5-20251001") == PRICE_TABLE["claude-haiku-4-5"]
    assert resolve_price("gemini-2.0-flash-001") == PRICE_TABLE["gemini-2.0-flash"]


def test_an_exact_snapshot_price_wins_over_the_base_price():
    assert resolve_price("gpt-4o-2024-05-13") == Price(5.0, 15.0)


def test_the_config_override_wins():
    assert resolve_price("gpt-4.1-mini-2025-04-14", override=Price(1, 2)) == Price(1, 2)


def test_unknown_models_are_free_only_when_self_hosted():
    assert resolve_price("acme-judge-7b") is None
    assert resolve_price("acme-judge-7b", self_hosted=True) == FREE
    assert resolve_price(
        "acme-judge-7b", fallback=lambda name: Price(3, 4) if name == "acme-judge-7b" else None
    ) == Price(3, 4)


def test_cost_is_per_million_tokens():
    assert Price(2.0, 8.0).cost(1_000_000, 500_000) == 6.0


def test_base_names_strip_one_suffix_at_a_time():
    assert base_model_names("claude-3-5-sonnet-20241022-v2:0") == [
        "claude-3-5-sonnet-20241022-v2:0",
        "claude-3-5-sonnet-20241022",
        "claude-3-5-sonnet",
    ]
