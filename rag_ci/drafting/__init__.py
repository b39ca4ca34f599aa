"""Drafting questions from the corpora: the writer and the drafting step."""
