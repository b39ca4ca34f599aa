"""`rag-ci merge SHARD... -o results.json`: shards -> one results.json."""

from __future__ import annotations

from pathlib import Path

import click

from rag_ci.cli.echo import echo
from rag_ci.cli.errors import user_errors


@click.command("merge")
@click.argument("shards", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path),
    default="results.json",
    show_default=True,
    help="Where to write the merged results.json.",
)
@user_errors
def merge(shards: tuple[Path, ...], output: Path) -> None:
    """Merge the results of `rag-ci run --shard i/n` (all n files) into one results.json.

    The shards must come from the same run (question set, config, judge, commit);
    the merged file has the same content as an unsharded run, in question-set
    order, with the aggregates recomputed. Compare or report it as usual.
    """
    from rag_ci.files.atomic import check_output_path
    from rag_ci.files.merge import merge_results
    from rag_ci.files.results_file import load_results, save_results

    check_output_path(output)
    results = [load_results(path, what="shard") for path in shards]
    merged = merge_results(results, names=[str(path) for path in shards])
    save_results(output, merged)
    overall = merged.aggregates.overall
    echo(
        f"[rag-ci] merged {len(shards)} shards: {overall.n} questions, {overall.passed} pass, {overall.failed} fail, "
        f"{overall.errors} error, {overall.routing_errors} routing_error; results in {output}",
        err=True,
    )
