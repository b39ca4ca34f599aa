"""The GitLab edge: the merge-request note (`rag-ci publish gitlab`), over GitLab's REST API v4.

Nothing in rag_ci.core, the targets or the judges imports this package; the CLI wires it in.
"""
