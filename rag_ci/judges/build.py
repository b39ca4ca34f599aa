"""Building the judge: `--judge` parsing, pinning and family checks, then the scorer.

`build_judge(config, baseline=..., full=...)` returns the engine's `JudgeScorer`
(or None for `judge.provider: none`). Every check that can fail without calling
anything runs first: pinning, family separation, the extra being installed, the API
key, the price. Importing this package is cheap; DeepEval and the provider SDK are
imported by `build_judge`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rag_ci.core.config import Config, JudgeConfig, ModelConfig
from rag_ci.core.config.providers import takes_model
from rag_ci.errors import RagCiError
from rag_ci.judges.families import FAKE_FAMILY, canonical_family, check_families, family_of
from rag_ci.judges.pinning import alias_problem
from rag_ci.judges.prices import Price, resolve_price
from rag_ci.judges.providers import ProviderSpec, provider_spec

if TYPE_CHECKING:
    from rag_ci.core.results import RunResult
    from rag_ci.core.scoring.judge_scorer import JudgeScorer

__all__ = ["build_judge", "judge_family", "parse_judge_option", "validate_judge"]

_JUDGE_OPTION = re.compile(r"^(?P<provider>[a-z][a-z-]*)(?::(?P<model>.+?))?(?:@(?P<url>https?://\S+))?$")


def parse_judge_option(value: str, option: str = "--judge") -> dict[str, Any]:
    """`--judge PROVIDER:MODEL[@BASE_URL]` → JudgeConfig fields (also `--writer`'s: `option`).

    Model ids may contain ':' (Ollama tags, Bedrock ids), so only the first ':'
    separates the provider, and only an '@' followed by http(s):// starts the URL.
    The settings that belong to one model are reset so the ones in rag-ci.yml are not
    silently applied to another: `base_url` (None when absent), `family` and `prices`.
    Merge the result over the config's judge fields.
    """
    match = _JUDGE_OPTION.match(value.strip())
    usage = (
        "expected PROVIDER:MODEL[@BASE_URL], e.g. openai:gpt-4.1-mini-2025-04-14, "
        "ollama:qwen2.5:7b-instruct, openai-compatible:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1, none, "
        "or fake (a dry run)"
    )
    if not match:
        raise RagCiError(f"{option} {value!r}: {usage}")
    provider, model, url = match.group("provider"), match.group("model"), match.group("url")
    if provider != "none":
        provider_spec(provider)  # unknown provider → RagCiError listing the known ones
    if not takes_model(provider):
        if model or url:
            raise RagCiError(f"{option} {value!r}: '{provider}' takes no model")
        return {"provider": provider, "model": None, "base_url": None, "family": None, "prices": None}
    if not model:
        raise RagCiError(f"{option} {value!r}: the model is missing; {usage}")
    return {"provider": provider, "model": model, "base_url": url, "family": None, "prices": None}


def judge_family(judge: ModelConfig, role: str = "judge") -> str:
    """The judge's family (override first); RagCiError when unknown. `role`: "writer" for the writer."""
    if judge.family:
        declared = canonical_family(judge.family)
        if declared == FAKE_FAMILY and judge.provider != "fake":
            raise RagCiError(
                f"{role}.family '{judge.family}' is the fake {role}'s (--{role} fake); a real {role} model "
                f"cannot claim it: name the lab that trained '{judge.model}'"
            )
        return declared
    family = family_of(judge.model or "")
    if family is None:
        other = "the generator's" if role == "judge" else "the judge's"
        raise RagCiError(
            f"rag-ci does not know which family the {role} model '{judge.model}' belongs to; set `{role}.family` "
            f"in rag-ci.yml (e.g. meta, alibaba, mistral, openai) so it can be kept apart from {other}"
        )
    return family


def validate_judge(config: Config) -> str | None:
    """Pinning and family checks that need no network and no DeepEval. Returns the judge family."""
    judge = config.judge
    if judge.provider == "none":
        return None
    if judge.provider == "fake":
        return _validate_fake(judge)
    provider_spec(judge.provider)
    assert judge.model is not None  # JudgeConfig requires it for every provider but 'none'
    problem = alias_problem(judge.provider, judge.model)
    if problem and not judge.allow_alias:
        raise RagCiError(
            f"judge.model {problem}. A floating alias changes under you and makes verdicts incomparable with "
            f"the baseline; pin an exact, dated/versioned id, or set `judge.allow_alias: true` to accept the risk"
        )
    family = judge_family(judge)
    target = config.target
    if target.generator_model or target.generator_family:
        generator_family = canonical_family(target.generator_family) if target.generator_family else None
        check_families(
            judge.model, family, target.generator_model or f"({generator_family})", generator_family
        )
    return family


def _validate_fake(judge: JudgeConfig) -> str:
    """The fake judge has one model and no family to keep apart from the generator's."""
    from rag_ci.judges.fake import FAKE_MODEL

    if judge.model not in (None, FAKE_MODEL):
        raise RagCiError(f"judge.model '{judge.model}': the fake judge has one model; leave judge.model out")
    if judge.family and canonical_family(judge.family) != FAKE_FAMILY:
        raise RagCiError(
            f"judge.family '{judge.family}': the fake judge is of no lab; leave judge.family out"
        )
    return FAKE_FAMILY


def api_key(
    judge: ModelConfig, spec: ProviderSpec, env: Mapping[str, str], role: str = "judge"
) -> str | None:
    name = judge.api_key_env or spec.api_key_env
    if name is None:
        return None
    key = env.get(name)
    if not key and (spec.key_required or judge.api_key_env):
        raise RagCiError(
            f"{role} provider '{spec.name}' needs an API key in the environment variable {name}, which is not set"
            + ("" if judge.api_key_env else f" (or name another variable with `{role}.api_key_env`)")
        )
    return key or None


def model_price(judge: ModelConfig, spec: ProviderSpec, role: str = "judge") -> Price:
    override = Price(judge.prices.input_per_mtok, judge.prices.output_per_mtok) if judge.prices else None
    if spec.facts.always_free and override is None:
        return Price(0.0, 0.0)
    from rag_ci.judges.deepeval_prices import deepeval_price

    # DeepEval's tables price provider APIs only; asking them about a self-hosted model would
    # just import DeepEval for nothing.
    fallback = None if spec.self_hosted else deepeval_price
    price = resolve_price(
        judge.model or "", override=override, self_hosted=spec.self_hosted, fallback=fallback
    )
    if price is None:
        raise RagCiError(
            f"rag-ci has no price for {role} model '{judge.model}', so {role} cost cannot be reported; set "
            f"`{role}.prices: {{input_per_mtok: ..., output_per_mtok: ...}}` (USD per million tokens; 0 to skip)"
        )
    return price


def build_judge(
    config: Config,
    *,
    baseline: RunResult | None = None,
    full: bool = False,
    env: Mapping[str, str] | None = None,
) -> JudgeScorer | None:
    """The scorer for `config.judge`, or None when the judge is off. Raises RagCiError before any call."""
    judge = config.judge
    if judge.provider == "none":
        return None
    family = validate_judge(config)
    if judge.provider == "fake":
        from rag_ci.judges.fake import FAKE_MODEL

        judge = judge.model_copy(update={"model": FAKE_MODEL})
    assert family is not None and judge.model is not None
    spec = provider_spec(judge.provider)
    spec.ensure_installed()
    key = api_key(judge, spec, os.environ if env is None else env)
    price = model_price(judge, spec)

    from rag_ci.judges.cache import VerdictCache
    from rag_ci.judges.client import JudgeClient
    from rag_ci.judges.fake import FakeJudgeScorer
    from rag_ci.judges.fingerprint import build_fingerprint
    from rag_ci.judges.metrics import metric_specs
    from rag_ci.judges.providers.base import ProviderSettings
    from rag_ci.judges.replies import replies_from_run
    from rag_ci.judges.retry import RetryPolicy
    from rag_ci.judges.scorer import DeepEvalJudgeScorer

    specs = metric_specs(config.metric_configs())
    fingerprint = build_fingerprint(judge, specs)
    settings = ProviderSettings(
        model=judge.model,
        temperature=judge.temperature,
        base_url=judge.base_url,
        api_key=key,
        timeout_s=judge.timeout_s,
    )
    policy = RetryPolicy(
        max_retries=judge.max_retries,
        backoff_s=judge.backoff_s,
        timeout_s=judge.timeout_s,
        max_wait_s=judge.max_wait_s,
    )
    client = JudgeClient(
        lambda: spec.create(settings),
        policy=policy,
        concurrency=judge.concurrency,
        price=price,
        concurrency_max=judge.concurrency_max,
    )
    generator_family = (
        canonical_family(config.target.generator_family) if config.target.generator_family else None
    )
    # The fake judge's scorer skips the family check: a dry run, never a gate (rag_ci.judges.fake).
    scorer_class = FakeJudgeScorer if judge.provider == "fake" else DeepEvalJudgeScorer
    scorer = scorer_class(
        fingerprint=fingerprint,
        specs=specs,
        client=client,
        judge_family=family,
        generator_family=generator_family,
        cache=VerdictCache() if full else VerdictCache.from_run(baseline),
        full=full,
        confirm_runs=config.gate.confirm_runs,
        preload=spec.sdk_modules,
        replies={} if full else replies_from_run(baseline),
        reuse_equivalent=judge.reuse_equivalent_answers,
        disagreement=judge.disagreement_rate,
        votes_on_changed_answers=judge.votes_on_changed_answers,
    )
    if len(scorer.cache) == 0:
        scorer.prefetch()  # every answer will be judged: import DeepEval while the target runs
    return scorer
