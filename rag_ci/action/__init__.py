"""The GitHub Action, one face of rag-ci: its entry (entry.main), the table of modes, the evaluating
run and the history it keeps, the baseline lookup, the PR's comment and the fork-safe comment mode,
the step's outputs and the settings read from the environment."""
