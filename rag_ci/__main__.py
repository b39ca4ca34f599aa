"""The image's entrypoint (`python -m rag_ci`): one image, two faces.

    docker run IMAGE run --config rag-ci.yml ...   arguments: the CLI (any command, --help, --version)
    no arguments, GITHUB_ACTIONS=true              the GitHub Action (action.yml passes no args)
    no arguments elsewhere                         the CLI's help

The `rag-ci` command (rag_ci.cli.__main__) is the other face's process.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv and os.environ.get("GITHUB_ACTIONS") == "true":
        from rag_ci.action.entry import main as action_main
        from rag_ci.action.entry import runner_for
        from rag_ci.action.outputs import report_interrupted
        from rag_ci.action.settings import Settings

        try:
            return action_main()
        except KeyboardInterrupt:  # a cancelled job: exit 130/143, not a traceback (signals.py)
            return report_interrupted(runner_for(Settings.runner_only(os.environ)))
    from rag_ci.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    from rag_ci.judges.deepeval_import import start_early
    from rag_ci.runtime.process_exit import exit_process

    start_early(sys.argv[1:])
    exit_process(main())
