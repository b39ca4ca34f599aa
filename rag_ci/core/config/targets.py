"""`target:` — the kinds of RAG rag-ci asks (python, command, http, docker) and what they share.

One class per kind. The class carries its description: the `kind` field's (docs/configuration.md,
the JSON Schema) and a short `summary` (`rag-ci init`'s question). `TARGET_CONFIGS` (kind → class)
is the table the readers of the kinds go through: the parsing's errors, `rag-ci init`'s blocks
(rag_ci.cli.init_targets), the runners (rag_ci.targets); tests/unit/test_target_kinds.py fails
when one of them lacks a kind.
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal, get_args
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from rag_ci.core.base.api_config import ApiMapped as _ApiMapped
from rag_ci.core.config.base import StrictModel

# ${NAME} in target.env and target.build_args values: read from rag-ci's environment.
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_DOTTED_NAME = r"[^\W\d]\w*(?:\.[^\W\d]\w*)*"  # identifiers joined by dots (no part starts with a digit)
_ENTRY = rf"^{_DOTTED_NAME}:{_DOTTED_NAME}$"


class TargetBase(StrictModel):
    # Each kind in a few words, for `rag-ci init`'s question: "docker (your Dockerfile)".
    summary: ClassVar[str]

    def describe(self) -> str:
        """The target as messages name it: its kind and what the user configured it with."""
        raise NotImplementedError(f"target kind {type(self).__name__} does not say how messages name it")

    build: list[str] = Field(
        default_factory=list,
        description="Shell commands run in the config's folder before the target starts (install, index the documents).",
    )
    generator_model: str | None = Field(
        None,
        description="The model your RAG answers with, when its replies do not report it (`usage.model`): the judge must be of another family.",
    )
    generator_family: str | None = Field(
        None,
        description="The family (lab) of the generator model, when rag-ci cannot tell it from the name: meta, mistral, openai...",
    )
    timeout_s: float = Field(
        60.0,
        gt=0,
        description="Seconds one question may take; past it the question is an `error` and the run goes on.",
    )
    concurrency: int = Field(
        8,
        ge=1,
        le=256,
        description="Questions asked at the same time (at most `processes` for the python and command kinds).",
    )
    # Circuit breaker (docs/targets.md): the run stops asking once no call has succeeded for
    # this long while calls failed (default: three time-outs), or once the first
    # `max_errors_at_start` questions all failed (default: max(10, 2 × the calls in flight)).
    max_wait_s: float | None = Field(
        None,
        gt=0,
        description="Circuit breaker: stop asking once no call has succeeded for this many seconds while calls failed. Default: three time-outs.",
    )
    max_errors_at_start: int | None = Field(
        None,
        ge=1,
        description="Circuit breaker: stop when this many first questions all failed. Default: max(10, 2 × the calls in flight: `concurrency`, at most `processes`).",
    )
    # Unscored requests sent before the questions, so cold first calls are not timed
    # (docs/noise.md#4-budgets). Default: one per call in flight (min(concurrency, processes)).
    warmup: int | None = Field(
        None,
        ge=0,
        le=256,
        description="Unscored requests sent before the questions, so cold first calls are not timed. Default: one per call in flight.",
    )
    # The target's environment is an allow-list (rag_ci.targets.processes): the basics, then
    # the variables named here (exact names or `PREFIX_*`), then `env` (values may say ${NAME}).
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Variables set in the target's environment; a value may read rag-ci's own with ${NAME}.",
    )
    pass_env: list[str] = Field(
        default_factory=list,
        description="Names (or `PREFIX_*` patterns) of rag-ci's environment variables passed to the target; nothing else is.",
    )
    secret_env: list[str] = Field(
        default_factory=list,
        description="Names in `env`/`pass_env` whose values are secrets: redacted from every log and report.",
    )

    # The RAG's own OpenTelemetry spans (docs/traces.md): received on the loopback, read per question.
    traces: Literal["otlp"] | None = Field(
        None,
        description="`otlp`: rag-ci receives the RAG's OpenTelemetry spans (OTLP/HTTP, on the loopback) and scores the documents its retriever spans hold, the generator's model and tokens, and each stage's time. Unset: the replies say it all.",
    )
    traces_wait_s: float = Field(
        10.0,
        gt=0,
        le=600,
        description="With `traces: otlp`: seconds a question's spans may take to arrive after its answer; past it the question is an `error`.",
    )
    traces_corpus_key: str = Field(
        "corpus",
        min_length=1,
        description="With `traces: otlp`: the key of a retrieved document's metadata that names its corpus (the context's `doc_id`).",
    )

    @model_validator(mode="after")
    def _secret_env_named(self) -> TargetBase:
        from fnmatch import fnmatchcase

        for name in self.secret_env:
            if name not in self.env and not any(fnmatchcase(name, p) for p in self.pass_env):
                raise ValueError(
                    f"secret_env names {name}, which is neither in target.env nor in target.pass_env"
                )
        return self

    def env_references(self) -> list[tuple[str, str]]:
        """(field, NAME) for each ${NAME} the target's values read from rag-ci's environment."""
        fields = {"target.env": self.env, "target.build_args": getattr(self, "build_args", {})}
        return [
            (f"{field}.{key}", name)
            for field, values in fields.items()
            for key, value in values.items()
            for name in _ENV_REFERENCE.findall(value)
        ]

    def breaker_wait_s(self) -> float:
        return self.max_wait_s if self.max_wait_s is not None else 3 * self.timeout_s

    def warmup_requests(self, parallel: int) -> int:
        return self.warmup if self.warmup is not None else parallel

    def breaker_errors_at_start(self, parallel: int) -> int:
        return self.max_errors_at_start if self.max_errors_at_start is not None else max(10, 2 * parallel)


class PythonTargetConfig(TargetBase):
    summary: ClassVar[str] = "a function"
    kind: Literal["python"] = Field(
        description="`python`: rag-ci imports your function and calls it in worker processes."
    )
    # Dotted Python names on both sides: `1app.main:answer` is no module the worker could import.
    entry: str = Field(
        pattern=_ENTRY,
        description="The function answering a question, as `module:function` (or `module:Class.method`).",
    )
    path: list[str] = Field(
        default_factory=list, description="Extra `sys.path` entries for the import, relative to rag-ci.yml."
    )
    # The interpreter the worker runs with: a path (relative to the config) or a name on the
    # target's PATH. Unset: the RAG's venv inside rag-ci's image, rag-ci's interpreter elsewhere.
    python: str | None = Field(
        None,
        min_length=1,
        description="The interpreter the workers run with: a path relative to rag-ci.yml, or a name on the target's PATH. Default: the RAG's venv in rag-ci's image, rag-ci's own interpreter elsewhere.",
    )
    processes: int = Field(
        1,
        ge=1,
        le=64,
        description="Worker processes; each imports the entry and answers one question at a time.",
    )
    restart_limit: int = Field(
        10, ge=0, description="Times a crashed worker is restarted before the run stops."
    )

    def describe(self) -> str:
        return f"python `{self.entry}`"

    @field_validator("entry", mode="before")
    @classmethod
    def _importable(cls, entry: object) -> object:
        """Before the pattern, whose own words ("should match pattern '^[^\\W\\d]…'") say nothing."""
        if not isinstance(entry, str) or re.fullmatch(_ENTRY, entry):
            return entry
        module, colon, function = entry.partition(":")
        parts = [*module.split("."), *function.split(".")] if colon else []
        bad = next((p for p in parts if not p.isidentifier()), None)
        if bad is None:
            why = " (e.g. `app.main:answer`)"
        elif not bad:
            why = ": a name is missing beside a `.` or the `:`"
        else:
            why = f": `{bad}` is no Python name (letters, digits and _, not starting with a digit)"
        raise ValueError(f"{entry!r} is not `module:function` with names Python can import{why}")


class CommandTargetConfig(TargetBase):
    summary: ClassVar[str] = "a process speaking JSON lines"
    kind: Literal["command"] = Field(
        description="`command`: a program reading one JSON request per line on stdin and writing one JSON reply per line."
    )
    command: list[str] = Field(min_length=1, description="The program and its arguments (no shell).")
    processes: int = Field(
        1, ge=1, le=64, description="Copies of the program run in parallel; each answers one line at a time."
    )
    restart_limit: int = Field(
        10, ge=0, description="Times a crashed program is restarted before the run stops."
    )

    def describe(self) -> str:
        return f"command `{' '.join(self.command)}`"


class HttpTargetConfig(TargetBase, _ApiMapped):
    summary: ClassVar[str] = "a URL"
    kind: Literal["http"] = Field(description="`http`: rag-ci POSTs each question to a URL.")
    url: str = Field(description="The endpoint each question is POSTed to.")
    start: list[str] | None = Field(
        None,
        description="A command starting the server (no shell); stopped after the run. Unset: the server is already running.",
    )
    health: str | None = Field(
        None, description="A URL (or a path on `url`'s host) that answers 2xx once the server is ready."
    )
    startup_timeout_s: float = Field(
        60.0, gt=0, description="Seconds the started server has to become healthy."
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="HTTP headers sent with every request; values may read rag-ci's environment with ${NAME}.",
    )

    def describe(self) -> str:
        return f"http {self.url}"

    @field_validator("url")
    @classmethod
    def _port_in_range(cls, url: str) -> str:
        try:
            port = urlsplit(url).port
        except ValueError:  # `:99999`, `:http`
            port = 0
        if port == 0:
            raise ValueError(f"{url}: its port must be a number from 1 to 65535")
        return url


class DockerResources(StrictModel):
    cpus: float | None = Field(None, description="CPUs the container may use (`docker run --cpus`).")
    memory: str | None = Field(
        None, description='Memory the container may use, e.g. "2g" (`docker run --memory`).'
    )


class DockerTargetConfig(TargetBase, _ApiMapped):
    summary: ClassVar[str] = "your Dockerfile"
    kind: Literal["docker"] = Field(
        description="`docker`: rag-ci builds your image, runs it and POSTs each question to it."
    )
    dockerfile: str = Field("Dockerfile", description="The Dockerfile, relative to `context`.")
    context: str = Field(".", description="The build context, relative to rag-ci.yml.")
    build_args: dict[str, str] = Field(
        default_factory=dict,
        description="Build arguments; values may read rag-ci's environment with ${NAME}.",
    )
    target: str | None = Field(None, description="The build stage to build (`docker build --target`).")
    # BuildKit (the docker CLI's buildx) when it is there, else the SDK's classic builder (docs/docker-target.md).
    builder: Literal["auto", "buildx", "classic"] = Field(
        "auto",
        description="`buildx` (BuildKit), `classic` (the SDK's builder), or `auto`: BuildKit when the docker CLI has it.",
    )
    # Run this instead of the image's ENTRYPOINT and CMD (like `docker run --entrypoint`).
    command: list[str] | None = Field(
        None,
        min_length=1,
        description="Run this instead of the image's ENTRYPOINT and CMD (like `docker run --entrypoint`).",
    )
    port: int = Field(8000, ge=1, le=65535, description="The port the app listens on inside the container.")
    path: str = Field("/query", description="The path each question is POSTed to.")
    health: str | None = Field(
        "/health",
        description="The path that answers 2xx once the app is ready; `null` when the app has none: it is ready once `path` answers (anything but a refused connection or a 5xx).",
    )
    startup_timeout_s: float = Field(120.0, gt=0, description="Seconds the container has to become healthy.")
    resources: DockerResources = Field(
        default_factory=DockerResources, description="Limits of the container's CPUs and memory."
    )

    def describe(self) -> str:
        return f"docker {self.dockerfile} (port {self.port}, {self.path})"


TargetConfig = Annotated[
    PythonTargetConfig | CommandTargetConfig | HttpTargetConfig | DockerTargetConfig,
    Field(discriminator="kind"),
]

# kind → its class, in the union's order (the order `rag-ci init` offers them).
TARGET_CONFIGS: dict[str, type[TargetBase]] = {
    get_args(cls.model_fields["kind"].annotation)[0]: cls for cls in get_args(get_args(TargetConfig)[0])
}
