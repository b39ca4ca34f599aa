"""Is a judge model id pinned (exact, dated or versioned) or a floating alias?

A floating alias ("gpt-4o", "claude-3-5-sonnet-latest", "llama3.1") silently moves
to a new snapshot; verdicts from main and from the PR would then come from two
different judges and "any regression fails" would fail on the provider's change.

The rules follow each lab's naming of snapshots:
- OpenAI: a date suffix, `-YYYY-MM-DD` (gpt-4.1-mini-2025-04-14) or the older `-MMDD`
  (gpt-4-0613, gpt-3.5-turbo-0125); fine-tunes (`ft:…`) are pinned.
- Anthropic: an 8-digit date (claude-haiku-4-5-20251001), also inside Bedrock ids.
- Google Gemini: before 2.5 a `-NNN` version (gemini-1.5-pro-002, gemini-2.0-flash-001);
  from 2.5 on, the plain stable code is a fixed model (gemini-2.5-flash), and
  `-preview-MM-DD` / `-exp-MMDD` snapshots carry their date.
- Mistral: `-YYMM` (mistral-large-2411).
- Ollama: an explicit tag other than `latest` (qwen2.5:7b-instruct-q4_K_M).
Each provider names its rule (`pin_rule` in rag_ci.core.config.providers); `_RULES` maps the
names to the rules below.
- Everywhere: anything containing "latest" is an alias.
Other open-weight ids (Qwen/Qwen2.5-7B-Instruct, served by vLLM) name fixed weights.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rag_ci.core.config.providers import PROVIDERS, PinRule
from rag_ci.judges.families import family_of, normalise_model_id

_OPENAI_DATED = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4})(?:$|[-:])")
_ANTHROPIC_DATED = re.compile(r"\d{8}")
_GEMINI_VERSION = re.compile(r"-(\d{3}|\d{2}-\d{2}|\d{4})(?:$|-)")
_GEMINI_GENERATION = re.compile(r"^gemini-(\d+(?:\.\d+)?)")
_MISTRAL_DATED = re.compile(r"-\d{4}(?:$|-)")


def alias_problem(provider: str, model: str) -> str | None:
    """Why `model` is a floating alias for `provider`, or None when it is pinned (by the provider's
    pin rule: rag_ci.core.config.providers)."""
    raw = model.strip()
    if "latest" in raw.lower():
        return f"'{raw}' contains 'latest', which moves to new snapshots"
    return _RULES[PROVIDERS[provider].pin_rule](raw)


def _ollama_tag(raw: str) -> str | None:
    if ":" not in raw:
        return f"'{raw}' has no tag, so Ollama resolves it to ':latest'; name a tag such as '{raw}:8b-instruct-q4_K_M'"
    return None


def _dated_snapshot(raw: str) -> str | None:
    return _lab_naming(raw, served_weights=False)


def _served_weights(raw: str) -> str | None:
    return _lab_naming(raw, served_weights=True)


def _one_model(raw: str) -> str | None:
    return None  # the provider's single model is checked where it is built (rag_ci.judges.fake)


def _lab_naming(raw: str, *, served_weights: bool) -> str | None:
    """Each lab's naming of snapshots; on a server of open weights a Mistral name is fixed weights."""
    org, name = normalise_model_id(raw)
    family = family_of(raw)
    if raw.lower().startswith("ft:"):
        return None
    if family == "openai" and not name.startswith("gpt-oss"):
        if not _OPENAI_DATED.search(name):
            return f"'{raw}' is an OpenAI alias; use a dated snapshot such as 'gpt-4.1-mini-2025-04-14'"
    elif family == "anthropic":
        if not _ANTHROPIC_DATED.search(name):
            return f"'{raw}' is an Anthropic alias; use a dated id such as 'claude-haiku-4-5-20251001'"
    elif family == "google" and name.startswith("gemini"):
        generation = _GEMINI_GENERATION.match(name)
        stable_code = (
            generation is not None
            and float(generation.group(1)) >= 2.5
            and "preview" not in name
            and "exp" not in name
        )
        if not stable_code and not _GEMINI_VERSION.search(name):
            return f"'{raw}' is a Gemini alias; use a versioned id such as 'gemini-2.0-flash-001' or 'gemini-2.5-flash'"
    elif family == "mistral" and org is None and not served_weights:
        # On Mistral's API the undated names float; open weights served locally do not.
        if not _MISTRAL_DATED.search(name):
            return f"'{raw}' is a Mistral alias; use a dated id such as 'mistral-large-2411'"
    return None


_RULES: dict[PinRule, Callable[[str], str | None]] = {
    "dated_snapshot": _dated_snapshot,
    "served_weights": _served_weights,
    "ollama_tag": _ollama_tag,
    "one_model": _one_model,
}
