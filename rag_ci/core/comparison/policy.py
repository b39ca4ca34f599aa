"""The gate policy (docs/gate.md): what decides pass or fail, and whose version applies.

The policy is the `gate:` block, every metric in force with its parameters (threshold,
k, criteria) and the judge. A run records the policy it was gated under in
`RunMeta.policy`. A pull request is evaluated under its **baseline's** policy: the PR's
own rag-ci.yml is only compared with it, and the differences are previewed ("This PR
changes the gate: …"); they take effect once merged and re-baselined. So a PR cannot
disarm its own gate by lowering a threshold, setting `gate.fail_on: never` or swapping
the judge.

Without a baseline that recorded its policy (the first PR, an expired artifact), the
judge is still not the PR's to choose: its endpoint (`base_url`, `provider`) and the
variable its key is read from (`api_key_env`) decide where the judge key is sent. So the
judge comes from the base branch's own rag-ci.yml (`pin_judge_to_base`), or, when that
cannot be read, the judge does not run and its key is used nowhere.

Pure: config and results in, config and words out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel
from pydantic import ValidationError as PydanticError

from rag_ci.core.base.yamlsrc import load_yaml, to_plain
from rag_ci.core.config import JUDGE_METRICS, Config, GateConfig, JudgeConfig, MetricConfig
from rag_ci.core.config.providers import PROVIDERS
from rag_ci.core.results import GatePolicy, RunMeta
from rag_ci.errors import RagCiError

# Said beside a moved accepted file: it applies at once, unlike the rest of the preview.
ACCEPTED_NOTE = " (the file that accepts regressions: this PR's applies to this run, check its entries)"


def redact_url(url: str | None) -> str | None:
    """A URL without user:password and query string, the places a key can hide."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def policy_of(config: Config) -> GatePolicy:
    """The policy `config` gates with, as recorded in results.json."""
    judge = config.judge.model_dump(mode="json")
    judge["base_url"] = redact_url(config.judge.base_url)
    return GatePolicy(
        # gate.accepted is recorded so that a PR moving it (to a file that waives regressions) is
        # previewed as a gate change; it is never pinned: the accepted file is the PR's own, on
        # purpose (rag_ci.core.review.accepted).
        gate=config.gate.model_dump(mode="json"),
        metrics={name: cfg.model_dump(mode="json") for name, cfg in sorted(config.metric_configs().items())},
        judge=judge,
    )


@dataclass(frozen=True)
class PinnedPolicy:
    """A config put under its baseline's policy, and what the PR's own config would change."""

    config: Config
    changes: tuple[str, ...]  # "hit_at_k.k 5 → 3", baseline value first
    pinned: bool  # False: the baseline recorded no policy, only its metric thresholds are kept

    @property
    def notice(self) -> str | None:
        if self.pinned:
            return None
        return (
            "The baseline was written by a rag-ci that did not record its gate policy, so only its metric "
            "thresholds could be pinned: this run is gated with them and the default `gate:`; metric parameters "
            "(k, criteria) and the judge come from this run's own config. Re-baseline to pin the whole policy."
        )


def pin_to_baseline(config: Config, baseline: RunMeta) -> PinnedPolicy:
    """`config` with the gate, metrics and judge of the baseline's policy."""
    own = policy_of(config)
    recorded = baseline.policy
    pinned = recorded is not None
    if recorded is None:
        recorded = _thresholds_only_policy(own, baseline.metric_thresholds)
    return PinnedPolicy(
        config=apply_policy(config, recorded), changes=tuple(policy_changes(recorded, own)), pinned=pinned
    )


def apply_policy(config: Config, policy: GatePolicy) -> Config:
    """`config` with `policy`'s gate, metrics and judge (its target, corpora and questions stay)."""
    judge = dict(policy.judge) if policy.judge else JudgeConfig().model_dump(mode="json")
    if judge.get("base_url") and judge["base_url"] == redact_url(config.judge.base_url):
        judge["base_url"] = config.judge.base_url  # the same endpoint; only this copy has its credentials
    data = config.model_dump(mode="json", exclude_unset=True)
    data["gate"] = {**_known(GateConfig, policy.gate), "accepted": config.gate.accepted}
    data["judge"] = _known(JudgeConfig, judge)
    data["metrics"] = {name: _known(MetricConfig, cfg) for name, cfg in policy.metrics.items()}
    try:
        return Config.model_validate(data)
    except PydanticError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise RagCiError(
            f"the baseline's recorded gate policy is not usable by this rag-ci ({where}: {first['msg']}); re-baseline"
        ) from None


@dataclass(frozen=True)
class PinnedJudge:
    """A config with the base branch's judge, or with none, and why."""

    config: Config
    changes: tuple[str, ...]  # what the PR's own judge would change ("judge.base_url … → …")
    notice: str | None = None  # the judge did not run, and why


KEYLESS_JUDGES = ("none", "fake")  # no endpoint, no key: nothing for a pull request to redirect


def pin_judge_to_base(
    config: Config, base_text: str | None, where: str, problem: str | None = None
) -> PinnedJudge:
    """`config` judged by the judge of the base branch's rag-ci.yml (`base_text`, read from
    `where`; None: there is none; `problem`: it could not be read)."""
    base, why = _base_judge(base_text, where, problem)
    if base is None:
        if config.judge.provider in KEYLESS_JUDGES:
            return PinnedJudge(config, ())
        return PinnedJudge(
            config.model_copy(update={"judge": JudgeConfig()}),
            (),
            (
                f"The judge did not run and no judge key was used: {why}. Without a baseline the judge's endpoint "
                "and key variable must come from the base branch, never from this pull request's rag-ci.yml (it would "
                "choose where the key is sent). Only the judge-free metrics ran; the judge runs once the base branch "
                "has this rag-ci.yml."
            ),
        )
    own = config.judge.model_dump(mode="json")
    theirs = base.model_dump(mode="json")
    own["base_url"], theirs["base_url"] = redact_url(own["base_url"]), redact_url(theirs["base_url"])
    changes = tuple(f"judge.{k} {_show(a)} → {_show(b)}" for k, a, b in _differences(theirs, own))
    return PinnedJudge(config.model_copy(update={"judge": base}), changes)


def _base_judge(text: str | None, where: str, problem: str | None) -> tuple[JudgeConfig | None, str]:
    if problem is not None:
        return None, f"{where} could not be read ({problem})"
    if text is None:
        return None, f"the base branch has no {where}"
    try:
        data = to_plain(load_yaml(text, where))
        judge = data.get("judge") if isinstance(data, dict) else None
        return JudgeConfig.model_validate(_known(JudgeConfig, judge) if isinstance(judge, dict) else {}), ""
    except RagCiError as exc:
        return None, f"{where} is not a usable config ({str(exc).splitlines()[0][:200]})"
    except PydanticError as exc:
        first = exc.errors()[0]
        return None, f"{where} has no usable `judge:` ({'.'.join(map(str, first['loc']))}: {first['msg']})"


def recorded_gate(meta: RunMeta) -> GateConfig:
    """The `gate:` a run recorded (the default one when it recorded none)."""
    return GateConfig.model_validate(_known(GateConfig, meta.policy.gate)) if meta.policy else GateConfig()


def policy_changes(baseline: GatePolicy, own: GatePolicy) -> list[str]:
    """What `own` changes compared with `baseline`, one short line each, baseline value first.

    Both sides are read through this rag-ci's models first, so a setting that a newer
    rag-ci added (absent from an older baseline's record) counts as its default, not as
    a change the pull request made.
    """
    baseline, own = _with_defaults(baseline), _with_defaults(own)
    lines = [
        f"gate.{k} {_show(a)} → {_show(b)}" + (ACCEPTED_NOTE if k == "accepted" else "")
        for k, a, b in _differences(baseline.gate, own.gate)
    ]
    judged_before, judged_after = _judged(baseline), _judged(own)
    switched: list[str] = []  # judge metrics that come and go with the judge itself
    for name in sorted(set(baseline.metrics) | set(own.metrics)):
        before, after = baseline.metrics.get(name), own.metrics.get(name)
        if (before is None or after is None) and name in JUDGE_METRICS and judged_before != judged_after:
            switched.append(name)
        elif before is None:
            lines.append(f"{name} added")
        elif after is None:
            lines.append(f"{name} removed")
        else:
            lines.extend(f"{name}.{k} {_show(a)} → {_show(b)}" for k, a, b in _differences(before, after))
    if switched:
        lines.append(
            (
                "judge metrics switched on by the new judge: "
                if judged_after
                else "judge metrics switched off with the judge: "
            )
            + ", ".join(switched)
        )
    judge_changes = _differences(baseline.judge, own.judge)
    if (
        judged_after and not judged_before
    ):  # a new judge: what it is and where its key goes, not every default knob
        defaults = _with_defaults(GatePolicy(judge={"provider": "none"})).judge
        judge_changes = [
            (k, a, b) for k, a, b in judge_changes if k in ("provider", "model") or b != defaults.get(k)
        ]
    lines.extend(
        f"judge.{k} {_show(a)} → {_show(b)}"
        + (_key_note(b, own.judge.get("api_key_env")) if k == "provider" else "")
        for k, a, b in judge_changes
    )
    return lines


def _judged(policy: GatePolicy) -> bool:
    return (policy.judge or {}).get("provider") not in (None, "none")


def _key_note(provider: Any, api_key_env: Any) -> str:
    """What main's workflow must pass for the new judge: a judge without its key errors every question."""
    if api_key_env:
        return f" (main's runs need its key in {api_key_env})"
    # The variable each hosted judge reads its key from, and the action's input that sets it.
    facts = PROVIDERS.get(provider) if isinstance(provider, str) else None
    if facts is None or facts.api_key_env is None or facts.action_input is None:
        return ""
    return f" (main's runs need its key in {facts.api_key_env}: the action's {facts.action_input} input)"


def _thresholds_only_policy(own: GatePolicy, thresholds: dict[str, float | None]) -> GatePolicy:
    """For a baseline without a recorded policy: its metric set and thresholds, with this
    config's other metric parameters and judge, and the default gate (never the PR's)."""
    metrics = {}
    for name, threshold in sorted(thresholds.items()):
        metrics[name] = {**own.metrics.get(name, {}), "threshold": threshold}
    return GatePolicy(gate=GateConfig().model_dump(mode="json"), metrics=metrics, judge=own.judge)


def _with_defaults(policy: GatePolicy) -> GatePolicy:
    def filled(model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
        try:
            return {**values, **model.model_validate(_known(model, values)).model_dump(mode="json")}
        except PydanticError:  # shown as recorded; apply_policy says why it cannot be used
            return values

    return GatePolicy(
        gate=filled(GateConfig, policy.gate),
        metrics={name: filled(MetricConfig, cfg) for name, cfg in policy.metrics.items()},
        judge=filled(JudgeConfig, policy.judge) if policy.judge else policy.judge,
    )


def _known(model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
    """The fields this version of the model knows (a newer rag-ci may have recorded more)."""
    return {k: v for k, v in values.items() if k in model.model_fields}


def _differences(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [
        (k, before.get(k), after.get(k))
        for k in sorted(set(before) | set(after))
        if before.get(k) != after.get(k)
    ]


def _show(value: Any, limit: int = 60) -> str:
    if value is None:
        return "none"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"
