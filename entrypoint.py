"""Entrypoint of the rag-ci GitHub Action (Docker container action); see rag_ci/action.py."""

import sys

from rag_ci.action import main

if __name__ == "__main__":
    sys.exit(main())
