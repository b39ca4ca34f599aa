"""Files on disk: atomic writes, results.json, the resume journal, the output lock, the project's files."""
