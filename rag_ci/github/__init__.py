"""The GitHub edge: REST calls (through PyGithub) and the runner's workflow-command files.

Nothing in rag_ci.core imports this package; the action (rag_ci.action.entry) wires it in.
"""
