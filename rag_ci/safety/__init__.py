"""Safety: secrets, redaction of what the RAG says, the log boundary."""
