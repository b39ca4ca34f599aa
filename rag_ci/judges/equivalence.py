"""Reworded but equivalent answers (opt-in `judge.reuse_equivalent_answers`).

A generator rewords its answers from run to run; re-judging every metric that reads
the answer costs most of a cold run. With the option on, one strict binary judge call
asks whether the new answer states exactly the facts of the baseline answer (nothing
added, removed or changed); when it does, the baseline's verdicts of the metrics that
read the answer are carried over (`MetricResult.equivalent_answer`). Faithfulness
reads the contexts too, so it is carried only when the contexts are unchanged.

Off by default: a false "same" hides a regression. docs/performance.md gives the
false-carry rate measured on a labelled set (`python -m benchmarks.equivalence`).
"""

from __future__ import annotations

from pydantic import BaseModel

PROMPT = """You compare two answers to the same question, given by a question-answering system on two runs.

Question:
{question}

Baseline answer:
{baseline}

New answer:
{new}

Does the new answer state exactly the same facts as the baseline answer? Every fact, number, unit, name, \
condition and step must be the same: nothing added, nothing removed, nothing changed. Wording, sentence order \
and style do not matter. When in doubt, answer false.

Return JSON with one key "same_facts", true or false.

JSON:
"""


class SameFacts(BaseModel):
    same_facts: bool


def equivalence_prompt(question: str, baseline: str, new: str) -> str:
    return PROMPT.format(question=question, baseline=baseline, new=new)
