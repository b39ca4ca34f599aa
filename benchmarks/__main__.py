"""`python -m benchmarks [--quick]`: see benchmarks/harness.py and docs/performance.md."""

import sys

from benchmarks.harness import main

sys.exit(main())
