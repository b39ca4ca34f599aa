"""The `rag-ci` command line: the same engine as the GitHub Action, on any machine.

This module builds the group and registers every command; the commands live in the
modules beside it (one per command or command group), and `errors` holds the one
`UserError` (exit 2) and the one way a `RagCiError` becomes it.
"""

from __future__ import annotations

import click

from rag_ci import __version__
from rag_ci.cli.errors import EXIT_CODES
from rag_ci.cli.lazy import LazyGroup

# Listed in this order by `rag-ci --help`: the gate first, then trying and setting up a project.
# Each is imported when it is called (rag_ci.cli.lazy): `rag-ci --version` imports none.
COMMANDS = {
    "run": "rag_ci.cli.gate:run",
    "compare": "rag_ci.cli.compare:compare_cmd",
    "report": "rag_ci.cli.compare:report",
    "validate": "rag_ci.cli.validate:validate",  # the gate: run, compare, report, check
    "demo": "rag_ci.cli.demo:demo",  # `rag-ci demo`: a caught regression in seconds, nothing to set up
    "init": "rag_ci.cli.init:init",  # `rag-ci init`: a project from nothing
    "questions": "rag_ci.cli.questions:questions",  # `rag-ci questions import`: drafts from logs
    "audit": "rag_ci.cli.audit:audit",  # `rag-ci audit sample`: a blind sample to label
    "calibrate": "rag_ci.cli.calibrate:calibrate",  # `rag-ci calibrate`: judge vs human labels
    "history": "rag_ci.cli.history:history",  # `rag-ci history`: trend on main
    "merge": "rag_ci.cli.merge:merge",  # `rag-ci merge`: shards -> one results.json
    "publish": "rag_ci.cli.publish:publish",  # `rag-ci publish gitlab`: the merge-request note
    "schema": "rag_ci.cli.schema:schema",  # JSON Schemas of rag-ci.yml and questions.yml, for editors
}


@click.group(cls=LazyGroup, lazy=COMMANDS, epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="rag-ci")
def cli() -> None:
    """rag-ci: gate pull requests on the quality of a RAG application.

    Replay a versioned question set against your RAG, routing each question to
    its corpus; score the answers (judge-free retrieval metrics, DeepEval metrics
    with a pinned judge); compare with the baseline from main, question by
    question; fail on any regression.
    """


def main(argv: list[str] | None = None) -> int:
    """The `rag-ci` command (also `python -m rag_ci.cli`, and the image with arguments).

    Not click's standalone mode: that turns Ctrl-C and a cancelled job's SIGTERM into
    "Aborted!" and exit 1, which means "regression" (signals.interrupted says what happened)."""
    from rag_ci.runtime.signals import interrupted, terminate_like_interrupt

    terminate_like_interrupt()
    try:
        code = cli.main(args=argv, prog_name="rag-ci", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except KeyboardInterrupt:
        return interrupted()
    except click.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return interrupted()
        click.echo("Aborted!", err=True)
        return 2
    return code if isinstance(code, int) else 0
