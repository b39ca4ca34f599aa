"""Entrypoint of the rag-ci GitHub Action (Docker container action) and CLI; see rag_ci/__main__.py."""

import sys

from rag_ci.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
