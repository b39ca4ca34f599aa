"""rag-ci's benchmark suite: simulated RAG and judge at the edges, the real engine between them."""
