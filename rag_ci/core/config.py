"""rag-ci.yml (README.md, "rag-ci.yml"): the config models and their parsing, with file:line errors.

Pure: takes text, returns models. Reading files and scanning `corpora_dir` is the
caller's job (rag_ci.files.project).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError as PydanticError, model_validator, field_validator

from rag_ci.core.base.api_mapping import check_template, compile_expression
from rag_ci.core.base.hashing import stable_hash
from rag_ci.core.base.yamlsrc import load_yaml, to_plain, where
from rag_ci.errors import ValidationError

RETRIEVAL_METRICS = ("hit_at_k", "mrr", "ndcg", "source_precision", "source_recall", "keyword_coverage", "refusal")
JUDGE_METRICS = ("faithfulness", "answer_relevancy", "contextual_precision", "contextual_recall", "correctness", "completeness")

# Defaults when `metrics:` is absent. threshold None = reported, not gating.
DEFAULT_RETRIEVAL_METRICS: dict[str, dict[str, Any]] = {
    "hit_at_k": {"k": 5, "threshold": 1.0},
    "mrr": {"threshold": None},
    "ndcg": {"k": 5, "threshold": None},
    "source_recall": {"k": 5, "threshold": None},
    "keyword_coverage": {"threshold": 0.6},
    "refusal": {"threshold": 1.0},
}
DEFAULT_JUDGE_METRICS: dict[str, dict[str, Any]] = {
    "faithfulness": {"threshold": 0.7},
    "answer_relevancy": {"threshold": 0.7},
    "contextual_precision": {"threshold": 0.5},
    "contextual_recall": {"threshold": 0.7},
    "correctness": {"threshold": 1.0},
    "completeness": {"threshold": 1.0},
}


# ${NAME} in target.env and target.build_args values: read from rag-ci's environment.
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class _Strict(BaseModel):
    # NaN and infinity are never meaningful settings: a NaN threshold fails every
    # question and, as NaN != NaN, makes every later baseline incompatible.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class CorpusSpec(_Strict):
    description: str = ""
    # The corpus's folder of documents: set by the scan of `corpora_dir`, or given in a
    # `corpora:` table (relative to rag-ci.yml). `validate --coverage`, `questions generate`
    # and the documents' fingerprints read it; the RAG never sees it.
    path: str | None = None


class _TargetBase(_Strict):
    build: list[str] = Field(default_factory=list)
    generator_model: str | None = None
    generator_family: str | None = None
    timeout_s: float = Field(60.0, gt=0)
    concurrency: int = Field(8, ge=1, le=256)
    # Circuit breaker (docs/targets.md): the run stops asking once no call has succeeded for
    # this long while calls failed (default: three time-outs), or once the first
    # `max_errors_at_start` questions all failed (default: max(10, 2 × concurrency)).
    max_wait_s: float | None = Field(None, gt=0)
    max_errors_at_start: int | None = Field(None, ge=1)
    # Unscored requests sent before the questions, so cold first calls are not timed
    # (docs/noise.md#4-budgets). Default: one per call in flight (min(concurrency, processes)).
    warmup: int | None = Field(None, ge=0, le=256)
    # Judge calls in flight may grow from `concurrency` up to this while the provider's
    # rate-limit headers show more than half its request budget left (hosted APIs only).
    concurrency_max: int = Field(32, ge=1, le=256)
    # The target's environment is an allow-list (rag_ci.targets.processes): the basics, then
    # the variables named here (exact names or `PREFIX_*`), then `env` (values may say ${NAME}).
    env: dict[str, str] = Field(default_factory=dict)
    pass_env: list[str] = Field(default_factory=list)
    secret_env: list[str] = Field(default_factory=list)  # names in env/pass_env whose values are redacted

    @model_validator(mode="after")
    def _secret_env_named(self) -> "_TargetBase":
        from fnmatch import fnmatchcase

        for name in self.secret_env:
            if name not in self.env and not any(fnmatchcase(name, p) for p in self.pass_env):
                raise ValueError(f"secret_env names {name}, which is neither in target.env nor in target.pass_env")
        return self

    def env_references(self) -> list[tuple[str, str]]:
        """(field, NAME) for each ${NAME} the target's values read from rag-ci's environment."""
        fields = {"target.env": self.env, "target.build_args": getattr(self, "build_args", {})}
        return [(f"{field}.{key}", name) for field, values in fields.items() for key, value in values.items()
                for name in _ENV_REFERENCE.findall(value)]

    def breaker_wait_s(self) -> float:
        return self.max_wait_s if self.max_wait_s is not None else 3 * self.timeout_s

    def warmup_requests(self, parallel: int) -> int:
        return self.warmup if self.warmup is not None else parallel

    def breaker_errors_at_start(self, parallel: int) -> int:
        return self.max_errors_at_start if self.max_errors_at_start is not None else max(10, 2 * parallel)


class PythonTargetConfig(_TargetBase):
    kind: Literal["python"]
    entry: str = Field(pattern=r"^[\w.]+:[\w.]+$")
    path: list[str] = Field(default_factory=list)  # extra sys.path entries, relative to the config
    # The interpreter the worker runs with: a path (relative to the config) or a name on the
    # target's PATH. Unset: the RAG's venv inside rag-ci's image, rag-ci's interpreter elsewhere.
    python: str | None = Field(None, min_length=1)
    processes: int = Field(1, ge=1, le=64)  # worker processes; each imports the entry and answers one call at a time
    restart_limit: int = Field(10, ge=0)


class CommandTargetConfig(_TargetBase):
    kind: Literal["command"]
    command: list[str] = Field(min_length=1)
    processes: int = Field(1, ge=1, le=64)  # parallel copies; each answers one line at a time
    restart_limit: int = Field(10, ge=0)


def _expression(value: str | None) -> str | None:
    if value is not None:
        compile_expression(value)  # ValueError: reported with the file and line
    return value


class ContextMapping(_Strict):
    """JMESPath expressions read on each item of `contexts` (defaults: the contract's names)."""

    text: str = "text"
    doc_id: str = "doc_id"  # from the chunk's own metadata, never echoed from the request
    source: str = "source"
    score: str = "score"

    @field_validator("*")
    @classmethod
    def _compiles(cls, value: str) -> str | None:
        return _expression(value)


class ResponseMapping(_Strict):
    """`target.response`: where the app's reply keeps the answer and the contexts (JMESPath)."""

    answer: str
    contexts: str | None = None  # a list; each item is read with `context`
    context: ContextMapping = Field(default_factory=ContextMapping)
    usage: str | None = None  # an object in the contract's shape: {model: meta.model, ...}

    @field_validator("answer", "contexts", "usage")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        return _expression(value)


class _ApiMapped(_Strict):
    """`request`/`response` for the targets spoken to over HTTP (docs/targets.md)."""

    # The app's request body: "{id}", "{question}", "{corpora}" are filled in (the last with the list).
    request: Any = None
    response: ResponseMapping | None = None

    @field_validator("request")
    @classmethod
    def _template(cls, value: Any) -> Any:
        if value is not None:
            check_template(value)
        return value


class HttpTargetConfig(_TargetBase, _ApiMapped):
    kind: Literal["http"]
    url: str
    start: list[str] | None = None
    health: str | None = None  # URL (or path on `url`'s host) that answers 2xx when ready
    startup_timeout_s: float = Field(60.0, gt=0)
    headers: dict[str, str] = Field(default_factory=dict)


class DockerResources(_Strict):
    cpus: float | None = None
    memory: str | None = None  # "2g"


class DockerTargetConfig(_TargetBase, _ApiMapped):
    kind: Literal["docker"]
    dockerfile: str = "Dockerfile"
    context: str = "."
    build_args: dict[str, str] = Field(default_factory=dict)
    target: str | None = None  # build stage
    # BuildKit (the docker CLI's buildx) when it is there, else the SDK's classic builder (docs/docker-target.md).
    builder: Literal["auto", "buildx", "classic"] = "auto"
    # Run this instead of the image's ENTRYPOINT and CMD (like `docker run --entrypoint`).
    command: list[str] | None = Field(None, min_length=1)
    port: int = 8000
    path: str = "/query"
    health: str = "/health"
    startup_timeout_s: float = Field(120.0, gt=0)
    resources: DockerResources = Field(default_factory=DockerResources)


TargetConfig = Annotated[
    PythonTargetConfig | CommandTargetConfig | HttpTargetConfig | DockerTargetConfig,
    Field(discriminator="kind"),
]


class JudgePrices(_Strict):
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class ModelConfig(_Strict):
    """A model rag-ci calls through its provider layer (rag_ci.judges): the judge, and the
    writer that drafts questions (`rag-ci questions generate`). Same providers, pinning,
    retries, concurrency and prices for both."""

    provider: Literal["openai", "anthropic", "gemini", "ollama", "openai-compatible", "fake", "none"] = "none"
    model: str | None = None
    temperature: float = Field(0.0, ge=0, le=2)  # the range every provider accepts
    base_url: str | None = None
    api_key_env: str | None = None  # name of the env var holding the key (defaults per provider)
    family: str | None = None
    allow_alias: bool = False
    concurrency: int = Field(8, ge=1, le=256)
    # Calls in flight may grow from `concurrency` up to this while the provider's
    # rate-limit headers show more than half its request budget left (hosted APIs only).
    concurrency_max: int = Field(32, ge=1, le=256)
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(6, ge=0)
    backoff_s: float = Field(0.5, ge=0)  # first retry back-off (doubles per retry) when no Retry-After is sent
    # Circuit breaker: once no call has succeeded for this long, the model is given up
    # for the rest of the run and its remaining calls fail at once.
    max_wait_s: float = Field(300.0, gt=0)
    prices: JudgePrices | None = None

    @model_validator(mode="after")
    def _model_required(self) -> "ModelConfig":
        if self.provider not in ("none", "fake") and not self.model:  # the fakes have one model each
            role = "writer" if isinstance(self, WriterConfig) else "judge"
            raise ValueError(f"{role}.model is required for provider '{self.provider}'")
        return self


class JudgeConfig(ModelConfig):
    # Human calibration (docs/judges.md): the report warns when the judge's latest
    # calibration is older than this, or its Cohen's kappa below min_kappa.
    calibration_max_age_days: int = Field(180, ge=1)
    min_kappa: float = Field(0.6, ge=-1, le=1)
    # Opt-in: a reworded answer the judge finds to state exactly the baseline answer's facts
    # keeps the baseline's answer verdicts (one binary judge call instead of re-judging).
    reuse_equivalent_answers: bool = False


class WriterConfig(ModelConfig):
    """`writer:` — the model `rag-ci questions generate` drafts questions with (docs/questions.md).
    Never of the judge's family: a judge grades what its own family wrote more kindly."""

    # The whole drafting's bound (`--time-limit` overrides it): past it the jobs still running
    # end, and what the finished ones drafted is kept.
    time_limit_s: float = Field(1800.0, gt=0)


class MetricConfig(_Strict):
    threshold: float | None = Field(None, ge=0, le=1)  # every metric's score is in [0, 1]
    k: int | None = Field(None, ge=1)
    criteria: str | None = None  # GEval criteria override (correctness / completeness)


_RELATIVE = re.compile(r"^\+?(\d+(\.\d+)?)\s*%$")


def _budget_limit(value: float | str | None) -> float | str | None:
    """A budget is absolute (a number) or relative to the baseline ("+20%")."""
    if value is None or isinstance(value, (int, float)) and not isinstance(value, bool):
        if value is not None and value < 0:
            raise ValueError("a budget must be >= 0")
        return value
    if isinstance(value, str) and _RELATIVE.match(value.strip()):
        return value.strip()
    raise ValueError(f"expected a number (absolute) or a relative limit like \"+20%\", got {value!r}")


class BudgetsConfig(_Strict):
    """Gates on latency and cost (docs/gate.md); a breach is listed with its numbers and fails."""

    latency_p50: float | str | None = None  # seconds, or "+20%" of the baseline's
    latency_p95: float | str | None = None
    cost_per_question_usd: float | str | None = None  # generator cost per question
    judge_cost_usd: float | str | None = None  # judge spend of the whole run, re-asks included

    @field_validator("*", mode="before")
    @classmethod
    def _limit(cls, value: Any) -> Any:
        return _budget_limit(value)


class GateConfig(_Strict):
    fail_on: Literal["any_regression", "significant_drop", "never"] = "any_regression"
    confirm_runs: int = Field(3, ge=0, le=15)
    # Generator noise (docs/noise.md): re-ask a flipped question up to this many times.
    confirm_target_runs: int = Field(3, ge=0, le=15)
    alpha: float = Field(0.05, gt=0, lt=1)  # significance level of every test in the report and gate
    budgets: BudgetsConfig = Field(default_factory=BudgetsConfig)
    # A run where more than this share of questions errored (judge-metric errors included)
    # is broken, not a result: exit 2, never a baseline (docs/gate.md).
    max_error_rate: float = Field(0.2, ge=0.0, le=1.0)
    # A full run (dispatch/schedule, before a release) fails (exit 2) when its judge has no
    # valid human calibration in the history (docs/judges.md).
    require_calibration: bool = False
    # Accepted regressions (docs/accepted.md), relative to the question set's folder. Read
    # from the pull request itself, never pinned to the baseline's policy.
    accepted: str = "accepted.yml"


class BaselineConfig(_Strict):
    # Answers per question on a run that is not for a pull request (the baseline on main).
    samples: int = Field(1, ge=1, le=15)


class Config(_Strict):
    questions: str = "questions.yml"
    corpora: dict[str, CorpusSpec] = Field(default_factory=dict)
    corpora_dir: str | None = None
    target: TargetConfig
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    writer: WriterConfig | None = None  # drafts questions; never part of a run (docs/questions.md)
    metrics: dict[str, MetricConfig] | None = None
    gate: GateConfig = Field(default_factory=GateConfig)
    baseline: BaselineConfig = Field(default_factory=BaselineConfig)

    @model_validator(mode="after")
    def _check(self) -> "Config":
        if self.metrics is not None:
            unknown = sorted(set(self.metrics) - set(RETRIEVAL_METRICS) - set(JUDGE_METRICS))
            if unknown:
                known = ", ".join(RETRIEVAL_METRICS + JUDGE_METRICS)
                raise ValueError(f"unknown metric(s) {', '.join(unknown)}; known: {known}")
        if self.corpora and self.corpora_dir:
            raise ValueError("give either `corpora:` or `corpora_dir:`, not both")
        return self

    @property
    def judge_enabled(self) -> bool:
        return self.judge.provider != "none"

    def metric_configs(self) -> dict[str, MetricConfig]:
        """The metrics in force, with defaults filled in (judge metrics only with a judge)."""
        if self.metrics is None:
            chosen = dict(DEFAULT_RETRIEVAL_METRICS)
            if self.judge_enabled:
                chosen.update(DEFAULT_JUDGE_METRICS)
            return {name: MetricConfig(**cfg) for name, cfg in chosen.items()}
        result: dict[str, MetricConfig] = {}
        for name, cfg in self.metrics.items():
            if name in JUDGE_METRICS and not self.judge_enabled:
                continue
            defaults = {**DEFAULT_RETRIEVAL_METRICS, **DEFAULT_JUDGE_METRICS}.get(name, {})
            merged = {**defaults, **cfg.model_dump(exclude_unset=True)}
            result[name] = MetricConfig(**merged)
        return result

    def thresholds(self) -> dict[str, float | None]:
        return {name: m.threshold for name, m in sorted(self.metric_configs().items())}

    def fingerprint(self) -> str:
        # The writer only drafts questions: it changes nothing a run does.
        return stable_hash(self.model_dump(mode="json", exclude={"writer"}))


def parse_config(text: str, filename: str) -> Config:
    """Parse rag-ci.yml text into a Config; every problem names file and line."""
    node = load_yaml(text, filename)
    if not isinstance(node, dict):
        raise ValidationError([f"{filename}:1: expected a mapping at the top level"])
    try:
        return Config.model_validate(to_plain(node))
    except PydanticError as exc:
        raise ValidationError(pydantic_problems(exc, node, filename)) from None


def pydantic_problems(exc: PydanticError, node: Any, filename: str, label: str = "") -> list[str]:
    """One line per pydantic error: `file:line: [label] field.path: message`."""
    problems = []
    for err in exc.errors():
        # Discriminated unions add the tag ('command') to the location: drop it.
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p in ("python", "command", "http", "docker") and "target" in err["loc"][:1]))
        field = ".".join(str(p) for p in loc) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":  # `$schema:` is what the editors' first-line comment does
            msg = "unknown field" + (f": write `# yaml-language-server: $schema={err.get('input')}` as the first line instead"
                                     if loc[-1:] == ("$schema",) else "")
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        prefix = f"{label}: " if label else ""
        problems.append(f"{where(filename, node, loc)}: {prefix}{field}: {msg}")
    return problems
