"""Importing DeepEval for the judge: its metrics, without the SDKs of providers rag-ci does not call.

`import deepeval.metrics` imports every model class DeepEval ships, and their shared
`deepeval.models.retry_policy` imports the SDK of every provider that happens to be
installed (Anthropic, Google GenAI, gRPC, botocore) to classify its exceptions: with
rag-ci's extras installed that is ~3,300 of the ~4,900 modules and two thirds of the
import's CPU time (3.5 s → 1.5 s on the benchmark machine). rag-ci never calls DeepEval's
model classes, nor their retry policies: its metrics receive `RagCiJudgeModel`, which sends
every call through rag-ci's own client and providers. So while DeepEval is imported here,
those optional imports *made by retry_policy itself* fail as they do where the SDK is not
installed (each sits in a `try`, and DeepEval then leaves that provider's policy unset).
The SDK of the configured provider is imported first and is never refused; no other module's
imports are touched, and the finder is removed once the import is done.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import json
import re
import sys
import threading
from collections.abc import Iterable

from rag_ci.judges.env import prepare_deepeval_environment

RETRY_POLICY = "deepeval.models.retry_policy"
# The packages retry_policy imports only to classify provider exceptions (DeepEval 4.3.1).
OPTIONAL_SDKS = frozenset({"anthropic", "google", "grpc", "botocore", "typesafe_sdk"})
_IMPORTER_FRAMES = 2  # retry_policy imports directly, or through deepeval.utils.require_dependency
_lock = threading.Lock()
IMPORT_SWITCH_INTERVAL_S = 0.0005


class _SkipProviderSdks(importlib.abc.MetaPathFinder):
    """Refuses `skipped` packages to imports made by DeepEval's retry_policy, and to nothing else."""

    def __init__(self, skipped: frozenset[str]):
        self.skipped = skipped

    def find_spec(self, name, path=None, target=None):  # the MetaPathFinder protocol; None: not ours to find
        if name.partition(".")[0] not in self.skipped or name in sys.modules:
            return
        frame, seen = sys._getframe(1), 0
        while frame is not None and seen < _IMPORTER_FRAMES:
            module = frame.f_globals.get("__name__", "")
            if not module.startswith("importlib"):  # the import machinery's own frames
                if module == RETRY_POLICY:
                    raise ModuleNotFoundError(
                        f"{name} is not imported for DeepEval's retry policies (rag-ci)", name=name
                    )
                seen += 1
            frame = frame.f_back
        return None  # noqa: RET501 - the protocol's "not found here"


def import_deepeval(provider_modules: Iterable[str] = ()) -> None:
    """Import the configured provider's SDK, then the DeepEval modules the judge uses."""
    prepare_deepeval_environment()
    provider_modules = tuple(provider_modules)
    # One import at a time, the SDK's included: DeepEval imports the OpenAI SDK too, and two
    # threads importing one package from different ends (the early import's deepeval →
    # openai.types.chat, the scorer's openai → openai.types) each wait for a module the other
    # holds; Python then breaks the tie by handing one a partially initialised module
    # ("cannot import name ... from partially initialized module 'openai.types.chat'"), and
    # every question of the run errored. A second caller finds everything in sys.modules.
    with _lock:
        for module in provider_modules:
            importlib.import_module(module)
        if RETRY_POLICY in sys.modules:
            skipped: frozenset[str] = frozenset()
        else:
            skipped = OPTIONAL_SDKS - {m.partition(".")[0] for m in provider_modules}
        finder = _SkipProviderSdks(skipped) if skipped else None
        if finder is not None:
            sys.meta_path.insert(0, finder)
        # The import runs beside the event loop (a worker thread): it holds the GIL for up to a
        # switch interval each time the loop wants it back, which for a target answering in
        # milliseconds is most of each round trip. A shorter interval while it lasts lets the
        # loop in at once (42 cached answers: 1.9 s → about 0.4 s alongside the import).
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, IMPORT_SWITCH_INTERVAL_S))
        try:
            for module in ("deepeval.metrics", "deepeval.test_case"):
                importlib.import_module(module)
        finally:
            sys.setswitchinterval(interval)
            if finder is not None:
                sys.meta_path.remove(finder)


# -- from the process's start ------------------------------------------------------------

_TOP_LEVEL_JUDGE = re.compile(
    r"^judge:[ \t]*(?P<flow>\{[^\n]*\})?[ \t]*(?:#[^\n]*)?\n(?P<block>(?:(?:[ \t]+[^\n]*)?\n)*)", re.MULTILINE
)
_PROVIDER = re.compile(r"""provider:[ \t]*["']?(?P<name>[A-Za-z][\w-]*)""")


def judge_configured(argv: list[str]) -> bool:
    """Does this `rag-ci` command line look like a run that will judge every answer? A cheap
    guess made before anything is imported: `run` without `--baseline` (a run with one may
    be answered by its verdict cache entirely: the scorer starts the import when it knows a
    question will be judged), with `--judge` other than `none`, or a config file whose
    top-level `judge:` names a provider other than `none`. A wrong guess costs nothing but
    the early start (the run itself decides, from the parsed config)."""
    if not argv or argv[0] != "run" or any(a == "--baseline" or a.startswith("--baseline=") for a in argv):
        return False
    config, judge = "rag-ci.yml", None
    for i, arg in enumerate(argv):
        for name in ("--config", "--judge"):
            value = (
                argv[i + 1]
                if arg == name and i + 1 < len(argv)
                else arg.partition("=")[2]
                if arg.startswith(name + "=")
                else None
            )
            if value is not None:
                config, judge = (value, judge) if name == "--config" else (config, value)
    if judge is not None:
        return judge.partition(":")[0].strip() != "none"
    try:
        with open(config, encoding="utf-8") as handle:
            text = handle.read(1_000_000)
    except (OSError, UnicodeDecodeError):
        return False
    if text.lstrip().startswith(
        "{"
    ):  # a JSON config (JSON is YAML), as scripts and rag-ci's benchmarks write
        provider = _json_judge_provider(text)
        return provider is not None and provider != "none"
    section = _TOP_LEVEL_JUDGE.search(text)
    found = _PROVIDER.search(section.group("flow") or section.group("block")) if section else None
    return found is not None and found.group("name") != "none"


def _json_judge_provider(text: str) -> str | None:
    try:
        config = json.loads(text)
    except ValueError:
        return None
    judge = config.get("judge") if isinstance(config, dict) else None
    provider = judge.get("provider") if isinstance(judge, dict) else None
    return provider if isinstance(provider, str) else None


def start_early(argv: list[str]) -> None:
    """At the process's start (the entry points only): when the command line looks like a
    judged run, import DeepEval in a daemon thread while the CLI and the config load and
    the target is built and started. The scorer's own import (`prefetch`) then finds it
    done, or waits for it on the lock, and builds the SDK client."""
    if judge_configured(argv) and importlib.util.find_spec("deepeval") is not None:
        threading.Thread(target=_import_quietly, name="rag-ci-deepeval-early-import", daemon=True).start()


def _import_quietly() -> None:
    try:
        import_deepeval()
    except Exception:
        pass
