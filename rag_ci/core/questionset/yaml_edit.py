"""Editing questions.yml in place: its comments, order and layout stay as they were.

`questions import`, `questions generate` and `questions apply` change a human-reviewed
file; ruamel's round-trip loader and dumper keep everything they do not touch, with the
file's own indentation guessed. A file without questions yet (`questions:` empty, or a
new file) gets a block list.

Pure: text in, an editable tree out, text back.
"""

from __future__ import annotations

import io
import unicodedata
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.util import load_yaml_guess_indent

from rag_ci.core.base.yamlsrc import load_yaml
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
    if not isinstance(root, dict) or not (
        isinstance(root.get("questions"), list) or root.get("questions", 0) is None
    ):
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


def _question_nodes(text: str) -> tuple[list[Any], bool]:
    """The composed nodes of the `questions` items (ruamel's, with their start and end marks),
    and whether the list is a block list (one item per `-`): only then are items whole lines."""
    root = YAML(typ="rt").compose(text)
    for key, value in getattr(root, "value", None) or ():
        if getattr(key, "value", None) == "questions" and isinstance(getattr(value, "value", None), list):
            return list(value.value), not value.flow_style
    return [], False


def _node_id(node: Any) -> str | None:
    for key, value in node.value if isinstance(getattr(node, "value", None), list) else ():
        if getattr(key, "value", None) == "id" and isinstance(getattr(value, "value", None), str):
            return unicodedata.normalize("NFC", value.value)
    return None


def _item_lines(lines: list[str], node: Any) -> range:
    """The lines of one item: from its dash to the end of its last value (its inline comment
    included). Comments and blank lines after it are not its own: they sit above what follows."""
    start = node.start_mark.line
    if "-" not in lines[start][: node.start_mark.column]:  # `-` alone on the line above the first key
        while start > 0 and not lines[start].lstrip().startswith("-"):
            start -= 1
    last = node.value[-1][1] if node.value else node
    end = last.end_mark.line - (1 if last.end_mark.column == 0 else 0)
    while end > start and not lines[end].strip():  # a block scalar's mark runs past its blank lines
        end -= 1
    return range(start, end + 1)


def _status_line(lines: list[str], node: Any) -> int | None:
    """The line holding only `status: ...` (and maybe a comment) in a block item, else None."""
    if node.flow_style:
        return None
    for key, value in node.value:
        if getattr(key, "value", None) != "status":
            continue
        line = int(key.start_mark.line)
        if value.end_mark.line == line and not lines[line][: key.start_mark.column].strip():
            return line
    return None


def remove_items_and_status(text: str, remove: set[str], undraft: set[str]) -> tuple[str, set[str], set[str]]:
    """`text` without the items whose id is in `remove` and without the `status:` line of those
    in `undraft`, line by line, so every other comment and blank line stays where it was (ruamel
    attaches the comments that follow an item to that item or to its last key, and loses them
    when either is deleted). Ids are compared NFC-normalised. Returns the text and the ids of
    `remove` and of `undraft` that could not be edited as lines (a `[...]` list, a `{...}` item):
    the caller edits those with ruamel."""
    nodes, block = _question_nodes(text)
    if not block:
        return text, set(remove), set(undraft)
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    left = set(undraft)
    for node in nodes:
        qid = _node_id(node)
        if qid in remove:
            drop.update(_item_lines(lines, node))
        elif qid in undraft and (line := _status_line(lines, node)) is not None:
            drop.add(line)
            left.discard(qid)
    return "".join(line for number, line in enumerate(lines) if number not in drop), set(), left
