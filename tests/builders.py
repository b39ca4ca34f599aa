"""Small builders for results, so compare/render tests read like the situation they set up."""

from __future__ import annotations

import os
import socket
import textwrap
from pathlib import Path

from rag_ci.core.results import MetricResult, QuestionResult, RunMeta, RunResult
from rag_ci.core.scoring.aggregate import aggregate


def metric(name: str, score: float, threshold: float | None = 0.5, kind: str = "retrieval") -> MetricResult:
    passed = None if threshold is None else score >= threshold
    return MetricResult(
        name=name, kind=kind, score=score, threshold=threshold, passed=passed, reason=f"{name}={score}"
    )


def question(
    qid: str,
    verdict: str = "pass",
    *,
    hash_: str = "h",
    corpora=("a",),
    tags=(),
    latency=0.1,
    metrics=(),
    answer="ok",
    cost=0.0,
    leaks=(),
    error: str | None = None,
) -> QuestionResult:
    from rag_ci.core.results import Usage

    return QuestionResult(
        id=qid,
        question=f"question {qid}",
        question_hash=hash_ + qid,
        corpora=list(corpora),
        tags=list(tags),
        request={"id": qid},
        answer=answer,
        latency_s=latency,
        usage=Usage(cost_usd=cost),
        metrics={m.name: m for m in metrics},
        verdict=verdict,
        leaks=list(leaks),
        error=error or ("boom" if verdict == "error" and not any(m.error for m in metrics) else None),
        failure_stage="retrieval" if verdict == "fail" else None,
    )


def run(*questions: QuestionResult, thresholds=None, sha="abc", judge=None, policy=None) -> RunResult:
    """A run; `policy` (a GatePolicy) also sets the thresholds it implies."""
    if policy is not None and thresholds is None:
        thresholds = {name: cfg.get("threshold") for name, cfg in policy.metrics.items()}
    meta = RunMeta(
        rag_ci_version="test",
        started_at="2026-01-01T00:00:00",
        question_set_version=1,
        question_set_hash="qs",
        config_fingerprint="cfg",
        target_kind="python",
        metric_thresholds=thresholds or {"hit_at_k": 1.0},
        git_sha=sha,
        judge=judge,
        policy=policy,
    )
    return RunResult(meta=meta, questions=list(questions), aggregates=aggregate(questions))


REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for a fake server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


# Written by .ci/docker-engine.sh: whether an engine is ready, its base image, or why not.
DOCKER_STATUS_FILE = Path(os.environ.get("RAG_CI_DOCKER_STATUS", "/tmp/rag-ci/docker-engine.status"))


def docker_socket_problem() -> str | None:
    """Why the engine's unix socket takes no connection, or None (also for a tcp:// DOCKER_HOST).

    Asked before the Docker SDK is: on a refused connection the SDK leaves its socket unclosed,
    and the ResourceWarning fails whichever later test the collector happens to run in."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(5)
            probe.connect(host.removeprefix("unix://"))
    except OSError as exc:
        return f"{host}: {exc.strerror or exc}"
    return None


def docker_engine_status() -> dict[str, str]:
    """The key=value lines of the engine's status file (empty when it was never prepared)."""
    if not DOCKER_STATUS_FILE.is_file():
        return {}
    pairs = (line.split("=", 1) for line in DOCKER_STATUS_FILE.read_text().splitlines() if "=" in line)
    return dict(pairs)
