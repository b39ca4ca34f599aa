"""The `rag-ci` process: DeepEval imported without the SDKs rag-ci does not call,
started early for a judged run, and the process ended without the interpreter's teardown but
with its exit code, its output and every `atexit` handler."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rag_ci.judges.deepeval_import import judge_configured

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "DEEPEVAL_TELEMETRY_OPT_OUT": "1"}


def python(code: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
        check=False,
    )


def test_deepevals_import_leaves_out_the_provider_sdks_its_retry_policies_would_import():
    done = python("""
        import sys
        from rag_ci.judges.deepeval_import import import_deepeval
        import_deepeval()
        import deepeval.metrics, deepeval.models.retry_policy as rp
        print(sorted(m for m in ("anthropic", "google.genai", "grpc") if m in sys.modules), rp.ANTHROPIC_ERROR_POLICY is None)
        import anthropic, google.genai  # afterwards the finder is gone: they import as ever
        print("ok")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[] True", "ok"]


def test_the_configured_providers_sdk_is_imported_and_deepeval_keeps_its_policy():
    done = python("""
        import sys
        from rag_ci.judges.deepeval_import import import_deepeval
        import_deepeval(("anthropic",))
        import deepeval.models.retry_policy as rp
        print("anthropic" in sys.modules, rp.ANTHROPIC_ERROR_POLICY is not None, "google.genai" in sys.modules)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True True False"


def test_the_providers_sdk_is_imported_only_while_no_other_thread_imports_deepeval(tmp_path):
    """Found measuring 50,000-question runs: the early import (deepeval → openai.types.chat) and the scorer's
    (openai → openai.types) ran at once, each waited for a module the other held, and Python
    handed one a partially initialised module: "cannot import name 'ChatCompletionFunctionToolParam'
    from partially initialized module 'openai.types.chat'", every question errored (2 cold runs of
    the example in 24). The SDK is now imported under the same lock as DeepEval; the probe module
    stands for the SDK and records whether that lock was held while it was imported."""
    (tmp_path / "probe_sdk.py").write_text(
        "from rag_ci.judges import deepeval_import\nLOCKED = deepeval_import._lock.locked()\n"
    )
    done = python(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from rag_ci.judges.deepeval_import import import_deepeval
        import_deepeval(("probe_sdk",))
        import probe_sdk
        print(probe_sdk.LOCKED)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_the_process_ends_with_its_exit_code_its_output_flushed_and_its_atexit_handlers_run(tmp_path):
    marker = tmp_path / "atexit-ran"
    done = python(f"""
        import atexit, sys
        atexit.register(lambda: open({str(marker)!r}, "w").write("yes"))
        sys.stdout.write("unflushed output")
        from rag_ci.runtime.process_exit import exit_process
        exit_process(143)
    """)
    assert (done.returncode, done.stdout, marker.read_text()) == (143, "unflushed output", "yes")


@pytest.mark.parametrize(
    ("argv", "config", "expected"),
    [
        (["run", "--judge", "openai:gpt-4.1-mini-2025-04-14"], None, True),
        (["run", "--judge=none"], "judge:\n  provider: openai\n", False),
        (["run"], "judge:\n  provider: anthropic\n  model: claude-haiku-4-5-20251001\n", True),
        (["run"], "judge: {provider: fake}\n", True),
        (["run"], "judge:\n  provider: none\n", False),
        (["run"], "target:\n  judge:\n    provider: openai\n", False),  # not the top-level judge
        (["run"], "questions: q.yml\n", False),
        # JSON is YAML: a generated config (rag-ci's own benchmarks write one) starts the import as early
        (["run"], '{"questions": "q.yml", "judge": {"provider": "openai-compatible", "model": "m"}}', True),
        (["run"], '{\n "judge": {"provider": "none"}\n}\n', False),
        (["run"], '{"target": {"judge": {"provider": "openai"}}}', False),
        (["run"], '{"judge": {"provider": "openai"', False),  # not JSON: the run itself says what is wrong
        (["compare", "a.json", "b.json"], "judge:\n  provider: openai\n", False),  # only `run` judges
        (["run", "--baseline", "base.json"], "judge:\n  provider: openai\n", False),  # may be all cached
    ],
)
def test_a_judged_run_is_recognised_from_its_command_line_before_anything_is_imported(
    tmp_path, argv, config, expected
):
    if config is not None:
        (tmp_path / "rag-ci.yml").write_text(config)
    assert judge_configured([*argv, "--config", str(tmp_path / "rag-ci.yml")]) is expected
