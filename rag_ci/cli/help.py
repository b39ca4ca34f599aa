"""The first screen of `rag-ci --help`: commands in the order they were added, one summary each that fits."""

from __future__ import annotations

import click


class ListedAsRegistered(click.Group):
    """A group that lists its commands in the order they were added, not alphabetically: the
    gate's commands first (tests/unit/test_cli_help.py)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


# The one-line summaries of the first screen (`rag-ci --help`, `rag-ci questions --help`), written
# to fit beside the command's name: click would cut the docstring's first sentence with "...".
SUMMARIES = {
    "run": "Build and start the target, replay the questions, score.",
    "compare": "Compare results with a baseline; exit 1 on a regression.",
    "report": "Render the report of a run: markdown (PR comment) or HTML.",
    "validate": "Check the config, questions and routing without running.",
    "init": "Start a project: rag-ci.yml, the workflows, a questions.yml.",
    "questions": "Grow the question set: import, draft, review, apply.",
    "audit": "Audit the judge: a blind sample of answers to label.",
    "calibrate": "Agreement of human labels with the judge (Cohen's kappa).",
    "history": "The trend of main, from an eval_history.jsonl.",
    "merge": "Merge the results of sharded runs into one results.json.",
    "schema": "Print the JSON Schema of rag-ci.yml or questions.yml.",
    "publish": "Publish the report beyond the job log (GitLab note).",
    "publish gitlab": "Post or edit the one rag-ci note on a merge request.",
    "demo": "Watch the gate catch a regression on a bundled example RAG.",
    "questions import": "Append one draft per real question of a log.",
    "questions generate": "Draft questions from the corpora with a writer model.",
    "questions review": "Write a page showing each draft beside its passage.",
    "questions apply": "Merge the review page's reviewed.yml into the set.",
    "questions approve": "Approve drafts as they are.",
    "questions edit": "Change a draft's fields.",
    "questions reject": "Remove drafts from the question set.",
    "audit sample": "Write a labelling sheet and its HTML labelling page.",
    "history show": "Print the trend: pass rate, latency, cost.",
    "history append": "Append the summary line of a results.json.",
}


def summarise(group: click.Group, prefix: str = "") -> None:
    """Give each command of `group` (and of its sub-groups) its summary from SUMMARIES."""
    for name, command in group.commands.items():
        command.short_help = SUMMARIES.get(prefix + name, command.short_help)
        if isinstance(command, click.Group):
            summarise(command, f"{prefix}{name} ")
