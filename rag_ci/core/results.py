"""The results.json artifact (docs/report.md): a versioned pydantic schema.

A run writes one `RunResult`; the baseline on main is the same file. Everything
that compare, the report and the verdict cache need is here, so a results.json
is self-contained.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from rag_ci.core.base.lean_model import LeanModel

# Bump when a field changes meaning or is removed; compare refuses other versions.
SCHEMA_VERSION = 1
# The questions.yml format understood by this version of rag-ci.
QUESTION_SET_SCHEMA = 1

Verdict = Literal["pass", "fail", "error", "routing_error"]
# "retrieval": judges what was retrieved (hit@k, MRR, nDCG, source recall/precision);
# "answer": judge-free checks of the answer (keyword_coverage, refusal); "judge": an LLM judge.
# results.json files written before "answer" existed store "retrieval" for the answer checks.
MetricKind = Literal["retrieval", "answer", "judge"]


class _Model(LeanModel):  # no per-object "fields set" (rag_ci.core.base.lean_model says why)
    # NaN and infinity are refused: JSON has neither, and a NaN latency or score in a
    # results.json would poison every aggregate and comparison made with it.
    model_config = ConfigDict(extra="ignore", frozen=False, allow_inf_nan=False)


class Usage(_Model):
    """What the generator consumed for one answer, as the target reported it."""

    model: str | None = None
    input_tokens: int | None = Field(None, ge=0)
    output_tokens: int | None = Field(None, ge=0)
    cost_usd: float | None = Field(None, ge=0)


class Context(_Model):
    """One retrieved chunk, in the order the target returned it."""

    text: str
    doc_id: str | None = None
    source: str | None = None
    score: float | None = None


class MetricResult(_Model):
    """One metric on one question. `passed is None` means informative only (no threshold)."""

    name: str
    kind: MetricKind
    score: float | None = None
    threshold: float | None = None
    passed: bool | None = None
    reason: str | None = None
    error: str | None = None
    judge_cost_usd: float = Field(0.0, ge=0)
    # Verdict cache (docs/judges.md): the key this verdict was stored under, and whether
    # it was reused from the cache instead of asking the judge.
    cache_key: str | None = None
    cached: bool = False
    # Confirmation runs (docs/judges.md): each re-judged pass/fail, majority decides.
    confirm_runs: list[bool] = Field(default_factory=list)
    unstable: bool = False
    # Confirmation on both sides (docs/noise.md, "Judge noise"): the baseline's stored answer
    # re-judged, its stored verdict first; what that established (True: its pass holds, False:
    # the pass was noise, None: not re-judged or split); the verdict-cache key of that answer
    # (what the votes are about); the judge calls confirmation cost; and whether the flip
    # stayed split (head or baseline side): shown in the row, never gating.
    baseline_votes: list[bool] = Field(default_factory=list)
    baseline_confirmed: bool | None = None
    baseline_cache_key: str | None = None
    confirm_calls: int = 0
    judge_split: bool = False
    # What those votes disagreed on: the claim or statement whose verdict differed, else a failing
    # vote's reason. Untrusted (the answer's own words): escape when rendering.
    split_on: str | None = None
    # Judge replies a later run may reuse below the verdict (rag_ci.judges.replies): the
    # steps that read one input only, by hash of judge fingerprint + exact prompt.
    judge_replies: dict[str, Any] = Field(default_factory=dict)
    # Carried from the baseline because the judge found the new answer states the same facts
    # (judge.reuse_equivalent_answers); `cached` is set too.
    equivalent_answer: bool = False


class Sample(_Model):
    """One answer to a question when it was asked more than once (docs/noise.md)."""

    verdict: Verdict
    metrics: dict[str, bool | None] = Field(default_factory=dict)  # each metric's pass/fail on this answer
    answer_hash: str | None = None
    latency_s: float | None = None
    cost_usd: float = 0.0
    judge_cost_usd: float = 0.0


class CarriedVerdict(_Model):
    """The last known good verdict of a question that errored in this run (docs/gate.md).

    Written into a baseline so that an outage on main (a judge down, a missing key)
    never turns into a free pass: compare judges the question against this instead.
    """

    verdict: Verdict  # never "error": only a usable verdict is carried
    metrics: dict[str, MetricResult] = Field(default_factory=dict)
    leaks: list[str] = Field(default_factory=list)
    from_sha: str | None = None  # the run that produced the verdict
    question_hash: str  # the question it was given for; a changed question drops it


class QuestionResult(_Model):
    """Everything about one question in one run."""

    id: str
    question: str
    question_hash: str
    corpora: list[str]
    tags: list[str] = Field(default_factory=list)
    expect: str | None = None
    reference: str | None = None
    # The question's expected keywords: the comparison looks for the ones the answer lacks in
    # the chunks retrieved (rag_ci.core.comparison.retrieval_diff). Empty in older files.
    keywords: list[str] = Field(default_factory=list)
    request: dict[str, Any]
    answer: str | None = None
    contexts: list[Context] = Field(default_factory=list)
    latency_s: float | None = Field(None, ge=0)
    usage: Usage | None = None
    # The question's W3C trace (docs/traces.md): the id sent in its `traceparent`, and with
    # `target.traces: otlp` the seconds of each stage its spans show ("retrieval", "generation").
    trace_id: str | None = None
    trace_url: str | None = None  # report.trace_url with this trace id: the RAG's trace in the team's tool
    stage_latency_s: dict[str, float] = Field(default_factory=dict)
    error: str | None = None
    leaks: list[str] = Field(default_factory=list)  # doc_ids outside the routed corpora
    metrics: dict[str, MetricResult] = Field(default_factory=dict)
    verdict: Verdict
    # Where a failing question broke: "retrieval", "generation" or "both" (None when passing).
    failure_stage: Literal["retrieval", "generation", "both"] | None = None
    unstable: bool = False
    # Generator noise (docs/noise.md): every answer when the question was asked more than once
    # (baseline sampling or re-asking a flip), in the order asked; the fields above hold the
    # representative sample (docs/noise.md). `pass_rate` = passing samples / samples.
    samples: list[Sample] = Field(default_factory=list)
    pass_rate: float | None = None
    flaky: bool = False  # the samples disagreed
    reasked: bool = False  # the samples come from re-asking a flip (biased: they follow a failure)
    # Set only when this run errored on the question and an earlier baseline had a usable verdict.
    carried: CarriedVerdict | None = None
    # Questions follow their documents: each cited source -> the content fingerprint of the
    # document it names (None: it names none). Only sources of corpora with a known folder;
    # empty in results.json files written before rag-ci recorded it.
    source_fingerprints: dict[str, str | None] = Field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def first_sample_passed(self) -> bool:
        """The first answer's verdict: one unbiased draw per question, what the paired
        statistics compare (re-asks only ever follow a failed first sample)."""
        return self.samples[0].verdict == "pass" if self.samples else self.passed

    def first_sample_outcomes(self) -> dict[str, bool | None]:
        """Each metric's verdict on the first answer (None: not measured, or errored)."""
        if self.samples:
            return self.samples[0].metrics
        return {name: None if metric.error else metric.passed for name, metric in self.metrics.items()}

    @property
    def target_calls(self) -> int:
        return max(1, len(self.samples))

    @property
    def all_samples_judge_cost_usd(self) -> float:
        """Judge spend on every sample (the representative's is `judge_cost_usd`)."""
        return sum(s.judge_cost_usd for s in self.samples) if self.samples else self.judge_cost_usd

    @property
    def cost_usd(self) -> float:
        return (self.usage.cost_usd or 0.0) if self.usage else 0.0

    @property
    def judge_cost_usd(self) -> float:
        return sum(m.judge_cost_usd for m in self.metrics.values())


class JudgeFingerprint(_Model):
    """Identity of the judge: two runs are comparable only when these are equal."""

    provider: str
    model: str
    temperature: float
    deepeval_version: str
    metrics: dict[str, dict[str, Any]]  # name -> threshold, criteria, strict...
    prompt_hash: str  # hash of the installed DeepEval's metric prompt templates

    def digest(self) -> str:
        from rag_ci.core.base.hashing import stable_hash

        return stable_hash(self.model_dump())


class GatePolicy(_Model):
    """The gate policy a run was evaluated under (docs/gate.md), recorded so that a pull
    request is gated by its baseline's policy, not by the rag-ci.yml it may have edited.

    Plain data (not the config models) so a baseline written by another rag-ci version
    still loads; `rag_ci.core.comparison.policy` turns it back into config.
    """

    gate: dict[str, Any] = Field(default_factory=dict)
    # Every metric in force, defaults filled in: threshold, k, criteria.
    metrics: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # The judge config; a `base_url` loses its user:password and query (may hold keys).
    judge: dict[str, Any] = Field(default_factory=dict)


class RunMeta(_Model):
    schema_version: int = SCHEMA_VERSION
    question_set_schema: int = QUESTION_SET_SCHEMA
    rag_ci_version: str
    git_sha: str | None = None
    # The checkout had uncommitted changes to tracked files when the run started (so git_sha
    # alone does not say what ran); None: not known (no git, or not the recorded commit).
    git_dirty: bool | None = None
    git_ref: str | None = None
    pr_number: int | None = None
    started_at: str
    finished_at: str | None = None
    question_set_version: int | str
    question_set_hash: str
    config_fingerprint: str
    target_kind: str
    # "retrieve": the contexts came from target.retrieve's search call, not the answer's reply
    # (a leak is the search call's). None: from the answer's reply, or not recorded.
    contexts_from: str | None = None
    generator_models: list[str] = Field(default_factory=list)
    judge: JudgeFingerprint | None = None
    # Thresholds of every metric in force (judge-free and judge): part of compatibility.
    metric_thresholds: dict[str, float | None] = Field(default_factory=dict)
    # The whole gate policy in force; None in results.json files written before it was recorded.
    policy: GatePolicy | None = None
    shard: str | None = None  # "i/n" when this file holds one shard
    # Shard files only: every id of the question set, in its order, so `rag-ci merge`
    # can restore the order of an unsharded run and prove the shards cover the set.
    question_ids: list[str] | None = None
    full: bool = False  # the cache was ignored
    diagnostics: str | None = None  # tail of the target's stderr/logs when questions errored
    # The unscored warm-up requests sent before the questions (target.warmup), seconds each
    # (None: failed). Absent in files written before warm-ups existed.
    warmup_latency_s: list[float | None] = Field(default_factory=list)
    # Why this run is not a result (error share above gate.max_error_rate); such a file is
    # kept for diagnosis but is never compared, never a baseline, never a history line.
    broken: str | None = None
    # Corpus -> a hash of its documents' names and contents (corpora with a known folder):
    # the history shows when the documents changed. Empty in older results.json files.
    corpus_fingerprints: dict[str, str] = Field(default_factory=dict)


class GroupAggregate(_Model):
    n: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    routing_errors: int = 0

    @property
    def pass_rate(self) -> float:
        return self.passed / self.n if self.n else 0.0


class MetricAggregate(_Model):
    n: int = 0
    mean: float | None = None
    passed: int = 0
    failed: int = 0
    errors: int = 0


class Aggregates(_Model):
    overall: GroupAggregate = Field(default_factory=GroupAggregate)
    per_metric: dict[str, MetricAggregate] = Field(default_factory=dict)
    per_corpus: dict[str, GroupAggregate] = Field(default_factory=dict)
    per_tag: dict[str, GroupAggregate] = Field(default_factory=dict)
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    generator_cost_usd: float = 0.0
    judge_cost_usd: float = 0.0


class RunResult(_Model):
    meta: RunMeta
    questions: list[QuestionResult]
    aggregates: Aggregates = Field(default_factory=Aggregates)

    def by_id(self) -> dict[str, QuestionResult]:
        return {q.id: q for q in self.questions}

    def __repr__(self) -> str:
        # Short on purpose: Python 3.11's asyncio.run() formats the repr of its main task,
        # result included, when it restores the SIGINT handler; pydantic's full repr of a
        # 5,000-question run took 1.8 s there.
        shard = f", shard={self.meta.shard}" if self.meta.shard else ""
        return (
            f"RunResult({len(self.questions)} questions, question_set={self.meta.question_set_hash}{shard})"
        )
