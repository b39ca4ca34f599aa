"""Which lab trained a model: the judge must not be of the generator's family.

A judge grades its own family's style more kindly (self-preference), so the run
stops when judge and generator share a family. Model ids arrive in many shapes
(`gpt-4.1-mini-2025-04-14`, `meta-llama/Llama-3.1-8B-Instruct`, `qwen2.5:7b`,
`us.anthropic.claude-3-5-sonnet-20241022-v2:0`, `ft:gpt-4o-mini-...`), so the id is
normalised first, then matched against an ordered table of name patterns.

Pure: no I/O. Extend `FAMILY_PATTERNS` (or set `judge.family` /
`target.generator_family` in rag-ci.yml) when a new lab appears.
"""

from __future__ import annotations

import re

from rag_ci.errors import RagCiError

# The fake judge's (rag_ci.judges.fake): not a lab, so no real judge may claim it.
FAKE_FAMILY = "fake"

# Aliases accepted in overrides, mapped to the canonical family name.
FAMILY_ALIASES = {
    "qwen": "alibaba",
    "gemini": "google",
    "gemma": "google",
    "llama": "meta",
    "phi": "microsoft",
    "grok": "xai",
    "claude": "anthropic",
    "gpt": "openai",
    "mixtral": "mistral",
    "kimi": "moonshot",
    "glm": "zhipu",
    "falcon": "tii",
    "olmo": "allenai",
    "granite": "ibm",
    "nemotron": "nvidia",
}

# Hugging Face / router organisation prefixes ("meta-llama/Llama-3.1-8B") → family.
ORG_FAMILIES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "google",
    "meta-llama": "meta",
    "meta": "meta",
    "facebook": "meta",
    "mistralai": "mistral",
    "mistral": "mistral",
    "qwen": "alibaba",
    "alibaba": "alibaba",
    "deepseek-ai": "deepseek",
    "deepseek": "deepseek",
    "microsoft": "microsoft",
    "x-ai": "xai",
    "xai": "xai",
    "cohere": "cohere",
    "cohereforai": "cohere",
    "coherelabs": "cohere",
    "amazon": "amazon",
    "nvidia": "nvidia",
    "ibm-granite": "ibm",
    "ibm": "ibm",
    "ai21labs": "ai21",
    "ai21": "ai21",
    "01-ai": "01-ai",
    "moonshotai": "moonshot",
    "thudm": "zhipu",
    "zai-org": "zhipu",
    "z-ai": "zhipu",
    "minimaxai": "minimax",
    "tiiuae": "tii",
    "allenai": "allenai",
    "huggingfaceh4": "huggingface",
    "huggingfacetb": "huggingface",
    "upstage": "upstage",
}

# Ordered (first match wins) patterns on the normalised model name.
FAMILY_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        r"^(gpt-|gpt\d|o\d(-|$)|chatgpt|text-(davinci|embedding)|davinci|babbage|codex|omni-moderation)",
        "openai",
    ),
    (r"^claude", "anthropic"),
    (r"^(gemini|gemma|palm|bison|medgemma|codegemma|learnlm)", "google"),
    (r"^(llama|meta-llama|codellama|llava)", "meta"),
    (
        r"^(mistral|mixtral|codestral|ministral|magistral|pixtral|devstral|open-mistral|open-mixtral|voxtral)",
        "mistral",
    ),
    (r"^(qwen|qwq|qvq)", "alibaba"),
    (r"^deepseek", "deepseek"),
    (r"^(phi-?\d|phi$|orca)", "microsoft"),
    (r"^grok", "xai"),
    (r"^(command|c4ai|aya)", "cohere"),
    (r"^(nova|titan|amazon)", "amazon"),
    (r"^(nemotron|llama-\d.*nemotron|nvidia)", "nvidia"),
    (r"^granite", "ibm"),
    (r"^(jamba|j2-)", "ai21"),
    (r"^yi-", "01-ai"),
    (r"^(kimi|moonshot)", "moonshot"),
    (r"^(glm|chatglm|codegeex)", "zhipu"),
    (r"^(minimax|abab)", "minimax"),
    (r"^falcon", "tii"),
    (r"^(olmo|tulu)", "allenai"),
    (r"^(zephyr|smollm)", "huggingface"),
    (r"^solar", "upstage"),
)
_COMPILED = tuple((re.compile(p), f) for p, f in FAMILY_PATTERNS)

# Bedrock-style ids: optional region prefix, then "vendor." ("us.anthropic.claude-…").
_BEDROCK_VENDOR = re.compile(
    r"^(?:[a-z]{2}\.)?(anthropic|meta|mistral|amazon|cohere|ai21|deepseek|qwen|openai)\."
)


def normalise_model_id(model: str) -> tuple[str | None, str]:
    """(organisation prefix or None, bare lower-case model name)."""
    text = model.strip().lower()
    if text.startswith("ft:"):  # OpenAI fine-tune: ft:gpt-4o-mini-2024-07-18:org::id
        text = text[3:]
    for prefix in ("models/", "accounts/fireworks/models/"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    org = None
    if "/" in text:
        parts = [p for p in text.split("/") if p]
        org, text = (parts[-2] if len(parts) > 1 else None), parts[-1]
    match = _BEDROCK_VENDOR.match(text)
    if match:
        org = org or match.group(1)
        text = text[match.end() :]
    return org, text


def canonical_family(name: str) -> str:
    """The canonical spelling of a family given in an override ("Qwen" → "alibaba")."""
    key = name.strip().lower()
    return FAMILY_ALIASES.get(key, key)


def family_of(model: str) -> str | None:
    """The family of a model id, or None when rag-ci cannot tell (ask for an override)."""
    org, name = normalise_model_id(model)
    for pattern, family in _COMPILED:
        if pattern.search(name):
            return family
    if org is not None and org in ORG_FAMILIES:
        return ORG_FAMILIES[org]
    return None


def check_families(
    judge_model: str, judge_family: str, generator_model: str, generator_family: str | None
) -> None:
    """Raise RagCiError when the generator's family is unknown or shared with the judge.

    An override (`target.generator_family`, `judge.family`) names the family of a model rag-ci
    does not know; it never hides the family of one it does. A pull request's rag-ci.yml is the
    PR's to edit, so `generator_family: mistral` beside answers of `gpt-4o` (usage.model) must
    not let an OpenAI judge grade them: the known and the declared family are both checked."""
    known = family_of(generator_model)
    generator_families = {f for f in (known, generator_family) if f is not None}
    if not generator_families:
        raise RagCiError(
            f"rag-ci does not know which family the generator model '{generator_model}' belongs to, so it cannot "
            f"check it against the judge '{judge_model}' ({judge_family}); set `target.generator_family` in "
            f"rag-ci.yml (e.g. meta, alibaba, mistral, openai)"
        )
    shared = sorted(generator_families & {f for f in (judge_family, family_of(judge_model)) if f is not None})
    if not shared:
        return
    if known is not None and generator_family not in (None, known):
        raise RagCiError(
            f"the generator '{generator_model}' is of the {known} family, like the judge '{judge_model}': "
            f"`target.generator_family: {generator_family}` names the family of a model rag-ci does not know, it does "
            f"not change a known one. A judge grades its own family's answers more kindly: choose a judge from "
            f"another family (judge.provider / judge.model)"
        )
    raise RagCiError(
        f"the judge '{judge_model}' and the generator '{generator_model}' are both of the {shared[0]} family: "
        f"a judge grades its own family's answers more kindly. Choose a judge from another family "
        f"(judge.provider / judge.model), or correct `judge.family` / `target.generator_family` if rag-ci "
        f"guessed a family wrong"
    )
