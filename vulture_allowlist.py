"""Names vulture cannot see used, each group with the reason (tests/integration/test_house_checks.py).

vulture reads this file as code that uses the names below. Add a name here only when something
outside Python's call graph uses it; a function only a test calls is dead code: remove it.
"""

# ruff: noqa: B018
# mypy: ignore-errors
from vulture.whitelist_utils import Whitelist

_ = Whitelist()

# Jinja templates (rag_ci/templates/*.j2) read these fields of the views and records they are given
# (the functions they call are marked where defined: pyproject.toml's ignore_decorators).
_.head_url, _.base_dirty, _.head_dirty, _.old_answer, _.old_sources, _.new_sources, _.new_source_kinds
_.stratum

# Fields of the pydantic models and dataclasses written to results.json, questions.yml and the
# drafts file (read back by model_validate / by the user), not by attribute access.
_.from_history, _.latency_p50, _.latency_p95, _.cost_per_question_usd, _.used_sources, _.evolutions
(
    _.reviewed_by,
    _.prompt_hash,
    _.baseline_cache_key,
    _.config_fingerprint,
    _.target_kind,
    _.image_s,
    _.image_reused,
)
(
    _.false_regression,
    _.power,
    _.calls_per_metric,
)  # judge_vote_odds.RuleRow, read by asdict (benchmarks/judge_noise.py)
_.PASS  # Verdict.PASS: a verdict compared by value ("pass"), written to results.json

# Hooks their library calls: html.parser.HTMLParser, pydantic, click, ruamel, JMESPath (functions
# named `_func_<name>` are the expression's `<name>(...)`).
_.handle_starttag, _.handle_endtag, _.handle_data, _.model_post_init, _.format_message, _.list_commands
_.format_commands  # click.Group.format_commands, overridden by rag_ci.cli.lazy.LazyGroup
_.preserve_quotes
_._func_strip_prefix, _._func_strip_suffix, _._func_replace, _._func_split

# DeepEval's model interface (DeepEvalBaseLLM), implemented by the judge's and writer's adapters.
_.load_model, _.a_generate, _.get_model_name

# Provider classes loaded from "module:Class" strings (rag_ci.judges.providers: the registry).
_.OpenAIChat, _.AnthropicMessages, _.GeminiGenerate, _.OllamaChat, _.FakeChat
_.AzureOpenAIChat, _.BedrockConverse, _.VertexModel
_.serves  # a provider's endpoints, written into docs/judges.md's table by scripts/docs_gen.py
_.response_mime_type, _.response_json_schema  # fields of Gemini's request config, sent as JSON

# The fake judge and writer answer a prompt by the method its template names (getattr dispatch).
_._truths, _._claims, _._geval_steps, _._equivalence, _._reason, _._faithfulness_verdicts
_._relevancy_verdicts, _._precision_verdicts, _._recall_verdicts, _._geval_strict
_._inputs, _._filter, _._rewrite, _._evolve, _._style, _._expected

# The judge scorer's counters: what it did, observed by the tests and the benchmarks.
_.cache_hits, _.replayed_calls, _.equivalence_calls, _.equivalent_carries, _.confirmations

# The trace receiver's HTTP handler and server (rag_ci.targets.traces.receiver): the standard
# library's http.server calls do_POST and log_message by name and reads these attributes.
_.do_POST, _.log_message, _.protocol_version, _.close_connection, _.daemon_threads
# Fields of the OTLP protobuf messages the verdict spans are written in (rag_ci.run.verdict_spans).
_.time_unix_nano, _.bool_value, _.int_value, _.double_value

# urllib's redirect hook, overridden so the GitLab token never follows a redirect (rag_ci.gitlab.client).
_.redirect_request
