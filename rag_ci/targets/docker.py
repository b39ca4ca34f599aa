"""`kind: docker`: build the repository's Dockerfile, run it, query it over HTTP.

Life of the target:
  start  -> reuse or build the image (docker_image.py), run one container with the
            configured env and resource limits, wait for its health endpoint;
  query  -> delegated to an HttpTarget pointed at the container; when a call fails
            and the container turns out to be dead, it is restarted once (the
            questions in flight are `error`), a second death is final;
  stop   -> the container is removed, whatever happened (also on time-out,
            Ctrl-C and interpreter exit).

Networking: inside a container that this engine runs (the GitHub Action's own
container, on the job's network) the target joins the same network and is reached
at its address there; anywhere else its port is published on 127.0.0.1 only
(docker_placement.py).

Secrets: `env` values written `${NAME}` are read from rag-ci's environment and,
like values under secret-looking names, are replaced by *** in every message,
log tail and diagnostic this target produces (so never in results.json): docker_env.py.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rag_ci.core.config import DockerTargetConfig
from rag_ci.errors import RagCiError, TargetError
from rag_ci.safety.logsafe import neutralise
from rag_ci.targets.docker_engine import docker_client
from rag_ci.targets.docker_env import container_env
from rag_ci.targets.docker_image import ImageRef, build_spec, ensure_image
from rag_ci.targets.docker_placement import Placement, RunnerHost, choose_placement, detect_runner_host
from rag_ci.targets.http import HttpTarget, mapping_arguments

CONTAINER_PREFIX = "rag-ci-target-"
RUN_LABEL = "rag-ci.run"
LOG_LINES = 50
RESTARTS = 1


@dataclass(frozen=True)
class DockerTimings:
    image_s: float  # build, or label look-up when the image was reused
    image_reused: bool
    start_to_healthy_s: float


class DockerTarget:
    def __init__(
        self,
        config: DockerTargetConfig,
        root: Path,
        *,
        client: Any = None,
        host: RunnerHost | None = None,
        environ: dict[str, str] | None = None,
        log: TextIO | None = None,
        verbose: bool = False,
    ):
        self.config = config
        self.verbose = verbose  # the image build's output in the log (else only its tail, on failure)
        self.max_parallel: int | None = (
            None  # an HTTP server in a container: target.concurrency bounds the calls
        )
        self.root = Path(root)
        self.run_id = uuid.uuid4().hex
        self.name = f"{CONTAINER_PREFIX}{self.run_id[:12]}"
        environ = dict(os.environ if environ is None else environ)
        self.env, self.build_args, self._secrets = container_env(config, environ)
        self.timings: DockerTimings | None = None
        self._client = client
        self._host = host
        self._log = log
        self._container: Any = None
        self._creating: asyncio.Future[Any] | None = None
        self._http: HttpTarget | None = None
        self._retired: list[HttpTarget] = []  # closed at stop: queries may still be using them
        self._generation = 0
        self._restarts_left = RESTARTS
        self._restart: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._gave_up: str | None = None
        self._events: list[str] = []  # crashes and restarts, for diagnostics
        self._final_logs = ""
        self._cancel_build = threading.Event()
        self._stopped = False

    # ---- start -----------------------------------------------------------------

    async def start(self) -> None:
        try:
            await self._start()
        except BaseException:
            # Time-out, Ctrl-C (CancelledError) or a failed start: nothing may be left running.
            self._cancel_build.set()
            await self.stop()
            raise

    async def _start(self) -> None:
        if self._client is None:
            self._client = await asyncio.to_thread(docker_client)
        spec = build_spec(
            self.root, self.config.dockerfile, self.config.context, self.build_args, self.config.target
        )
        image = await asyncio.to_thread(
            ensure_image,
            self._client,
            spec,
            log=self.log,
            redact=self.redact,
            cancelled=self._cancel_build,
            verbose=self.verbose,
            builder=self.config.builder,
        )
        atexit.register(self._remove_leftovers)
        placement = await asyncio.to_thread(
            choose_placement, self._client, self._host or detect_runner_host()
        )
        self._say(placement.reason)
        started = time.monotonic()
        # Shielded: if we are cancelled while the engine creates the container, stop()
        # still waits for it, so that it gets removed rather than leaked.
        self._creating = asyncio.ensure_future(asyncio.to_thread(self._run_container, image, placement))
        self._container = await asyncio.shield(self._creating)
        await self._connect_and_wait("start-up")
        self.timings = DockerTimings(image.seconds, image.reused, time.monotonic() - started)
        assert self._http is not None  # connected by _connect_and_wait
        self._say(
            f"container {self.name} healthy in {self.timings.start_to_healthy_s:.1f}s at {self._http.url}"
        )

    def _run_container(self, image: ImageRef, placement: Placement) -> Any:
        from docker.errors import DockerException

        port = f"{self.config.port}/tcp"
        limits: dict[str, Any] = {}
        if self.config.resources.cpus:
            limits["nano_cpus"] = int(self.config.resources.cpus * 1e9)
        if self.config.resources.memory:
            limits["mem_limit"] = self.config.resources.memory
        wiring: dict[str, Any] = (
            {"network": placement.network} if placement.network else {"ports": {port: ("127.0.0.1", None)}}
        )
        # target.command replaces ENTRYPOINT and CMD: with an entrypoint set, the engine takes no CMD from the image.
        command: dict[str, Any] = {"entrypoint": list(self.config.command)} if self.config.command else {}
        try:
            return self._client.containers.run(
                image.id,
                detach=True,
                name=self.name,
                labels={RUN_LABEL: self.run_id},
                environment=self.env,
                **limits,
                **wiring,
                **command,
            )
        except DockerException as exc:
            raise RagCiError(f"cannot run the target container: {self.redact(str(exc))}") from None

    def _address(self) -> str | None:
        """host:port where rag-ci reaches the container (read again after a restart)."""
        self._container.reload()
        settings = self._container.attrs.get("NetworkSettings", {})
        networks = settings.get("Networks") or {}
        published = (settings.get("Ports") or {}).get(f"{self.config.port}/tcp")
        if published:
            return f"127.0.0.1:{published[0]['HostPort']}"
        for network in networks.values():
            if network.get("IPAddress"):
                return f"{network['IPAddress']}:{self.config.port}"
        return None  # an exited container has neither

    async def _connect_and_wait(self, phase: str) -> None:
        """Point a fresh HttpTarget at the container and wait for health, or for the container to die."""
        address = await asyncio.to_thread(self._address)
        if address is None:
            status, exit_code = await asyncio.to_thread(self._state)
            logs = await asyncio.to_thread(self.logs)
            what = (
                f"exited during {phase} (code {exit_code})"
                if status == "exited"
                else f"has no reachable address ({status})"
            )
            raise RagCiError(f"target container {what}; its last lines:\n{logs}")
        http = HttpTarget(
            f"http://{address}{self.config.path}",
            timeout_s=self.config.timeout_s,
            health_url=self.config.health,
            startup_timeout_s=self.config.startup_timeout_s,
            max_connections=self.config.concurrency,
            **mapping_arguments(self.config),
        )
        if self._http is not None:
            self._retired.append(self._http)
        self._http = http
        # Without a health route (`health: null`), ready once the question path answers at all.
        healthy = asyncio.ensure_future(http.start() if self.config.health else http.wait_healthy(http.url))
        died = asyncio.ensure_future(self._wait_until_exited())
        try:
            done, _ = await asyncio.wait({healthy, died}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (healthy, died):
                task.cancel()
            await asyncio.gather(healthy, died, return_exceptions=True)
        if died in done and healthy not in done:
            logs = await asyncio.to_thread(self.logs)
            raise RagCiError(
                f"target container exited during {phase} (code {died.result()}); its last lines:\n{logs}"
            )
        try:
            healthy.result()
        except RagCiError as exc:
            logs = await asyncio.to_thread(self.logs)
            raise RagCiError(self.redact(f"{exc}\n  container log:\n{logs}")) from None

    async def _wait_until_exited(self) -> int | None:
        while True:
            status, exit_code = await asyncio.to_thread(self._state)
            if status not in ("created", "running", "restarting"):
                return exit_code
            await asyncio.sleep(0.5)

    def _state(self) -> tuple[str, int | None]:
        from docker.errors import NotFound

        try:
            self._container.reload()
        except NotFound:
            return "removed", None
        return self._container.status, self._container.attrs.get("State", {}).get("ExitCode")

    # ---- query and the one restart ------------------------------------------

    async def query(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._restart is not None and not self._restart.done():
            await asyncio.shield(self._restart)  # the restart outlives a question's time-out
        if self._gave_up:
            raise TargetError(self._gave_up)
        if self._http is None:
            raise TargetError("docker target not started")
        http, generation = self._http, self._generation
        try:
            return await http.query(request)
        except TargetError as exc:
            message = self.redact(str(exc))
            note = await self._after_failure(generation, unreachable=message.startswith("target unreachable"))
            raise TargetError(f"{message}{note}") from None

    async def _after_failure(self, generation: int, *, unreachable: bool) -> str:
        """Was the failure the container's death? Then restart it once (in the background)."""
        async with self._lock:
            if generation != self._generation:
                return " (the target container died during this question and was restarted)"
            status, exit_code = await asyncio.to_thread(self._state)
            for _ in range(3 if unreachable else 0):
                # The connection can drop a moment before the engine reports the exit.
                if status != "running":
                    break
                await asyncio.sleep(0.3)
                status, exit_code = await asyncio.to_thread(self._state)
            if status == "running":
                return ""
            logs = await asyncio.to_thread(self.logs)
            self._generation += 1
            if self._restarts_left > 0:
                self._restarts_left -= 1
                self._events.append(
                    f"container {self.name} exited (code {exit_code}) mid-run; restarted once. "
                    f"Its last lines before the restart:\n{logs}"
                )
                self._say(f"container exited (code {exit_code}) mid-run: restarting it once")
                self._restart = asyncio.create_task(self._restart_container())
                return f" (the target container exited with code {exit_code}; restarting it once)"
            self._gave_up = (
                f"the target container exited again (code {exit_code}) after its one restart; not restarting"
            )
            self._events.append(f"{self._gave_up}. Its last lines:\n{logs}")
            self._say(self._gave_up)
            return f" ({self._gave_up})"

    async def _restart_container(self) -> None:
        try:
            await asyncio.to_thread(self._container.start)
            await self._connect_and_wait("its restart")
        except Exception as exc:
            self._gave_up = self.redact(f"the target container could not be restarted: {exc}")
            self._events.append(self._gave_up)

    # ---- stop, logs, redaction --------------------------------------------------

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._restart is not None and not self._restart.done():
            self._restart.cancel()
            await asyncio.gather(self._restart, return_exceptions=True)
        if self._creating is not None and not self._creating.done():
            await asyncio.gather(self._creating, return_exceptions=True)  # then remove what it made
        for http in [*self._retired, *([self._http] if self._http else [])]:
            await http.stop()
        if self._container is not None:
            self._final_logs = await asyncio.to_thread(self._fetch_logs)
        removed = await asyncio.to_thread(self._remove_leftovers)
        if removed:
            self._say(f"removed container {self.name}")
        atexit.unregister(self._remove_leftovers)

    def _remove_leftovers(self) -> int:
        """Remove every container of this run (by label): also called at interpreter exit."""
        if self._client is None:
            return 0
        removed = 0
        try:
            for container in self._client.containers.list(
                all=True, filters={"label": f"{RUN_LABEL}={self.run_id}"}
            ):
                container.remove(force=True)
                removed += 1
        except Exception as exc:
            self._say(f"could not remove container {self.name}: {exc} (docker rm -f {self.name})")
        return removed

    def _fetch_logs(self) -> str:
        try:
            raw = self._container.logs(stdout=True, stderr=True, tail=LOG_LINES)
        except Exception as exc:
            return f"(container logs unavailable: {type(exc).__name__})"
        return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)

    def logs(self) -> str:
        """The container's last lines: live while it exists, the copy taken at stop after."""
        text = self._final_logs if self._stopped or self._container is None else self._fetch_logs()
        return self.redact(text.rstrip("\n"))

    def diagnostics(self) -> str:
        parts = [*self._events, f"container {self.name}, last {LOG_LINES} log lines:\n{self.logs()}"]
        return self.redact("\n\n".join(parts))

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    @property
    def log(self) -> TextIO:
        return self._log or sys.stderr

    def _say(self, message: str) -> None:
        print(neutralise(f"[rag-ci] docker: {self.redact(message)}"), file=self.log, flush=True)
