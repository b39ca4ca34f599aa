"""Building the docker target's image: BuildKit (the docker CLI's `buildx`) when it is
there, as on GitHub's runners, else the Docker SDK's classic builder.

Today's Dockerfiles use BuildKit syntax (`RUN --mount`, `COPY --chmod`/`--link`, heredocs)
that the classic builder cannot parse. So, before a classic build, the Dockerfile is read
for what only BuildKit understands: found, the build stops with that explanation and the
line (not the classic builder's parse error). The classic builder's own BuildKit-shaped
failures (`--chown=user` read as `user:user`, a `# syntax=` frontend it ignores) get the
same explanation appended.

Output: each builder's lines are kept in a tail (shown when the build fails) and printed
only when `verbose` (`--verbose`, RAG_CI_VERBOSE=1, or a re-run with debug logging);
otherwise the build is one line when it starts and one when it ends.

Blocking (the SDK and the CLI are synchronous): the target runs these in a thread.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rag_ci.errors import RagCiError
from rag_ci.safety.logsafe import neutralise

BUILD_LOG_TAIL = 25  # lines quoted when a build fails
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the classic builder colours a step's stderr red
_STEP = re.compile(r"^Step \d+/\d+ : ")  # classic builder progress lines
BUILDX_HINT = (
    "install the docker CLI's buildx plugin (package docker-buildx / docker-buildx-plugin; GitHub's hosted "
    "runners have it), or build the image yourself and point a `kind: http` target at it"
)


# ---- what the Dockerfile needs ---------------------------------------------------


@dataclass(frozen=True)
class Instruction:
    line: int  # where it starts in the Dockerfile
    keyword: str  # upper case: FROM, RUN, COPY...
    text: str  # the whole instruction, continuation lines joined


def instructions(text: str) -> Iterator[Instruction]:
    """The Dockerfile's instructions with their first line (comments, continuations and
    heredoc bodies handled as the Dockerfile parser does, for the default escape `\\`)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start, raw = i, lines[i]
        i += 1
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        parts = [raw]
        while parts[-1].rstrip().endswith("\\") and i < len(lines):
            nxt = lines[i]
            i += 1
            if nxt.lstrip().startswith("#"):
                continue
            parts.append(nxt)
        joined = " ".join(p.rstrip().rstrip("\\") for p in parts)
        for marker in re.findall(r"<<-?[\"']?([A-Za-z_][A-Za-z0-9_]*)[\"']?", joined):
            while i < len(lines) and lines[i].strip() != marker:  # a heredoc body is no instruction
                i += 1
            i += 1
        keyword = joined.split(None, 1)[0].upper()
        yield Instruction(start + 1, keyword, joined)


_BUILDKIT_FLAGS = {
    "RUN": ("--mount", "--network", "--security"),
    "COPY": ("--chmod", "--link", "--parents", "--exclude"),
    "ADD": ("--chmod", "--link", "--checksum", "--keep-git-dir", "--exclude"),
}
_HEREDOC = re.compile(r"<<-?[\"']?[A-Za-z_][A-Za-z0-9_]*[\"']?")


def buildkit_only(text: str) -> list[str]:
    """What in this Dockerfile only BuildKit can build: `line N: RUN --mount`, ..."""
    found = []
    for ins in instructions(text):
        for flag in _BUILDKIT_FLAGS.get(ins.keyword, ()):
            if re.search(rf"(^|\s){re.escape(flag)}(=|\s|$)", ins.text):
                found.append(f"line {ins.line}: {ins.keyword} {flag}")
        if ins.keyword in ("RUN", "COPY", "ADD") and _HEREDOC.search(ins.text):
            found.append(f"line {ins.line}: a heredoc ({ins.keyword} <<...)")
    return found


def syntax_directive(text: str) -> str | None:
    """The `# syntax=` parser directive (a BuildKit frontend), when the file starts with one."""
    for line in text.splitlines():
        match = re.match(r"^#\s*syntax\s*=\s*(\S+)", line.strip(), re.IGNORECASE)
        if match:
            return match.group(1)
        if not re.match(r"^#\s*\w+\s*=", line.strip()):  # directives come first, before anything else
            return None
    return None


_CLASSIC_BUILDKIT_ERRORS = re.compile(
    r"requires BuildKit|Unknown flag: (mount|network|security|chmod|link|parents|exclude|checksum)|unknown instruction|"
    r"can't find gid for group",
    re.IGNORECASE,
)


def classic_failure_hint(error: str, dockerfile_text: str) -> str:
    """Why a classic build's failure may be BuildKit's to build, or ''."""
    if re.search(r"can't find gid for group", error, re.IGNORECASE):
        return (
            "\n  The classic builder reads `--chown=USER` as `USER:USER` and there is no group USER; BuildKit uses the "
            f"user's primary group. This Dockerfile needs BuildKit: {BUILDX_HINT}."
        )
    if _CLASSIC_BUILDKIT_ERRORS.search(error):
        return f"\n  This Dockerfile needs BuildKit, which the classic builder is not: {BUILDX_HINT}."
    frontend = syntax_directive(dockerfile_text)
    if frontend:
        return (
            f"\n  The Dockerfile declares a BuildKit frontend (`# syntax={frontend}`), which the classic builder "
            f"ignores: it may need BuildKit: {BUILDX_HINT}."
        )
    return ""


# ---- choosing a builder --------------------------------------------------------


def buildx_available(docker_cli: str | None = None) -> tuple[bool, str]:
    """(whether `docker buildx` works here, why not). `docker_cli` defaults to `docker` on PATH."""
    cli = docker_cli or shutil.which("docker")
    if cli is None:
        return False, "no docker CLI on PATH"
    try:
        done = subprocess.run([cli, "buildx", "version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, f"`docker buildx version` could not run: {exc}"
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())[:200]
        return False, f"`docker buildx version` failed: {said or f'exit {done.returncode}'}"
    return True, ""


@dataclass(frozen=True)
class BuildRequest:
    """One image build, whatever the builder."""

    context_dir: Path
    dockerfile: Path
    dockerfile_in_context: str
    build_args: Mapping[str, str]
    stage: str | None
    labels: Mapping[str, str]
    tag: str


class BuildLog:
    """A build's output: kept as a tail for errors, printed only when verbose."""

    def __init__(self, log: TextIO, redact: Callable[[str], str], verbose: bool):
        self.log, self.redact, self.verbose = log, redact, verbose
        self.tail: deque[str] = deque(maxlen=BUILD_LOG_TAIL)
        self.lines = 0

    def add(self, text: str) -> None:
        for line in _ANSI.sub("", text).splitlines():
            line = line.rstrip()
            if not line:
                continue
            self.lines += 1
            self.tail.append(line)
            if self.verbose:
                print(
                    neutralise(f"[rag-ci] docker build: {self.redact(line)[:300]}"), file=self.log, flush=True
                )

    def failure(self, reason: str) -> RagCiError:
        lines = "\n".join(f"    {self.redact(line)}" for line in self.tail) or "    (no build output)"
        return RagCiError(
            f"docker build failed: {self.redact(reason)}\n  last lines of the build log:\n{lines}"
        )


def build_with_buildx(
    request: BuildRequest,
    out: BuildLog,
    *,
    docker_cli: str | None = None,
    cancelled: threading.Event | None = None,
) -> str:
    """`docker buildx build --load`: the image id, read from --iidfile."""
    cli = docker_cli or shutil.which("docker") or "docker"
    with tempfile.TemporaryDirectory(prefix="rag-ci-buildx-") as tmp:
        iidfile = Path(tmp) / "iid"
        argv = [
            cli,
            "buildx",
            "build",
            "--load",
            "--progress",
            "plain",
            "--iidfile",
            str(iidfile),
            "-f",
            str(request.dockerfile),
            "-t",
            request.tag,
        ]
        for key, value in sorted(request.build_args.items()):
            argv += ["--build-arg", f"{key}={value}"]
        for key, value in sorted(request.labels.items()):
            argv += ["--label", f"{key}={value}"]
        if request.stage:
            argv += ["--target", request.stage]
        argv.append(str(request.context_dir))
        try:
            process = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                encoding="utf-8",
                errors="replace",
                env=os.environ.copy(),
            )
        except OSError as exc:
            raise out.failure(f"cannot run {cli} buildx: {exc}") from None
        with process:  # closes its stdout, and waits for it, whatever happens
            assert process.stdout is not None
            try:
                for line in process.stdout:
                    if cancelled is not None and cancelled.is_set():
                        raise RagCiError("docker build cancelled")
                    out.add(line)
            finally:
                if process.poll() is None and cancelled is not None and cancelled.is_set():
                    process.kill()
        code = process.returncode
        if code != 0:
            raise out.failure(f"docker buildx build exited with code {code}")
        image_id = iidfile.read_text().strip() if iidfile.is_file() else ""
    if not image_id:
        raise out.failure("docker buildx build wrote no image id")
    return image_id


def build_with_sdk(
    client: Any, request: BuildRequest, out: BuildLog, *, cancelled: threading.Event | None = None
) -> str:
    """The Docker SDK's classic builder: the image id. Step lines are printed even when quiet
    (one per Dockerfile instruction): they are the build's progress."""
    from docker.errors import DockerException

    image_id: str | None = None
    error: str | None = None
    text = request.dockerfile.read_text(encoding="utf-8", errors="replace")
    try:
        stream = client.api.build(
            path=str(request.context_dir),
            dockerfile=request.dockerfile_in_context,
            buildargs=dict(request.build_args) or None,
            target=request.stage,
            labels=dict(request.labels),
            tag=request.tag,
            rm=True,
            forcerm=True,  # never leave intermediate containers behind, even on failure
            decode=True,
        )
        for chunk in stream:
            if cancelled is not None and cancelled.is_set():
                stream.close()
                raise RagCiError("docker build cancelled")
            if "error" in chunk:  # the engine's last message: read on to the end, which closes the connection
                error = error or str(chunk.get("error", "")).strip()
                continue
            if "aux" in chunk and isinstance(chunk["aux"], dict) and "ID" in chunk["aux"]:
                image_id = chunk["aux"]["ID"]
            stream_text = str(chunk.get("stream", ""))
            out.add(stream_text)
            for line in _ANSI.sub("", stream_text).splitlines():
                if _STEP.match(line) and not out.verbose:
                    print(
                        neutralise(f"[rag-ci] docker build: {out.redact(line.rstrip())[:160]}"),
                        file=out.log,
                        flush=True,
                    )
                elif line.startswith("Successfully built "):
                    image_id = image_id or line.split()[-1]
    except DockerException as exc:
        reason = f"{type(exc).__name__}: {exc}"
        raise out.failure(reason + classic_failure_hint(reason, text)) from None
    if error is not None:
        raise out.failure(error + classic_failure_hint(error, text))
    if not image_id:
        raise out.failure("the engine reported no image id")
    return image_id


def refuse_buildkit_only(request: BuildRequest, why_no_buildx: str) -> None:
    """Before a classic build: stop, with the explanation, when the Dockerfile needs BuildKit."""
    text = request.dockerfile.read_text(encoding="utf-8", errors="replace")
    needs = buildkit_only(text)
    if needs:
        shown = "; ".join(needs[:5]) + (f"; and {len(needs) - 5} more" if len(needs) > 5 else "")
        raise RagCiError(
            f"{request.dockerfile} needs BuildKit ({shown}), and no BuildKit builder is available here "
            f"({why_no_buildx}); the Docker SDK's classic builder cannot build it: {BUILDX_HINT}."
        )
