"""The CLI at a terminal. `rag-ci run`/`compare`/`report`: the terminal view, not the PR
comment's markdown (a pipe or a file, and `--format md`, keep the markdown byte for byte);
`rag-ci init` asks its questions (and without a terminal says to use `--yes`); `rag-ci demo`'s
baseline step warns about nothing; a run that stops shows its cause as written, the target's
stderr once (issue 55).

The CLI runs as a process on a real pseudo-terminal (pty.openpty), as a person starts it."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "TMPDIR", "VIRTUAL_ENV", "RAG_CI_TARGET_USER")
    return {
        **{k: v for k, v in os.environ.items() if k in keep},
        "PYTHONPATH": str(REPO),
        "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
        "COLUMNS": "120",
        "LINES": "50",
        "TERM": "xterm-256color",
    }


# A hang guard only: every wait ends as soon as the awaited output arrives, however loaded the
# machine; a process that never shows it fails the test with what it did show.
HANG_GUARD_S = 180


class Terminal:
    """`python -m rag_ci.cli ARGS` with stdin, stdout and stderr on a pseudo-terminal
    (pty.openpty), as a person starts it: `wait_for` what it shows, `type` an answer, `finish`."""

    def __init__(self, args: list[str], cwd: Path, extra: dict[str, str] | None = None):
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rag_ci.cli", *args],
            cwd=cwd,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**env(), **(extra or {})},
            close_fds=True,
        )
        os.close(slave)
        self.shown = b""
        self.ended = False

    def text(self) -> str:
        return self.shown.decode("utf-8", "replace").replace("\r\n", "\n")

    def _read(self, deadline: float, waiting_for: str) -> None:
        """One read of what the process shows; fails with all it showed past the deadline."""
        left = deadline - time.monotonic()
        if left <= 0:
            self.close()
            pytest.fail(f"not shown within {HANG_GUARD_S} s: {waiting_for}; shown:\n{self.text()}")
        ready, _, _ = select.select([self.master], [], [], left)
        if not ready:
            return
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            data = b""
        self.shown += data
        self.ended = not data

    def wait_for(self, text: str) -> str:
        """Everything shown so far (ANSI escapes removed), once `text` is among it."""
        deadline = time.monotonic() + HANG_GUARD_S
        while text not in ANSI.sub("", self.text()):
            if self.ended:
                pytest.fail(f"the process ended without showing {text!r}; shown:\n{self.text()}")
            self._read(deadline, repr(text))
        return ANSI.sub("", self.text())

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def finish(self) -> tuple[int, str]:
        """(exit code, all it showed), once it has ended."""
        deadline = time.monotonic() + HANG_GUARD_S
        while not self.ended:
            self._read(deadline, "the end of its output")
        code = self.process.wait(timeout=HANG_GUARD_S)
        self.close()
        return code, self.text()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        with contextlib.suppress(OSError):
            os.close(self.master)


def on_a_terminal(args: list[str], cwd: Path, extra: dict[str, str] | None = None) -> tuple[int, str]:
    """`python -m rag_ci.cli ARGS` on a pseudo-terminal, left to run; (exit code, what it showed)."""
    return Terminal(args, cwd, extra).finish()


def piped(
    args: list[str], cwd: Path, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI with no terminal at all: stdin /dev/null, stdout and stderr pipes (a CI job)."""
    return subprocess.run(
        [sys.executable, "-m", "rag_ci.cli", *args],
        cwd=cwd,
        env={**env(), **(extra or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    """The example project, with `regressed.json`: its run with a deliberate regression."""
    folder = tmp_path_factory.mktemp("term") / "example"
    shutil.copytree(REPO / "examples", folder, ignore=shutil.ignore_patterns(".index", "out", "__pycache__"))
    piped(["run", "-o", "regressed.json", "--no-progress"], folder, {"EXAMPLE_RAG_REGRESSION": "chunking"})
    return folder


def assert_no_markdown(text: str) -> None:
    plain = ANSI.sub("", text)
    assert not re.search(r"\\[+|*_#`\[\]<>~-]", plain), "backslash-escaped markdown on the terminal"
    for markup in ("<details>", "<summary>", "| question |", "|---", "**", "&gt;", "&#64;"):
        assert markup not in plain


def test_run_with_a_baseline_on_a_terminal_prints_the_terminal_view_without_markdown(example):
    code, shown = on_a_terminal(
        ["run", "--baseline", "baseline/results.json", "-o", "head.json", "--no-progress"],
        example,
        {"EXAMPLE_RAG_REGRESSION": "chunking"},
    )

    assert code == 1, shown
    assert "\x1b[" in shown  # in colour
    assert_no_markdown(shown)
    plain = ANSI.sub("", shown)
    assert re.search(r"rag-ci: ❌ \d+ regressions", plain)  # the verdict line
    assert "fails the gate:" in plain and "Regressions — Retrieval" in plain and "Latency and cost" in plain
    assert "DU2-CALIBRATION" in plain and "Next: " in plain


def test_format_md_and_a_pipe_keep_the_markdown_byte_for_byte(example):
    args = ["compare", "baseline/results.json", "regressed.json"]

    through_a_pipe = piped(args, example)
    code, on_terminal = on_a_terminal([*args, "--format", "md"], example)
    explicit = piped([*args, "--format", "md"], example)

    assert through_a_pipe.returncode == code == 1
    assert through_a_pipe.stdout.startswith("## rag-ci") and "| question |" in through_a_pipe.stdout
    # (stderr is empty: nothing else on the terminal)
    assert through_a_pipe.stdout == explicit.stdout == on_terminal


def test_report_on_a_terminal_is_the_terminal_view_too(example):
    code, shown = on_a_terminal(["report", "regressed.json", "--baseline", "baseline/results.json"], example)

    assert code == 1
    assert_no_markdown(shown)
    assert "Regressions — Retrieval" in ANSI.sub("", shown)


def test_init_at_a_terminal_asks_its_questions_and_without_one_says_to_use_yes(tmp_path):
    (tmp_path / "docs" / "manual").mkdir(parents=True)
    (tmp_path / "docs" / "manual" / "a.md").write_text("# Manual\n\nThe delay is 10 ms.\n")

    no_terminal = piped(["init", "--no-workflows"], tmp_path)
    assert no_terminal.returncode == 2, no_terminal
    said = no_terminal.stdout + no_terminal.stderr
    assert "no terminal to ask on: `rag-ci init --yes` takes the guesses" in said and "Aborted!" not in said
    assert not (tmp_path / "rag-ci.yml").exists()

    terminal = Terminal(["init", "--no-workflows"], tmp_path)
    terminal.wait_for("How does rag-ci reach your RAG? python (a function)")
    terminal.type("http")
    terminal.wait_for("URL to POST questions to")
    terminal.type("http://127.0.0.1:8010/ask")
    code, shown = terminal.finish()

    assert code == 0, shown
    assert "wrote rag-ci.yml" in shown and "Aborted" not in shown
    target = yaml.safe_load((tmp_path / "rag-ci.yml").read_text())["target"]
    assert target == {"kind": "http", "url": "http://127.0.0.1:8010/ask"}


def yellow(shown: str) -> list[str]:
    """The SGR escapes of `shown` that turn text yellow (33, 93; not a 256-colour 38;5;33)."""
    found = []
    for escape in re.finditer(r"\x1b\[([0-9;]*)m", shown):
        params = escape.group(1).split(";")
        if params[:2] not in (["38", "5"], ["48", "5"]) and {"33", "93"} & set(params):
            found.append(escape.group(0))
    return found


def test_the_demo_at_a_terminal_makes_its_baseline_without_a_yellow_no_baseline_warning(tmp_path):
    code, shown = on_a_terminal(["demo"], tmp_path)

    assert code == 1, shown
    plain = ANSI.sub("", shown)
    assert "the gate caught it" in plain and "no baseline" not in plain
    baseline_step = shown.split("1/2 the baseline")[1].split("2/2 ")[0]
    # before: "\x1b[1;33mrag-ci: 🟡 no baseline to compare with" at the step that makes one
    assert not yellow(baseline_step), baseline_step
    assert re.search(r"the baseline: 42/42 pass", plain)


CRASH = """\
import sys
print("loading index from .index/bm25.pkl", file=sys.stderr)
print("FileNotFoundError: `.index/bm25.pkl` is missing: run `python rag/ingest.py`", file=sys.stderr)
sys.exit(1)
"""
ERRORS = """\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "error": "index `du2` is not loaded"}), flush=True)
"""


def _config_running(example: Path, script: str, text: str) -> str:
    """A copy of the example's rag-ci.yml whose command (two copies of it) runs `script`."""
    (example / script).write_text(text)
    config = (example / "rag-ci.yml").read_text()
    name = f"rag-ci.{Path(script).stem}.yml"
    (example / name).write_text(config.replace('["python", "rag/server.py"]', f'["python", "{script}"]'))
    return name


def test_a_run_that_stops_shows_its_cause_as_written_and_the_targets_stderr_once(example):
    config = _config_running(example, "crash.py", CRASH)
    code, shown = on_a_terminal(["run", "--config", config, "-o", "crash.json", "--no-progress"], example)

    assert code == 2, shown
    plain = ANSI.sub("", shown)
    assert "Error: target command exited at start (code 1): python crash.py (2 of 2 processes)" in plain
    # the target's stderr once, names in their backticks as the target wrote them (before: twice)
    assert plain.count("FileNotFoundError: `.index/bm25.pkl` is missing: run `python rag/ingest.py`") == 1, (
        plain
    )
    assert plain.count("loading index from .index/bm25.pkl") == 1
    assert_no_markdown(shown)


def test_a_broken_run_at_a_terminal_names_its_cause_without_markdown_escapes(example):
    config = _config_running(example, "errors.py", ERRORS)
    code, shown = on_a_terminal(["run", "--config", config, "-o", "broken.json", "--no-progress"], example)
    assert code == 2, shown
    assert "Error: this run is broken, not a result" in ANSI.sub("", shown)
    assert_no_markdown(shown)

    code, shown = on_a_terminal(["report", "broken.json"], example)

    plain = ANSI.sub("", shown)
    assert "rag-ci: ⛔ broken run: not a result" in plain
    assert "index `du2` is not loaded" in " ".join(plain.split())  # never \`du2\`
    assert_no_markdown(shown)
