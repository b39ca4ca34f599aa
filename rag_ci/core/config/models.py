"""`judge:` and `writer:` — the models rag-ci calls through its provider layer (rag_ci.judges)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from rag_ci.core.config.base import StrictModel
from rag_ci.core.config.providers import ProviderName, takes_model


class JudgePrices(StrictModel):
    input_per_mtok: float = Field(ge=0, description="US dollars per million input tokens.")
    output_per_mtok: float = Field(ge=0, description="US dollars per million output tokens.")


class ModelConfig(StrictModel):
    """A model rag-ci calls through its provider layer (rag_ci.judges): the judge, and the
    writer that drafts questions (`rag-ci questions generate`). Same providers, pinning,
    retries, concurrency and prices for both."""

    provider: ProviderName = Field(
        "none",
        description="Who serves the model: a hosted API, `openai-compatible` (vLLM, llama.cpp, LM Studio), `ollama`, `fake` (a dry run) or `none`.",
    )
    model: str | None = Field(
        None, description="The model id, pinned: a dated or versioned id, not an alias that moves."
    )
    # the range every provider accepts
    temperature: float = Field(
        0.0, ge=0, le=2, description="Sampling temperature (0 for the steadiest verdicts)."
    )
    base_url: str | None = Field(
        None, description="The API's URL, for self-hosted and openai-compatible servers."
    )
    api_key_env: str | None = Field(
        None,
        description="The environment variable holding the API key. Default: the provider's usual one (OPENAI_API_KEY...).",
    )
    family: str | None = Field(
        None,
        description="The model's family (lab), when rag-ci cannot tell it from the id: kept apart from the generator's.",
    )
    allow_alias: bool = Field(
        False,
        description="Accept a model alias that may change under you (e.g. `gpt-4o`): verdicts may drift.",
    )
    concurrency: int = Field(8, ge=1, le=256, description="Calls in flight at the start.")
    # Calls in flight may grow from `concurrency` up to this while the provider's
    # rate-limit headers show more than half its request budget left (hosted APIs only).
    concurrency_max: int = Field(
        32,
        ge=1,
        le=256,
        description="Calls in flight may grow up to this while the provider's rate-limit headers show more than half its budget left (hosted APIs).",
    )
    timeout_s: float = Field(60.0, gt=0, description="Seconds one call may take before it is retried.")
    max_retries: int = Field(
        6, ge=0, description="Retries of a failed call (rate limit, time-out, server error)."
    )
    backoff_s: float = Field(
        0.5,
        ge=0,
        description="First retry's back-off in seconds, doubling each retry, when the provider sends no Retry-After.",
    )
    # Circuit breaker: once no call has succeeded for this long, the model is given up
    # for the rest of the run and its remaining calls fail at once.
    max_wait_s: float = Field(
        300.0,
        gt=0,
        description="Circuit breaker: once no call has succeeded for this many seconds, the model's remaining calls of the run fail at once.",
    )
    prices: JudgePrices | None = Field(
        None,
        description="Prices per million tokens, when rag-ci does not know the model's (or it is self-hosted but costs money).",
    )

    @model_validator(mode="after")
    def _model_required(self) -> ModelConfig:
        if takes_model(self.provider) and not self.model:  # the fakes have one model each
            role = "writer" if isinstance(self, WriterConfig) else "judge"
            raise ValueError(f"{role}.model is required for provider '{self.provider}'")
        return self


class JudgeConfig(ModelConfig):
    # Human calibration (docs/judges.md): the report warns when the judge's latest
    # calibration is older than this, or its Cohen's kappa below min_kappa.
    calibration_max_age_days: int = Field(
        180,
        ge=1,
        description="The report warns when the judge's latest human calibration is older than this.",
    )
    min_kappa: float = Field(
        0.6,
        ge=-1,
        le=1,
        description="The report warns when the judge's agreement with human labels (Cohen's kappa) is below this.",
    )
    # Opt-in: a reworded answer the judge finds to state exactly the baseline answer's facts
    # keeps the baseline's answer verdicts (one binary judge call instead of re-judging).
    reuse_equivalent_answers: bool = Field(
        False,
        description="A reworded answer the judge finds to state exactly the baseline answer's facts keeps the baseline's verdicts (one cheap call instead of re-judging).",
    )
    # The judge's disagreement rate p (docs/noise.md, "Judge noise"): how many agreeing verdicts
    # establish a flipped one. None: the documented default (5 %). `rag-ci calibrate` prints the
    # measured value to put here; pinned to the baseline's policy like the rest of the judge.
    disagreement_rate: float | None = Field(
        None,
        ge=0,
        le=0.5,
        description="The judge's measured disagreement rate p (`rag-ci calibrate` prints it): how many agreeing verdicts establish a flipped one. Unset: 5 %.",
    )
    # One verdict on a changed answer misses p of the truly failing ones (docs/noise.md, "Judge
    # noise"): 2 asks a second verdict when the first passes (about +1 call per judged metric).
    votes_on_changed_answers: Literal[1, 2] = Field(
        1,
        description="Verdicts on a changed answer whose baseline passed: 2 asks a second when the first passes, catching the regressions one noisy verdict misses, for about one more call per re-judged metric.",
    )


class WriterConfig(ModelConfig):
    """`writer:` — the model `rag-ci questions generate` drafts questions with (docs/questions.md).
    Never of the judge's family: a judge grades what its own family wrote more kindly."""

    # The whole drafting's bound (`--time-limit` overrides it): past it the jobs still running
    # end, and what the finished ones drafted is kept.
    time_limit_s: float = Field(
        1800.0,
        gt=0,
        description="Bound of a whole `questions generate` (`--time-limit` overrides it): the drafts finished by then are kept.",
    )
