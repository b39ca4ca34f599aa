"""rag-ci.yml: the config models and their parsing, with file:line errors. Every field's
`description=` is the user's documentation: docs/configuration.md and the JSON Schema are generated
from it (python scripts/docs_gen.py).

One module per part of the file: `base` (the strict model, the metrics), `targets` (`target:`
and its kinds), `models` (`judge:` and `writer:`), `gate` (`gate:` and `baseline:`), `file`
(the top level and the parsing). Importers keep `from rag_ci.core.config import …`.
"""

from rag_ci.core.config.base import (
    DEFAULT_JUDGE_METRICS,
    DEFAULT_RETRIEVAL_METRICS,
    JUDGE_METRICS,
    RETRIEVAL_METRICS,
    MetricConfig,
    StrictModel,
)
from rag_ci.core.config.file import Config, CorpusSpec, parse_config, pydantic_problems
from rag_ci.core.config.gate import BaselineConfig, BudgetsConfig, GateConfig
from rag_ci.core.config.models import JudgeConfig, JudgePrices, ModelConfig, WriterConfig
from rag_ci.core.config.report import ReportConfig
from rag_ci.core.config.targets import (
    TARGET_CONFIGS,
    CommandTargetConfig,
    DockerResources,
    DockerTargetConfig,
    HttpTargetConfig,
    PythonTargetConfig,
    TargetBase,
    TargetConfig,
)

__all__ = [
    "DEFAULT_JUDGE_METRICS",
    "DEFAULT_RETRIEVAL_METRICS",
    "JUDGE_METRICS",
    "RETRIEVAL_METRICS",
    "TARGET_CONFIGS",
    "BaselineConfig",
    "BudgetsConfig",
    "CommandTargetConfig",
    "Config",
    "CorpusSpec",
    "DockerResources",
    "DockerTargetConfig",
    "GateConfig",
    "HttpTargetConfig",
    "JudgeConfig",
    "JudgePrices",
    "MetricConfig",
    "ModelConfig",
    "PythonTargetConfig",
    "ReportConfig",
    "StrictModel",
    "TargetBase",
    "TargetConfig",
    "WriterConfig",
    "parse_config",
    "pydantic_problems",
]
