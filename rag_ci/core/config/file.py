"""rag-ci.yml as a whole: the top level (`Config`) and its parsing, with file:line errors.

Pure: takes text, returns models. Reading files and scanning `corpora_dir` is the
caller's job (rag_ci.files.project).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator
from pydantic import ValidationError as PydanticError

from rag_ci.core.base.hashing import stable_hash
from rag_ci.core.base.yamlsrc import load_yaml, to_plain, where
from rag_ci.core.config.base import (
    DEFAULT_JUDGE_METRICS,
    DEFAULT_RETRIEVAL_METRICS,
    JUDGE_METRICS,
    RETRIEVAL_METRICS,
    MetricConfig,
    StrictModel,
)
from rag_ci.core.config.gate import BaselineConfig, GateConfig
from rag_ci.core.config.models import JudgeConfig, WriterConfig
from rag_ci.core.config.report import ReportConfig
from rag_ci.core.config.targets import TARGET_CONFIGS, TargetConfig
from rag_ci.errors import ValidationError

_KINDS = tuple(TARGET_CONFIGS)


class CorpusSpec(StrictModel):
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


class Config(StrictModel):
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
        description=f"Your RAG, and how rag-ci asks it: `kind` is {', '.join(_KINDS[:-1])} or {_KINDS[-1]}."
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
    report: ReportConfig = Field(
        default_factory=ReportConfig, description="How the reports link out: each question's trace."
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
        # The writer only drafts questions, the report only links: neither changes what a run does.
        return stable_hash(self.model_dump(mode="json", exclude={"writer", "report"}))


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
            if not (isinstance(p, str) and p in TARGET_CONFIGS and "target" in err["loc"][:1])
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
