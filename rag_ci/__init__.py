"""rag-ci: gate pull requests on the quality of a RAG application."""

__version__ = "1.0.0"
