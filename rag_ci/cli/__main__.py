"""`python -m rag_ci.cli`: the `rag-ci` command (the image's `rag-ci` wrapper runs this)."""

from rag_ci.console import main

main()
