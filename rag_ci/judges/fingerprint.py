"""The judge fingerprint: what must be equal for two runs' verdicts to be comparable.

Provider, exact model id, temperature, each metric's configuration (thresholds,
GEval steps), the DeepEval version and a hash of the prompt templates DeepEval
4.x renders for these metrics (read from its `templates/metrics/templates.json`),
so a DeepEval upgrade that rewrites a prompt is caught even without a version bump.
"""

from __future__ import annotations

import json

from rag_ci.core.base.hashing import stable_hash
from rag_ci.core.config import JudgeConfig
from rag_ci.core.results import JudgeFingerprint
from rag_ci.judges.env import deepeval_package_dir, deepeval_version
from rag_ci.judges.metrics import JudgeMetricSpec

__all__ = ["build_fingerprint", "prompt_templates_hash"]


def prompt_templates_hash(class_names: list[str]) -> str:
    """Hash of DeepEval's prompt templates for these metric classes, plus the shared fragments."""
    # Read the file rather than importing DeepEval: a fully cached run never needs the import.
    raw = (deepeval_package_dir() / "templates" / "metrics" / "templates.json").read_text(encoding="utf-8")
    bundle = json.loads(raw)
    chosen = {name: bundle.get(name) for name in sorted(set(class_names)) + ["_fragments"]}
    return stable_hash(chosen, 32)


def build_fingerprint(judge: JudgeConfig, specs: dict[str, JudgeMetricSpec]) -> JudgeFingerprint:
    return JudgeFingerprint(
        provider=judge.provider,
        model=judge.model or "",
        temperature=judge.temperature,
        deepeval_version=deepeval_version(),
        metrics={name: spec.identity() for name, spec in specs.items()},
        prompt_hash=prompt_templates_hash([spec.deepeval_class for spec in specs.values()]),
    )
