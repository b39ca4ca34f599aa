"""Checking the writer before anything is called: the writer model of `questions generate`
must be named, pinned and of another family than the judge's (rag_ci.drafting.writer drafts)."""

from __future__ import annotations

from dataclasses import dataclass

from rag_ci.core.config import Config, WriterConfig
from rag_ci.errors import RagCiError
from rag_ci.judges.build import judge_family
from rag_ci.judges.families import FAKE_FAMILY, canonical_family, family_of
from rag_ci.judges.pinning import alias_problem
from rag_ci.judges.providers import provider_spec

FAKE_WRITER_MODEL = "rag-ci-fake-writer-1"


@dataclass(frozen=True)
class WriterCheck:
    label: str  # PROVIDER:MODEL, as provenance records it
    family: str
    warnings: tuple[str, ...] = ()


def check_writer(config: Config, writer: WriterConfig, *, estimate: bool = False) -> WriterCheck:
    """Everything that can refuse the writer without calling it: a missing writer, an alias,
    an unknown family, and above all a writer of the judge's family (refused, naming both).
    For `--estimate` (nothing is called) an alias or an unknown family is a warning, to be
    settled before drafting; a writer of the judge's family is refused all the same."""
    if writer.provider == "none":
        raise RagCiError(
            "no writer: pass `--writer PROVIDER:MODEL[@BASE_URL]` (or `--writer fake` for a dry run), "
            "or add a `writer:` block to rag-ci.yml (the same fields as `judge:`)"
        )
    if writer.provider == "fake":
        if writer.model not in (None, FAKE_WRITER_MODEL):
            raise RagCiError(
                f"writer.model '{writer.model}': the fake writer has one model; leave writer.model out"
            )
        return WriterCheck(
            "fake",
            FAKE_FAMILY,
            (
                "fake writer: drafts written by a fixed policy, offline, for a dry run; "
                "review them as carefully as any",
            ),
        )
    provider_spec(writer.provider)
    assert writer.model is not None
    label, warnings = f"{writer.provider}:{writer.model}", []
    problem = alias_problem(writer.provider, writer.model)
    if problem and not writer.allow_alias:
        message = (
            f"writer.model {problem}. Pin an exact, dated/versioned id so the provenance says which model "
            f"wrote the drafts, or set `writer.allow_alias: true`"
        )
        if not estimate:
            raise RagCiError(message)
        warnings.append(f"{message} (before drafting; the estimate does not need it)")
    try:
        family = judge_family(writer, role="writer")
    except RagCiError as exc:
        if not estimate:
            raise
        return WriterCheck(
            label, "unknown", (*warnings, f"{exc} (before drafting; the estimate does not need it)")
        )
    judge = config.judge
    if judge.provider not in ("none", "fake"):
        theirs = judge_family(judge)
        if theirs == family:
            raise RagCiError(
                f"the writer '{writer.model}' and the judge '{judge.model}' are both of the {family} family: a judge "
                f"grades questions and references its own family wrote more kindly. Choose a writer of another family "
                f"(--writer or writer.provider / writer.model), or correct `writer.family` / `judge.family` if rag-ci "
                f"guessed a family wrong"
            )
    else:
        warnings.append(
            f"no judge configured: when you add one, choose it outside the writer's family ({family})"
        )
    target = config.target
    generator = (
        canonical_family(target.generator_family)
        if target.generator_family
        else family_of(target.generator_model or "")
    )
    if generator == family:
        warnings.append(
            f"the writer '{writer.model}' shares the RAG generator's family ({family}): its questions may be "
            f"phrased the way the generator answers best; a writer of another family tests it harder"
        )
    return WriterCheck(label, family, tuple(warnings))
