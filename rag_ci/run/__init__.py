"""The run: the engine that asks every question, its noise control and its build steps."""
