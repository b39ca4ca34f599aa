"""`rag-ci demo`: a caught regression in seconds, with nothing but the installed package.

The embedded example (examples/, shipped in the wheel as rag_ci/templates/example/ by
pyproject.toml's force-include; a source checkout reads examples/ itself) is copied to a temporary folder and run twice by
the same `run` command users run: once as on main (the baseline), once with the routing
broken the way a pull request could break it (EXAMPLE_RAG_REGRESSION=routing). The second
run is compared with the first, shown, and ends the demo with exit 1, as a CI job would.
Judge-free: no key, no network.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import click

from rag_ci.cli.echo import echo
from rag_ci.cli.errors import UserError
from rag_ci.cli.gate import run
from rag_ci.files.results_file import load_results

EXAMPLE_FILES = ("rag-ci.yml", "questions.yml", "requirements.txt", "corpora", "rag")
REGRESSION = "routing"  # the example server ignores `corpora`: a DU-2 question gets DU-3 passages


def _example_source():
    """The wheel's copy of the example, else the checkout's examples/ (editable installs)."""
    shipped = resources.files("rag_ci").joinpath("templates", "example")
    if shipped.is_dir():
        return shipped
    checkout = Path(__file__).resolve().parents[2] / "examples"
    if not (checkout / "rag-ci.yml").is_file():
        raise UserError("the embedded example is missing from this installation: reinstall rag-ci-gate")
    return checkout


def copy_example(folder: Path) -> Path:
    """The shipped example into `folder`; returns its rag-ci.yml."""
    with resources.as_file(_example_source()) as example:
        for name in EXAMPLE_FILES:
            source = example / name
            if source.is_dir():
                shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__", ".index"))
            else:
                shutil.copy(source, folder / name)
    return folder / "rag-ci.yml"


@contextmanager
def _environment(name: str, value: str | None):
    before = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


@click.command("demo")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["terminal", "md"]),
    default="terminal",
    show_default=True,
    help="How the comparison is shown (md: the PR comment's markdown).",
)
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run in this folder (created) and keep it, instead of a temporary one.",
)
@click.pass_context
def demo(ctx: click.Context, fmt: str, keep: Path | None) -> None:
    """Watch rag-ci catch a regression: the example RAG (two e-bike manuals, 42 questions)
    is run as on main, then with its routing broken; the comparison is shown and the demo
    exits 1, as the pull request's check would. No key, no network, a few seconds."""
    with tempfile.TemporaryDirectory(prefix="rag-ci-demo-") as scratch:
        folder = keep.resolve() if keep else Path(scratch)
        if keep and keep.exists() and any(keep.iterdir()):
            raise UserError(f"--keep {keep}: the folder is not empty (the demo writes its own files there)")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            config = copy_example(folder)
        except OSError as exc:
            raise UserError(f"{folder}: cannot write the demo's files: {exc.strerror or exc}") from None
        echo(
            f"rag-ci demo: the example RAG (BM25 over two manuals; rag-ci.yml, questions.yml) in {folder}"
            + ("" if keep else " (removed at the end; --keep DIR keeps it)")
        )
        echo("1/2 the baseline: main's RAG answers the 42 questions")
        with _environment("EXAMPLE_RAG_REGRESSION", None):
            ctx.invoke(
                run,
                config_path=config,
                output=folder / "baseline.json",
                # A baseline is compared with nothing: its report would only say "no baseline to
                # compare with" (in yellow, a warning) at the step that makes one. The count line says it.
                fmt="json",
                progress=False,
            )
        made = load_results(folder / "baseline.json").aggregates.overall
        echo(f"    the baseline: {made.passed}/{made.n} pass ({folder / 'baseline.json'})")
        echo(
            f"\n2/2 a pull request breaks the routing (EXAMPLE_RAG_REGRESSION={REGRESSION}): compared with the baseline\n"
        )
        try:
            with _environment("EXAMPLE_RAG_REGRESSION", REGRESSION):
                ctx.invoke(
                    run,
                    config_path=config,
                    output=folder / "results.json",
                    baseline=folder / "baseline.json",
                    fmt=fmt,
                    progress=False,
                )
        except SystemExit as exit_:
            if exit_.code == 1:
                echo(
                    "\nrag-ci demo: the gate caught it — exit 1, the pull request's check fails. "
                    "Next: `rag-ci init` in your repository."
                )
            raise
        raise UserError(
            "the demo's regression was not caught: please report this (https://github.com/rag-ci/rag-ci/issues)"
        )
