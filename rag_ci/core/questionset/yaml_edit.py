"""Editing questions.yml in place: its comments, order and layout stay as they were.

`questions import`, `questions generate` and `questions apply` change a human-reviewed
file; ruamel's round-trip loader and dumper keep everything they do not touch, with the
file's own indentation guessed. A file without questions yet (`questions:` empty, or a
new file) gets a block list.

Pure: text in, an editable tree out, text back.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.util import load_yaml_guess_indent

from rag_ci.core.questionset.yamlsrc import load_yaml
from rag_ci.errors import ValidationError

NEW_SET = "version: 1\nquestions:\n"


@dataclass
class EditableSet:
    """A questions.yml opened for editing: `items` is its `questions` list (ruamel's)."""

    yaml: YAML
    data: CommentedMap
    items: CommentedSeq
    offset: int  # the dash's indent of a question item: comments above an item use it

    def dump(self) -> str:
        out = io.StringIO()
        self.yaml.dump(self.data, out)
        return out.getvalue()

    def comment_before(self, index: int, text: str) -> None:
        self.items.yaml_set_comment_before_after_key(index, before=text, indent=self.offset)


def open_question_set(text: str, filename: str) -> EditableSet:
    """The set, ready to edit; ValidationError (file:line) when it is not a questions.yml."""
    root = load_yaml(text, filename)  # the guarded loader: limits and file:line errors
    if not isinstance(root, dict) or not (isinstance(root.get("questions"), list) or root.get("questions", 0) is None):
        raise ValidationError([f"{filename}:1: expected a mapping with a `questions` list"])
    _, indent, block_seq_indent = load_yaml_guess_indent(text)
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap the user's long lines
    # The guess: `indent` = a block sequence item's content offset, `block_seq_indent` = the
    # dash's; a nested mapping is indented like an item's content beyond its dash.
    offset = block_seq_indent or 0
    sequence = indent or 2
    if not root.get("questions"):  # nothing to guess from: the README's layout
        offset, sequence = 2, 4
    yaml.indent(mapping=max(2, sequence - offset), sequence=sequence, offset=offset)
    data = yaml.load(text)
    items = data.get("questions")
    if not isinstance(items, CommentedSeq) or not items:
        fresh = CommentedSeq(items or [])
        data["questions"] = fresh  # `questions:` or `questions: []`: a block list from here on
        items = fresh
    return EditableSet(yaml, data, items, offset)


def flow_list(values: Any) -> CommentedSeq:
    """A short list written on one line: `[a, b]`."""
    seq = CommentedSeq(list(values))
    seq.fa.set_flow_style()
    return seq


def flow_map(values: dict[str, Any]) -> CommentedMap:
    """A small mapping written on one line: `{writer: ..., date: ...}`."""
    mapping = CommentedMap(values)
    mapping.fa.set_flow_style()
    return mapping
