"""The settings of traces: `report.trace_url` and `target.traces` refuse what cannot work, with
the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_ci.core.config import parse_config
from rag_ci.errors import RagCiError, ValidationError
from rag_ci.targets import build_target

BASE = "corpora: {a: {description: A}}\ntarget: {kind: http, url: 'http://127.0.0.1:1/q'}\n"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("https://jaeger.example.com/trace/", 'must contain "{trace_id}"'),
        ("javascript:alert(1)//{trace_id}", "must be an http(s) URL"),
    ],
)
def test_a_trace_url_without_the_id_or_not_a_web_link_is_refused(url, says):
    with pytest.raises(ValidationError) as caught:
        parse_config(BASE + f"report: {{trace_url: '{url}'}}\n", "rag-ci.yml")
    assert says in str(caught.value) and "rag-ci.yml:3" in str(caught.value)


def test_the_report_setting_does_not_change_what_a_run_is():
    plain = parse_config(BASE, "rag-ci.yml")
    linked = parse_config(BASE + "report: {trace_url: 'https://t.example/{trace_id}'}\n", "rag-ci.yml")
    assert plain.fingerprint() == linked.fingerprint()


def test_a_docker_target_cannot_receive_traces_and_says_why():
    config = parse_config(
        "corpora: {a: {description: A}}\ntarget: {kind: docker, traces: otlp}\n", "rag-ci.yml"
    )
    with pytest.raises(RagCiError, match="not available for docker targets"):
        build_target(config.target, Path("."))
