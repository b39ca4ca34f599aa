"""Talking to the Actions runner: workflow commands on stdout, and the files it reads.

Workflow commands (`::error::`, `::add-mask::`, ...) are lines the runner parses from the
step's stdout. Data that could contain a newline would end the command early and let the
rest be read as a new command, so every value is escaped the way the runner unescapes it
(`%`, `\\r`, `\\n`, plus `:` and `,` in properties).

Everything else `Runner` prints (`info`, and the messages and titles of its annotations)
goes through `rag_ci.safety.logsafe.neutralise` first: most of it quotes text rag-ci did not write
(ids, paths, policy values, error messages), which must never become a command of its own.
Only `mask` prints its value untouched: the runner must see the secret exactly.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO

from rag_ci.safety.logsafe import neutralise


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, message: str = "", **properties: str | int | None) -> str:
    props = ",".join(
        f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None
    )
    return f"::{command}{' ' + props if props else ''}::{escape_data(message)}"


class Runner:
    """The step's side of the runner: commands on `stream`, summary and outputs in files.

    Outside Actions (`in_actions` false) workflow commands are still printed, except
    `add-mask`, which would print the secret itself to a terminal that does not mask it.

    `redact` (rag_ci.safety.redaction.Redactor) is applied to every line, summary and output it
    writes, `mask` aside: whatever slipped past the run's own redaction stops here.
    """

    def __init__(
        self,
        *,
        step_summary: Path | None,
        github_output: Path | None,
        in_actions: bool,
        stream: TextIO | None = None,
        redact: Callable[[str], str] = lambda text: text,
    ):
        self.step_summary = step_summary
        self.github_output = github_output
        self.in_actions = in_actions
        self._stream = stream
        self.redact = redact

    @property
    def stream(self) -> TextIO:
        return self._stream or sys.stdout

    def _emit(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def _safe(self, text: str | None) -> str | None:
        """Text for the log: redacted (a secret may span lines), then made inert."""
        return None if text is None else neutralise(self.redact(text))

    def mask(self, value: str) -> None:
        # The runner consumes this line and replaces the value with *** in all later logs.
        if self.in_actions and value:
            self._emit(workflow_command("add-mask", value))

    def error(self, message: str, *, title: str | None = None, file: str | None = None) -> None:
        self._emit(
            workflow_command(
                "error", self._safe(message) or "", title=self._safe(title), file=self._safe(file)
            )
        )

    def annotate(
        self,
        command: str,
        message: str,
        *,
        title: str | None = None,
        file: str | None = None,
        line: int | None = None,
    ) -> None:
        """An `::error`/`::warning`/`::notice` at `file` (relative to the workspace) and `line`:
        shown on that line of the pull request's diff. A line without a file means nothing."""
        assert command in ("error", "warning", "notice")
        self._emit(
            workflow_command(
                command,
                self._safe(message) or "",
                file=self._safe(file),
                line=line if file and line else None,
                title=self._safe(title),
            )
        )

    def warning(self, message: str, *, title: str | None = None) -> None:
        self._emit(workflow_command("warning", self._safe(message) or "", title=self._safe(title)))

    def notice(self, message: str, *, title: str | None = None) -> None:
        self._emit(workflow_command("notice", self._safe(message) or "", title=self._safe(title)))

    def info(self, message: str) -> None:
        self._emit(self._safe(message) or "")

    def group(self, title: str) -> None:
        self._emit(workflow_command("group", self._safe(title) or ""))

    def end_group(self) -> None:
        self._emit(workflow_command("endgroup"))

    def add_summary(self, markdown: str) -> None:
        """Append to the job summary (the runner renders $GITHUB_STEP_SUMMARY as markdown)."""
        if self.step_summary is None:
            return
        with self.step_summary.open("a", encoding="utf-8") as f:
            f.write(self.redact(markdown).rstrip("\n") + "\n\n")

    def set_outputs(self, outputs: Mapping[str, str]) -> None:
        """Write step outputs in the multi-line form (`name<<DELIM`), with a delimiter no
        value contains, so a value with a newline cannot inject another output."""
        if self.github_output is None:
            return
        with self.github_output.open("a", encoding="utf-8") as f:
            for name, value in outputs.items():
                value = self.redact(value)
                delimiter = f"rag_ci_{secrets.token_hex(8)}"
                while delimiter in value:
                    delimiter = f"rag_ci_{secrets.token_hex(8)}"
                f.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
