"""How much the same question's latency varies on this run's own runner: the noise a latency
change must rise above before the report flags it (docs/noise.md). Pure.

A percentile compared with the baseline's mixes two machines' moments: a loaded CI runner makes
every request slower at once, which a paired bootstrap over the questions reads as a real rise
(issue 55: an unchanged PR headed "p50 +146 %"). The questions this run asked more than once
(re-asks of a flip, `gate.samples`) measure the runner itself: the same request, the same
target, minutes apart. Their typical spread is the share of a change that is the runner's.
"""

from __future__ import annotations

from statistics import median

from rag_ci.core.results import RunResult

MIN_REPEATED = 3  # fewer repeated questions measure one request's luck, not the runner


def runner_spread(run: RunResult) -> float | None:
    """The median, over questions this run timed more than once, of (slowest / fastest − 1):
    0.5 when the same request typically took half as long again on a second try. None when
    fewer than MIN_REPEATED questions were timed twice (no measure of the runner)."""
    spreads = []
    for record in run.questions:
        times = [s.latency_s for s in record.samples if s.latency_s is not None and s.latency_s > 0]
        if len(times) >= 2:
            spreads.append(max(times) / min(times) - 1)
    return median(spreads) if len(spreads) >= MIN_REPEATED else None
