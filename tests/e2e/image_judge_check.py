"""Every judge provider and every metric, scored for real against the fake judge servers.

Run inside rag-ci's image by tests/e2e/test_image.py (with tests/ mounted): the image's
lock leaves out packages rag-ci never imports, and this is the proof that what it
kept is enough. For each provider a slice of the example is replayed through
`rag-ci run --judge PROVIDER:MODEL@FAKE` with all six DeepEval metrics. Exit 0 when
every provider scored every judged metric; otherwise the failing providers on stderr.

    python image_judge_check.py EXAMPLE_DIR OUT_DIR [--modules FILE]

--modules writes the distributions imported along the way (to find what a lock can drop).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for fakes

from fakes.judge_servers import (
    FakeAnthropicJudgeServer,
    FakeGeminiJudgeServer,
    FakeOllamaJudgeServer,
    FakeOpenAIJudgeServer,
)
from fakes.judge_setup import FAKE_KEYS, JUDGE_MODELS

SERVERS = {
    "openai": FakeOpenAIJudgeServer,
    "anthropic": FakeAnthropicJudgeServer,
    "gemini": FakeGeminiJudgeServer,
    "ollama": FakeOllamaJudgeServer,
}
JUDGED = {
    "faithfulness",
    "answer_relevancy",
    "contextual_precision",
    "contextual_recall",
    "correctness",
    "completeness",
}


def scored_metrics(results: dict) -> set[str]:
    found: set[str] = set()
    for record in results.get("questions", []):
        for name, score in (record.get("metrics") or {}).items():
            if isinstance(score, dict) and score.get("score") is not None:
                found.add(name)
    return found


def main(argv: list[str]) -> int:
    import os

    from rag_ci.cli import cli

    example, out = Path(argv[0]), Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    os.environ.update(FAKE_KEYS)
    failures = []
    for provider, server_class in SERVERS.items():
        with server_class() as server:
            output = out / f"{provider}.json"
            args = [
                "run",
                "--config",
                str(example / "rag-ci.yml"),
                "-o",
                str(output),
                "--no-progress",
                "--shard",
                "1/10",
                "--judge",
                f"{provider}:{JUDGE_MODELS[provider]}@{server.base_url}",
            ]
            try:
                cli.main(args, standalone_mode=False)
            except SystemExit as exc:  # click's ctx.exit for a non-zero code
                if exc.code not in (0, None):
                    failures.append(f"{provider}: exit {exc.code}")
                    continue
            except Exception as exc:
                failures.append(f"{provider}: {type(exc).__name__}: {exc}")
                continue
            missing = JUDGED - scored_metrics(json.loads(output.read_text()))
            if missing or server.requests == 0:
                failures.append(f"{provider}: no score for {sorted(missing)} ({server.requests} judge calls)")
            else:
                print(
                    f"{provider}: {len(JUDGED)} judged metrics scored in {server.requests} calls", flush=True
                )
    if len(argv) > 3 and argv[2] == "--modules":
        from importlib.metadata import packages_distributions

        owners = packages_distributions()
        used = sorted({d for m in list(sys.modules) for d in owners.get(m.partition(".")[0], [])})
        Path(argv[3]).write_text("\n".join(used) + "\n")
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
