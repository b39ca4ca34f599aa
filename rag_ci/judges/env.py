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
    prepare_deepeval_environment()
    import deepeval

    return deepeval.__version__
