"""The GitHub Action, one face of rag-ci: its entry (entry.main), the table of modes, the baseline
lookup, the fork-safe comment mode, the step's outputs and the settings read from the environment."""
