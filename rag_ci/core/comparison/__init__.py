"""The comparison with the baseline, its noise control and the history across runs."""
