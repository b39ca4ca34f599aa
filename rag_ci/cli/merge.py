"""`rag-ci merge SHARD... -o results.json`: the click command (wired into rag_ci.cli)."""

from __future__ import annotations

from pathlib import Path

import click

from rag_ci.errors import RagCiError


class _MergeUsageError(click.ClickException):
    exit_code = 2  # like every unusable input in rag-ci (1 is reserved for regressions)


@click.command("merge")
@click.argument("shards", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--output", "-o", type=click.Path(path_type=Path), default="results.json", show_default=True,
              help="Where to write the merged results.json.")
def merge(shards: tuple[Path, ...], output: Path) -> None:
    """Merge the results of `rag-ci run --shard i/n` (all n files) into one results.json.

    The shards must come from the same run (question set, config, judge, commit);
    the merged file has the same content as an unsharded run, in question-set
    order, with the aggregates recomputed. Compare or report it as usual.
    """
    from rag_ci.merge import merge_results
    from rag_ci.storage import check_output_path, load_results, save_results

    try:
        check_output_path(output)
        results = [load_results(path, what="shard") for path in shards]
        merged = merge_results(results, names=[str(path) for path in shards])
        save_results(output, merged)
    except RagCiError as exc:
        raise _MergeUsageError(str(exc)) from None
    overall = merged.aggregates.overall
    click.echo(
        f"[rag-ci] merged {len(shards)} shards: {overall.n} questions, {overall.passed} pass, {overall.failed} fail, "
        f"{overall.errors} error, {overall.routing_errors} routing_error; results in {output}",
        err=True,
    )
