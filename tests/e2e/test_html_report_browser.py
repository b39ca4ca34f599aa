"""The HTML report in a real browser (headless Chromium): the headline, the regression table
and the charts render, and hostile answers do not execute.

Chromium comes from the distribution's packages (`apt-get install chromium`; .ci/run tries);
without it the test skips, saying so.
"""

import shutil
import subprocess

import pytest

from builders import metric, question, run
from rag_ci.core.comparison.compare import compare
from rag_ci.core.reporting.render import render_html
from rag_ci.core.results import Context

BROWSER = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium on this machine: `apt-get install -y chromium` (Debian) to run the browser check of the HTML report",
)

# Each would leave a mark in the DOM if it ran.
HOSTILE = (
    "<script>document.body.setAttribute('data-pwned','script')</script>"
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">"
    "<svg onload=\"document.body.setAttribute('data-pwned','svg')\"></svg>"
)


def chromium(tmp_path, *args: str) -> subprocess.CompletedProcess:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    return subprocess.run([BROWSER, *flags, *args], capture_output=True, text=True, timeout=120)


def _report(tmp_path):
    base_q = question(
        "refund-window",
        metrics=[metric("hit_at_k", 1.0, 1.0), metric("mrr", 1.0, 0.5)],
        answer="30 days from delivery.",
    )
    base_q.contexts = [Context(text="t", doc_id="a", source="refunds.md#1")]
    head_q = question(
        "refund-window",
        "fail",
        metrics=[metric("hit_at_k", 0.0, 1.0), metric("mrr", 0.0, 0.5)],
        answer=HOSTILE,
    )
    head_q.contexts = [Context(text="t", doc_id="a", source=HOSTILE)]
    head_q.metrics["hit_at_k"].reason = HOSTILE
    leak_base = question("leaky", corpora=("a",))
    leak_base.contexts = [Context(text="own", doc_id="a", source="a/own.md#1")]
    leak = question("leaky", "routing_error", corpora=("a",), leaks=["b"])
    leak.contexts = [
        Context(text="own", doc_id="a", source="a/own.md#1"),
        Context(text="other", doc_id="b", source="b/secret.md#2"),
        Context(text="fresh", doc_id="a", source="a/fresh.md#1"),
    ]
    base, head = run(base_q, question("B"), leak_base), run(head_q, question("B", latency=0.3), leak)
    history = [
        {
            "timestamp": f"2026-01-0{i + 1}",
            "git_sha": f"abc{i}",
            "pass_rate": 0.8 + i / 50,
            "metrics": {"hit_at_k": 0.9},
            "latency_p95_s": 0.1,
            "generator_cost_usd": 0.01,
            "judge_cost_usd": 0.0,
            "corpora": {"a": 0.8},
        }
        for i in range(5)
    ]
    path = tmp_path / "report.html"
    path.write_text(render_html(head, compare(base, head), history=history), encoding="utf-8")
    return path


def test_the_html_report_renders_headline_regressions_and_charts_and_hostile_answers_stay_inert(tmp_path):
    page = _report(tmp_path)
    result = chromium(tmp_path, "--dump-dom", page.as_uri())
    dom = result.stdout
    assert result.returncode == 0 and "<h1" in dom, result.stderr[-2000:]
    assert "rag-ci: ❌ 1 routing leak · 1 regression" in dom
    assert '<h2 class="regressions">Retrieval (1)</h2>' in dom and "<td>refund-window</td>" in dom
    # per-question chart, trend charts (pass rate, hit_at_k, p95, cost, corpus a)
    assert dom.count("<svg") >= 1 + 5
    # What decides comes before the charts (a 500-question chart is 7,000 px tall), and the chart is collapsible.
    assert (
        dom.index('id="counts"')
        < dom.index('id="leaks"')
        < dom.index("Retrieval (1)")
        < dom.index('id="chart"')
        < dom.index("<svg")
    )
    # not "routing leak: 2" on a run with one leak
    assert "each of the 2 question(s) that fail the gate" in dom
    # The leaked context is marked apart from a harmless new one.
    assert '<span class="leaked">b/secret.md#2 (leaked)</span>' in dom and "<ins>a/fresh.md#1</ins>" in dom
    assert ">0 ms<" in dom and ">300 ms<" in dom  # the latency ticks carry their unit
    assert "data-pwned" not in dom.replace("setAttribute('data-pwned'", "")
    assert "<script>" not in dom and "&lt;script&gt;" in dom
    shot = tmp_path / "shot.png"
    result = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1600", page.as_uri())
    assert shot.exists() and shot.stat().st_size > 10_000, result.stderr[-2000:]
