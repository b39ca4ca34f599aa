"""Files on disk: results.json, the resume journal, the output lock."""
