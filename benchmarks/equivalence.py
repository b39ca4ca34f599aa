"""False-carry rate of `judge.reuse_equivalent_answers` on a labelled set built from the example.

The set: every non-refusal answer of examples/baseline/results.json, paired with
- paraphrases (same facts, label "same"): its sentences in another order; a sentence
  stating nothing appended ("That is all.");
- one-fact edits (label "changed"): its first number changed; its last sentence dropped;
  one sentence of another answer appended.

Each pair is put to the judge with rag-ci's equivalence prompt. A *false carry* is a
one-fact edit the judge calls the same facts (it would hide a change); a *missed carry*
is a paraphrase it calls different (it only costs calls).

    python -m benchmarks.equivalence                   # the scripted judge simulator
    python -m benchmarks.equivalence --config rag-ci.yml  # your judge (needs its API key)

The scripted simulator decides by term overlap (rag_ci/judges/fake.py): its rate
shows the method and the set, not what an LLM judge does; run it with your judge before
turning the option on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

BASELINE = REPO / "examples" / "baseline" / "results.json"
NOTHING = "That is all."


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def labelled_pairs(baseline: Path = BASELINE) -> list[dict[str, Any]]:
    data = json.loads(baseline.read_text(encoding="utf-8"))
    answered = [
        (q["id"], q["question"], q["answer"])
        for q in data["questions"]
        if q.get("answer") and q.get("expect") != "refusal" and q.get("verdict") != "error"
    ]
    pairs = []
    for k, (qid, question, answer) in enumerate(answered):
        parts = _sentences(answer)

        def add(
            kind: str, label: str, new: str, qid: str = qid, question: str = question, answer: str = answer
        ) -> None:
            pairs.append(
                {
                    "id": qid,
                    "question": question,
                    "baseline": answer,
                    "new": new,
                    "kind": kind,
                    "same": label == "same",
                }
            )

        add("appended sentence stating nothing", "same", f"{answer} {NOTHING}")
        if len(parts) > 1:
            add("sentences reordered", "same", " ".join(parts[1:] + parts[:1]))
            add("last sentence dropped", "changed", " ".join(parts[:-1]))
        number = re.search(r"\d+(?:[.,]\d+)?", answer)
        if number:
            value = number.group(0)
            changed = str(int(value) + 1) if value.isdigit() else value[:-1] + str((int(value[-1]) + 1) % 10)
            add("one number changed", "changed", answer[: number.start()] + changed + answer[number.end() :])
        other = _sentences(answered[(k + 1) % len(answered)][2])[0]
        add("a sentence of another answer appended", "changed", f"{answer} {other}")
    return pairs


async def _ask(client, pairs: list[dict[str, Any]]) -> list[bool]:
    from rag_ci.judges.equivalence import SameFacts, equivalence_prompt

    async def one(pair):
        reply = await client.call(
            equivalence_prompt(pair["question"], pair["baseline"], pair["new"]), SameFacts
        )
        return reply.same_facts

    return await asyncio.gather(*(one(p) for p in pairs))


def measure(client, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    async def go():
        try:
            return await _ask(client, pairs)
        finally:
            await client.aclose()

    said_same = asyncio.run(go())
    edits = [(p, s) for p, s in zip(pairs, said_same) if not p["same"]]
    paraphrases = [(p, s) for p, s in zip(pairs, said_same) if p["same"]]
    false_carries = [p for p, s in edits if s]
    missed = [p for p, s in paraphrases if not s]
    return {
        "pairs": len(pairs),
        "one_fact_edits": len(edits),
        "paraphrases": len(paraphrases),
        "false_carries": len(false_carries),
        "false_carry_rate": len(false_carries) / max(1, len(edits)),
        "paraphrases_carried": len(paraphrases) - len(missed),
        "carry_rate": (len(paraphrases) - len(missed)) / max(1, len(paraphrases)),
        "false_carry_examples": [{k: p[k] for k in ("id", "kind", "new")} for p in false_carries[:5]],
        "by_kind": {
            kind: sum(1 for p, s in zip(pairs, said_same) if p["kind"] == kind and s)
            for kind in {p["kind"] for p in pairs}
        },
    }


def _client_for(config_path: Path | None, base_url: str | None):
    from rag_ci.files.project import load_project
    from rag_ci.judges.build import build_judge

    if config_path is not None:
        config = load_project(config_path).config
    else:
        from benchmarks.simulators import write_project

        folder = Path(tempfile.mkdtemp(prefix="rag-ci-equivalence-"))
        config = load_project(write_project(folder, questions=1, judge_url=base_url)).config
    scorer = build_judge(config, env={"OPENAI_API_KEY": "simulated"} if config_path is None else None)
    return scorer.client


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.equivalence", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--config", type=Path, help="a rag-ci.yml whose judge to ask (default: the scripted simulator)"
    )
    args = parser.parse_args(argv)
    pairs = labelled_pairs()
    if args.config:
        result = measure(_client_for(args.config, None), pairs)
        result["judge"] = "rag-ci.yml: " + str(args.config)
    else:
        from benchmarks.simulated_judge import JudgeProcess

        with JudgeProcess(latency_s=0.0) as judge:
            result = measure(_client_for(None, judge.base_url), pairs)
        result["judge"] = "scripted simulator (term overlap)"
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
