"""`python -m rag_ci.cli`: the `rag-ci` command (the image's `rag-ci` wrapper runs this)."""

import sys

from rag_ci.cli import main

sys.exit(main())
