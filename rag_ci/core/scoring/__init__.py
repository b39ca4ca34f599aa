"""One run's scores: judge-free metrics, verdicts, aggregates and the results artifact."""
