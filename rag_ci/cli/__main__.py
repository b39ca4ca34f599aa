"""The `rag-ci` command as a process: the console script, `python -m rag_ci.cli` (the image's
`rag-ci` wrapper runs this).

DeepEval's import is started first when the command line looks like a judged run
(rag_ci.judges.deepeval_import), and the process ends without the interpreter's teardown
(rag_ci.runtime.process_exit). `rag_ci.cli.main` itself returns its exit code (tests call it).
"""

from __future__ import annotations

import sys


def main() -> None:
    from rag_ci.runtime.process_exit import exit_process

    if sys.argv[1:2] == ["run"]:  # only a run judges: other commands start without its import machinery
        from rag_ci.judges.deepeval_import import start_early

        start_early(sys.argv[1:])
    from rag_ci.cli import main as cli_main

    exit_process(cli_main())


if __name__ == "__main__":
    main()
