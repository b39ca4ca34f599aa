"""Entrypoint of the rag-ci GitHub Action (Docker container action) and CLI; see rag_ci/__main__.py."""

import runpy

if __name__ == "__main__":
    runpy.run_module("rag_ci", run_name="__main__")
