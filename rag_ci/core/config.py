"""rag-ci.yml: the config models and their parsing, with file:line errors. Every field's
`description=` is the user's documentation: docs/configuration.md and the JSON Schema are generated
from it (python scripts/docs_gen.py).

Pure: takes text, returns models. Reading files and scanning `corpora_dir` is the
caller's job (rag_ci.files.project).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticError

from rag_ci.core.base.api_config import ApiMapped as _ApiMapped
from rag_ci.core.base.hashing import stable_hash
from rag_ci.core.base.yamlsrc import load_yaml, to_plain, where
from rag_ci.errors import ValidationError

RETRIEVAL_METRICS = (
    "hit_at_k",
    "mrr",
    "ndcg",
    "source_precision",
    "source_recall",
    "keyword_coverage",
    "refusal",
)
JUDGE_METRICS = (
    "faithfulness",
    "answer_relevancy",
    "contextual_precision",
    "contextual_recall",
    "correctness",
    "completeness",
)

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
    description: str = Field(
        "",
        description="What the corpus holds, in a few words: shown in reports and to the writer that drafts questions.",
    )
    # The corpus's folder of documents: set by the scan of `corpora_dir`, or given in a
    # `corpora:` table (relative to rag-ci.yml). `validate --coverage`, `questions generate`
    # and the documents' fingerprints read it; the RAG never sees it.
    path: str | None = Field(
        None,
        description="The corpus's folder of documents, relative to rag-ci.yml (set for you by `corpora_dir`). Read by `validate --coverage`, `questions generate` and the documents' fingerprints; never sent to the RAG.",
    )


class _TargetBase(_Strict):
    build: list[str] = Field(
        default_factory=list,
        description="Shell commands run in the config's folder before the target starts (install, index the documents).",
    )
    generator_model: str | None = Field(
        None,
        description="The model your RAG answers with, when its replies do not report it (`usage.model`): the judge must be of another family.",
    )
    generator_family: str | None = Field(
        None,
        description="The family (lab) of the generator model, when rag-ci cannot tell it from the name: meta, mistral, openai...",
    )
    timeout_s: float = Field(
        60.0,
        gt=0,
        description="Seconds one question may take; past it the question is an `error` and the run goes on.",
    )
    concurrency: int = Field(
        8,
        ge=1,
        le=256,
        description="Questions asked at the same time (at most `processes` for the python and command kinds).",
    )
    # Circuit breaker (docs/targets.md): the run stops asking once no call has succeeded for
    # this long while calls failed (default: three time-outs), or once the first
    # `max_errors_at_start` questions all failed (default: max(10, 2 × the calls in flight)).
    max_wait_s: float | None = Field(
        None,
        gt=0,
        description="Circuit breaker: stop asking once no call has succeeded for this many seconds while calls failed. Default: three time-outs.",
    )
    max_errors_at_start: int | None = Field(
        None,
        ge=1,
        description="Circuit breaker: stop when this many first questions all failed. Default: max(10, 2 × the calls in flight: `concurrency`, at most `processes`).",
    )
    # Unscored requests sent before the questions, so cold first calls are not timed
    # (docs/noise.md#4-budgets). Default: one per call in flight (min(concurrency, processes)).
    warmup: int | None = Field(
        None,
        ge=0,
        le=256,
        description="Unscored requests sent before the questions, so cold first calls are not timed. Default: one per call in flight.",
    )
    # The target's environment is an allow-list (rag_ci.targets.processes): the basics, then
    # the variables named here (exact names or `PREFIX_*`), then `env` (values may say ${NAME}).
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Variables set in the target's environment; a value may read rag-ci's own with ${NAME}.",
    )
    pass_env: list[str] = Field(
        default_factory=list,
        description="Names (or `PREFIX_*` patterns) of rag-ci's environment variables passed to the target; nothing else is.",
    )
    secret_env: list[str] = Field(
        default_factory=list,
        description="Names in `env`/`pass_env` whose values are secrets: redacted from every log and report.",
    )

    @model_validator(mode="after")
    def _secret_env_named(self) -> _TargetBase:
        from fnmatch import fnmatchcase

        for name in self.secret_env:
            if name not in self.env and not any(fnmatchcase(name, p) for p in self.pass_env):
                raise ValueError(
                    f"secret_env names {name}, which is neither in target.env nor in target.pass_env"
                )
        return self

    def env_references(self) -> list[tuple[str, str]]:
        """(field, NAME) for each ${NAME} the target's values read from rag-ci's environment."""
        fields = {"target.env": self.env, "target.build_args": getattr(self, "build_args", {})}
        return [
            (f"{field}.{key}", name)
            for field, values in fields.items()
            for key, value in values.items()
            for name in _ENV_REFERENCE.findall(value)
        ]

    def breaker_wait_s(self) -> float:
        return self.max_wait_s if self.max_wait_s is not None else 3 * self.timeout_s

    def warmup_requests(self, parallel: int) -> int:
        return self.warmup if self.warmup is not None else parallel

    def breaker_errors_at_start(self, parallel: int) -> int:
        return self.max_errors_at_start if self.max_errors_at_start is not None else max(10, 2 * parallel)


class PythonTargetConfig(_TargetBase):
    kind: Literal["python"] = Field(
        description="`python`: rag-ci imports your function and calls it in worker processes."
    )
    entry: str = Field(
        pattern=r"^[\w.]+:[\w.]+$",
        description="The function answering a question, as `module:function` (or `module:Class.method`).",
    )
    path: list[str] = Field(
        default_factory=list, description="Extra `sys.path` entries for the import, relative to rag-ci.yml."
    )
    # The interpreter the worker runs with: a path (relative to the config) or a name on the
    # target's PATH. Unset: the RAG's venv inside rag-ci's image, rag-ci's interpreter elsewhere.
    python: str | None = Field(
        None,
        min_length=1,
        description="The interpreter the workers run with: a path relative to rag-ci.yml, or a name on the target's PATH. Default: the RAG's venv in rag-ci's image, rag-ci's own interpreter elsewhere.",
    )
    processes: int = Field(
        1,
        ge=1,
        le=64,
        description="Worker processes; each imports the entry and answers one question at a time.",
    )
    restart_limit: int = Field(
        10, ge=0, description="Times a crashed worker is restarted before the run stops."
    )


class CommandTargetConfig(_TargetBase):
    kind: Literal["command"] = Field(
        description="`command`: a program reading one JSON request per line on stdin and writing one JSON reply per line."
    )
    command: list[str] = Field(min_length=1, description="The program and its arguments (no shell).")
    processes: int = Field(
        1, ge=1, le=64, description="Copies of the program run in parallel; each answers one line at a time."
    )
    restart_limit: int = Field(
        10, ge=0, description="Times a crashed program is restarted before the run stops."
    )


class HttpTargetConfig(_TargetBase, _ApiMapped):
    kind: Literal["http"] = Field(description="`http`: rag-ci POSTs each question to a URL.")
    url: str = Field(description="The endpoint each question is POSTed to.")
    start: list[str] | None = Field(
        None,
        description="A command starting the server (no shell); stopped after the run. Unset: the server is already running.",
    )
    health: str | None = Field(
        None, description="A URL (or a path on `url`'s host) that answers 2xx once the server is ready."
    )
    startup_timeout_s: float = Field(
        60.0, gt=0, description="Seconds the started server has to become healthy."
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="HTTP headers sent with every request; values may read rag-ci's environment with ${NAME}.",
    )


class DockerResources(_Strict):
    cpus: float | None = Field(None, description="CPUs the container may use (`docker run --cpus`).")
    memory: str | None = Field(
        None, description='Memory the container may use, e.g. "2g" (`docker run --memory`).'
    )


class DockerTargetConfig(_TargetBase, _ApiMapped):
    kind: Literal["docker"] = Field(
        description="`docker`: rag-ci builds your image, runs it and POSTs each question to it."
    )
    dockerfile: str = Field("Dockerfile", description="The Dockerfile, relative to `context`.")
    context: str = Field(".", description="The build context, relative to rag-ci.yml.")
    build_args: dict[str, str] = Field(
        default_factory=dict,
        description="Build arguments; values may read rag-ci's environment with ${NAME}.",
    )
    target: str | None = Field(None, description="The build stage to build (`docker build --target`).")
    # BuildKit (the docker CLI's buildx) when it is there, else the SDK's classic builder (docs/docker-target.md).
    builder: Literal["auto", "buildx", "classic"] = Field(
        "auto",
        description="`buildx` (BuildKit), `classic` (the SDK's builder), or `auto`: BuildKit when the docker CLI has it.",
    )
    # Run this instead of the image's ENTRYPOINT and CMD (like `docker run --entrypoint`).
    command: list[str] | None = Field(
        None,
        min_length=1,
        description="Run this instead of the image's ENTRYPOINT and CMD (like `docker run --entrypoint`).",
    )
    port: int = Field(8000, description="The port the app listens on inside the container.")
    path: str = Field("/query", description="The path each question is POSTed to.")
    health: str = Field("/health", description="The path that answers 2xx once the app is ready.")
    startup_timeout_s: float = Field(120.0, gt=0, description="Seconds the container has to become healthy.")
    resources: DockerResources = Field(
        default_factory=DockerResources, description="Limits of the container's CPUs and memory."
    )


TargetConfig = Annotated[
    PythonTargetConfig | CommandTargetConfig | HttpTargetConfig | DockerTargetConfig,
    Field(discriminator="kind"),
]


class JudgePrices(_Strict):
    input_per_mtok: float = Field(ge=0, description="US dollars per million input tokens.")
    output_per_mtok: float = Field(ge=0, description="US dollars per million output tokens.")


class ModelConfig(_Strict):
    """A model rag-ci calls through its provider layer (rag_ci.judges): the judge, and the
    writer that drafts questions (`rag-ci questions generate`). Same providers, pinning,
    retries, concurrency and prices for both."""

    provider: Literal["openai", "anthropic", "gemini", "ollama", "openai-compatible", "fake", "none"] = Field(
        "none",
        description="Who serves the model: a hosted API, `openai-compatible` (vLLM, llama.cpp, LM Studio), `ollama`, `fake` (a dry run) or `none`.",
    )
    model: str | None = Field(
        None, description="The model id, pinned: a dated or versioned id, not an alias that moves."
    )
    temperature: float = Field(
        0.0, ge=0, le=2, description="Sampling temperature (0 for the steadiest verdicts)."
    )  # the range every provider accepts
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
        if self.provider not in ("none", "fake") and not self.model:  # the fakes have one model each
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


class MetricConfig(_Strict):
    threshold: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Score in [0, 1] a question needs to pass this metric; unset: reported, not gating.",
    )
    k: int | None = Field(
        None, ge=1, description="How many retrieved contexts are read (hit_at_k, ndcg, source_recall...)."
    )
    criteria: str | None = Field(
        None, description="GEval criteria replacing rag-ci's own (correctness, completeness)."
    )


_RELATIVE = re.compile(r"^\+?(\d+(\.\d+)?)\s*%$")


def _budget_limit(value: float | str | None) -> float | str | None:
    """A budget is absolute (a number) or relative to the baseline ("+20%")."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        if value is not None and value < 0:
            raise ValueError("a budget must be >= 0")
        return value
    if isinstance(value, str) and _RELATIVE.match(value.strip()):
        return value.strip()
    raise ValueError(f'expected a number (absolute) or a relative limit like "+20%", got {value!r}')


class BudgetsConfig(_Strict):
    """Gates on latency and cost (docs/gate.md); a breach is listed with its numbers and fails."""

    latency_p50: float | str | None = Field(
        None, description='Limit of the median latency: seconds, or relative to the baseline\'s ("+20%").'
    )
    latency_p95: float | str | None = Field(
        None,
        description='Limit of the 95th-percentile latency: seconds, or relative to the baseline\'s ("+20%").',
    )
    cost_per_question_usd: float | str | None = Field(
        None,
        description="Limit of the generator's cost per question: US dollars, or relative to the baseline's (\"+20%\").",
    )
    judge_cost_usd: float | str | None = Field(
        None,
        description='Limit of the judge\'s spend on the whole run, re-asks included: US dollars, or relative ("+20%").',
    )

    @field_validator("*", mode="before")
    @classmethod
    def _limit(cls, value: Any) -> Any:
        return _budget_limit(value)


class GateConfig(_Strict):
    fail_on: Literal["any_regression", "significant_drop", "never"] = Field(
        "any_regression",
        description="What fails the check: `any_regression` (a question that passed fails), `significant_drop` (only a statistically significant drop), `never` (report only).",
    )
    confirm_runs: int = Field(
        3,
        ge=0,
        le=15,
        description="Judge noise: a verdict that flipped is judged again, the majority of this many runs kept.",
    )
    # Generator noise (docs/noise.md): re-ask a flipped question up to this many times.
    confirm_target_runs: int = Field(
        3,
        ge=0,
        le=15,
        description="Generator noise: a question that flipped is asked again up to this many times; a pass clears it.",
    )
    alpha: float = Field(
        0.05,
        gt=0,
        lt=1,
        description="Significance level of every statistical test in the report and the gate.",
    )
    budgets: BudgetsConfig = Field(
        default_factory=BudgetsConfig, description="Limits on latency and cost; a breach fails the check."
    )
    # A run where more than this share of questions errored (judge-metric errors included)
    # is broken, not a result: exit 2, never a baseline (docs/gate.md).
    max_error_rate: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description="A run where more than this share of questions errored is broken, not a result: exit 2, never a baseline.",
    )
    # A full run (dispatch/schedule, before a release) fails (exit 2) when its judge has no
    # valid human calibration in the history (docs/judges.md).
    require_calibration: bool = Field(
        False,
        description="A full run (schedule, dispatch) fails when its judge has no valid human calibration in the history.",
    )
    # Accepted regressions (docs/accepted.md), relative to the question set's folder. Read
    # from the pull request itself, never pinned to the baseline's policy.
    accepted: str = Field(
        "accepted.yml",
        description="The file of accepted regressions, relative to the question set's folder; read from the pull request itself.",
    )


class BaselineConfig(_Strict):
    # Answers per question on a run that is not for a pull request (the baseline on main).
    samples: int = Field(
        1,
        ge=1,
        le=15,
        description="Answers per question on a baseline run (not for a pull request), the majority kept.",
    )


class Config(_Strict):
    questions: str = Field("questions.yml", description="The question set, relative to rag-ci.yml.")
    corpora: dict[str, CorpusSpec] = Field(
        default_factory=dict,
        description="The routing table: corpus name → its description and folder. Or use `corpora_dir`.",
    )
    corpora_dir: str | None = Field(
        None,
        description="A folder where each sub-folder holding a config.yml is one corpus (instead of `corpora`).",
    )
    target: TargetConfig = Field(
        description="Your RAG, and how rag-ci asks it: `kind` is python, command, http or docker."
    )
    judge: JudgeConfig = Field(
        default_factory=JudgeConfig,
        description="The judge model of the DeepEval metrics; `provider: none` keeps to the judge-free metrics.",
    )
    writer: WriterConfig | None = Field(
        None, description="The model `questions generate` drafts questions with; never part of a run."
    )
    metrics: dict[str, MetricConfig] | None = Field(
        None,
        description="The metrics and their thresholds. Default: the judge-free ones, and the judge's when a judge is set.",
    )
    gate: GateConfig = Field(
        default_factory=GateConfig, description="What fails the check, and how noise is kept from failing it."
    )
    baseline: BaselineConfig = Field(
        default_factory=BaselineConfig, description="How the baseline is made on main."
    )

    @model_validator(mode="after")
    def _check(self) -> Config:
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
        loc = tuple(
            p
            for p in err["loc"]
            if not (
                isinstance(p, str)
                and p in ("python", "command", "http", "docker")
                and "target" in err["loc"][:1]
            )
        )
        field = ".".join(str(p) for p in loc) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":  # `$schema:` is what the editors' first-line comment does
            msg = "unknown field" + (
                f": write `# yaml-language-server: $schema={err.get('input')}` as the first line instead"
                if loc[-1:] == ("$schema",)
                else ""
            )
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        prefix = f"{label}: " if label else ""
        problems.append(f"{where(filename, node, loc)}: {prefix}{field}: {msg}")
    return problems
