"""Import DeepEval without side effects: no telemetry, no .env loading, no files written.

DeepEval reads `.env` files from the working directory, may create a `.deepeval/`
folder and send anonymous telemetry unless told otherwise. A CI tool must do none
of that in the user's repository, so these defaults are set before the first
import (explicit user settings win: `setdefault`).
"""

from __future__ import annotations

import os

DEEPEVAL_ENV_DEFAULTS = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "DEEPEVAL_DISABLE_DOTENV": "1",  # never read the user's .env into the process
    "DEEPEVAL_DISABLE_LEGACY_KEYFILE": "1",  # never read .deepeval/.deepeval keys
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0",  # no PyPI request on import
    "ENABLE_DEEPEVAL_CACHE": "0",  # rag-ci has its own verdict cache (ordered contexts)
}


def prepare_deepeval_environment() -> None:
    for name, value in DEEPEVAL_ENV_DEFAULTS.items():
        os.environ.setdefault(name, value)


def deepeval_version() -> str:
    """The installed DeepEval's version, read from its metadata (importing it takes seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("deepeval")
    except PackageNotFoundError:
        from rag_ci.errors import RagCiError

        raise RagCiError(
            "the DeepEval judge tier needs DeepEval: pip install 'rag-ci-gate[openai]' "
            "(or the extra of your judge provider)"
        ) from None


def deepeval_package_dir():
    """Where DeepEval is installed, found without executing its (slow) `__init__`."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("deepeval")
    if spec is None or not spec.submodule_search_locations:
        deepeval_version()  # raises the "install the extra" error
    return Path(next(iter(spec.submodule_search_locations)))
