"""The ground of the core: the lean model, hashing, the YAML source, text helpers, the API mapping."""
