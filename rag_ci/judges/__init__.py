"""The DeepEval tier: a pinned judge of another family, six RAG metrics, noise control.

`rag_ci.judges.build.build_judge(config, baseline=..., full=...)` returns the engine's
`JudgeScorer`. Importing this package is cheap: it imports nothing, and DeepEval and
the provider SDK are imported by `build_judge`.
"""
