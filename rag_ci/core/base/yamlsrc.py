"""YAML parsing that remembers where things are, so errors can name file and line.

Hostile or broken YAML must give a clear error, quickly: the loaders refuse nesting
deeper than MAX_DEPTH, aliases that refer to themselves, and aliases that expand to
more nodes than the document itself holds (plus MAX_ALIAS_NODES): an "alias bomb"
of a few hundred bytes otherwise expands to billions of nodes when validated.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import Composer, ComposerError
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from ruamel.yaml.nodes import CollectionNode, MappingNode, ScalarNode, SequenceNode
from ruamel.yaml.parser import Parser
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scanner import RoundTripScanner, Scanner, ScannerError

from rag_ci.errors import ValidationError

# No rag-ci file nests more than a handful of levels; 100 stays far below Python's
# recursion limit in ruamel's recursive composer (about 3 frames per level).
MAX_DEPTH = 100
# Nodes that aliases may add beyond the document's own node count.
MAX_ALIAS_NODES = 100_000


class _GuardedComposer(Composer):
    """ruamel's composer with limits on depth, recursive aliases and alias expansion.

    `_expanded` counts the nodes of the document as if every alias were copied out;
    a node's expanded size is how much `_expanded` grew while it was composed.
    """

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self._level = 0
        self._own_nodes = 0
        self._expanded = 0
        self._sizes: dict[int, int] = {}  # id(anchored node) -> expanded size

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            target = self.anchors.get(event.anchor)
            if isinstance(target, CollectionNode) and target.end_mark is None:
                raise ComposerError(
                    None,
                    None,
                    f"recursive alias *{event.anchor} (it refers to a node that contains it)",
                    event.start_mark,
                )
            self._expanded += self._sizes.get(id(target), 1)
            if self._expanded - self._own_nodes > self._own_nodes + MAX_ALIAS_NODES:
                raise ComposerError(
                    None,
                    None,
                    f"aliases expand to more than {self._own_nodes + MAX_ALIAS_NODES:,} nodes (*{event.anchor}); "
                    "refusing an alias bomb",
                    event.start_mark,
                )
            return super().compose_node(parent, index)
        if self._level >= MAX_DEPTH:
            raise ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        self._level += 1
        self._own_nodes += 1
        self._expanded += 1
        before = self._expanded - 1
        node = super().compose_node(parent, index)
        self._level -= 1
        if getattr(node, "anchor", None) is not None:
            self._sizes[id(node)] = self._expanded - before
        return node


def _guarded_scanner(base: type) -> type:
    """`base` refusing deep flow nesting (`[[[[...`) before it goes quadratic.

    ruamel's scanner rescans every open flow level per token: 5,000 levels take seconds.
    """

    class GuardedScanner(base):  # type: ignore[misc]
        def fetch_flow_collection_start(self, *args: Any, **kwargs: Any) -> None:
            if self.flow_level >= MAX_DEPTH:
                raise ScannerError(
                    None, None, f"nested deeper than {MAX_DEPTH} levels", self.reader.get_mark()
                )
            super().fetch_flow_collection_start(*args, **kwargs)

    return GuardedScanner


_GUARDED_SCANNERS = {"rt": _guarded_scanner(RoundTripScanner), "safe": _guarded_scanner(Scanner)}


class _OneVersionResolver(VersionedResolver):
    """ruamel's resolver, asking which YAML version applies once per load instead of per scalar.

    Behind the C parser the question always ends at the same answer (the C parser keeps no
    `%YAML` directive where ruamel's resolver looks: the loader's version, else 1.2), by way of
    two caught AttributeErrors: a third of the time of loading 50,000 questions."""

    _rag_ci_version: Any  # set on first use: reading it before raises AttributeError
    _rag_ci_table: Any

    @property
    def processing_version(self) -> Any:
        try:
            return self._rag_ci_version
        except AttributeError:
            self._rag_ci_version = VersionedResolver.processing_version.fget(self)  # type: ignore[attr-defined]
            return self._rag_ci_version

    @property
    def versioned_resolver(self) -> Any:  # the table of that one version, looked up once too
        try:
            return self._rag_ci_table
        except AttributeError:
            self._rag_ci_table = VersionedResolver.versioned_resolver.fget(self)  # type: ignore[attr-defined]
            return self._rag_ci_table


_STR, _SEQ, _MAP = (f"tag:yaml.org,2002:{name}" for name in ("str", "seq", "map"))


class _Fallback(Exception):
    """A node the plain builder leaves to ruamel's constructor (merge keys, duplicate keys...)."""


class _NotATree(Exception):
    """An alias or nesting past MAX_DEPTH, found while building: what `shape_problem` refuses."""


class _PlainConstructor(SafeConstructor):
    """ruamel's safe constructor with a fast path for what question sets are made of.

    Mappings, sequences and strings are built directly from the composed nodes; every other
    scalar (ints, floats, booleans, null, timestamps) and explicit tag goes through ruamel's
    own constructor, so the values are the same. A document with a merge key (`<<`), a
    duplicate or unhashable key is built by ruamel's constructor alone (which refuses or
    merges it as it always did). About twice as fast as ruamel's generic path."""

    def construct_document(self, node: Any) -> Any:
        """A plain tree (no alias, no deeper than MAX_DEPTH), or _NotATree: checked while it is
        built, or after ruamel's constructor built it."""
        try:
            return self._plain(node, set(), 0)
        except _Fallback:
            data = super().construct_document(node)
        if shape_problem(data) is not None:
            raise _NotATree
        return data

    def _plain(self, node: Any, made: set[int], depth: int) -> Any:
        tag = node.ctag
        name = tag.suffix if tag.handle is None else str(tag)
        if name == _STR and isinstance(node, ScalarNode):
            return node.value
        if isinstance(node, (SequenceNode, MappingNode)):
            if id(node) in made or depth >= MAX_DEPTH:
                raise _NotATree  # an alias of a list or mapping, or too deep: `shape_problem` refuses both
            made.add(id(node))
        if name == _SEQ and isinstance(node, SequenceNode):
            return [self._plain(child, made, depth + 1) for child in node.value]
        if name == _MAP and isinstance(node, MappingNode):
            mapping = {}
            for key_node, value_node in node.value:
                if str(key_node.ctag).endswith(":merge"):
                    raise _Fallback
                key = self._plain(key_node, made, depth + 1)
                if not isinstance(key, (str, int, float, bool)) or key in mapping:
                    raise _Fallback
                mapping[key] = self._plain(value_node, made, depth + 1)
            return mapping
        if isinstance(node, ScalarNode):
            return self.construct_object(node, deep=True)
        raise _Fallback


def _loader(typ: str) -> YAML:
    yaml = YAML(typ=typ)
    # The C parser of ruamel.yaml.clib, when installed, scans and composes by itself:
    # its output is checked by `shape_problem` instead.
    if yaml.Parser is None or issubclass(yaml.Parser, Parser):
        yaml.Scanner = _GUARDED_SCANNERS[typ]
        yaml.Composer = _GuardedComposer
    else:
        if yaml.Resolver is VersionedResolver:
            yaml.Resolver = _OneVersionResolver
        if yaml.Constructor is SafeConstructor:
            yaml.Constructor = _PlainConstructor
    return yaml


# What YAML 1.2 allows in a stream (§5.1): tab, LF, CR, printable ASCII, NEL and the printable
# rest of Unicode. Checked here, before any loader: the pure-Python and C loaders report these
# differently (or, as ruamel's reader, with an exception that is not a MarkedYAMLError).
_NOT_YAML = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def unprintable_character(text: str, filename: str) -> str | None:
    """`file:line:column: ...` for the first character no YAML file may hold (NUL, other control
    characters), or None. The text itself is not quoted: it may be anything (/proc/self/environ)."""
    found = _NOT_YAML.search(text)
    if found is None:
        return None
    line = text.count("\n", 0, found.start()) + 1
    column = found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1
    return (
        f"{filename}:{line}:{column}: control character U+{ord(found.group()):04X} is not allowed in YAML "
        "(is this a text file?)"
    )


def load_yaml(text: str, filename: str) -> Any:
    """Parse YAML text; syntax errors and refused shapes become a ValidationError naming file and line."""
    problem = unprintable_character(text, filename)
    if problem is not None:
        raise ValidationError([problem])
    try:
        return _loader("rt").load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else "?"
        problem = exc.problem or exc.context or "invalid YAML"
        hint = yaml_hint(text, mark.line if mark is not None else None, problem)
        raise ValidationError(
            [f"{filename}:{line}: invalid YAML: {problem}" + (f" ({hint})" if hint else "")]
        ) from None
    except RecursionError:  # a safety net: the composer's depth limit should come first
        raise ValidationError([f"{filename}: invalid YAML: nested too deeply"]) from None
    except YAMLError as exc:  # any other refusal of the loader (its reader's, for one)
        raise ValidationError([f"{filename}: invalid YAML: {str(exc).splitlines()[0][:200]}"]) from None


# The loader's words, and what usually causes them, in the user's terms.
_HINTS = (
    ("mapping values are not allowed", 'a value holding `: ` must be quoted: key: "a: b"'),
    ("cannot start any token", "a value starting with @, ` or % must be quoted"),
    ("found unexpected end of stream", "a quote is not closed"),
    ("could not find expected ':'", "a key needs `: ` after it; a long value goes on one line, or quoted"),
    ("did not find expected key", "indentation: keys of one mapping start in the same column"),
    ("did not find expected '-' indicator", "indentation: items of one list start in the same column"),
    ("expected <block end>", "indentation: this line starts in a column no mapping or list above it uses"),
    ("found undefined alias", "`*` starts an alias: quote a value that starts with it"),
)


def yaml_hint(text: str, line: int | None, problem: str) -> str | None:
    """What to change, for the loader's message `problem` at 0-based `line`: a tab in the line's
    indentation first (YAML indents with spaces only), else the usual cause of that message."""
    lines = text.splitlines()
    if line is not None and any(
        "\t" in row[: len(row) - len(row.lstrip())] for row in lines[max(0, line - 1) : line + 1]
    ):
        return "a tab indents this line: YAML indents with spaces only"
    return next((hint for words, hint in _HINTS if words in problem), None)


def load_yaml_fast(text: str) -> Any:
    """Plain data from YAML text without position marks, or None when it does not parse.

    ruamel's safe loader is faster than the round-trip loader `load_yaml` uses for line
    numbers: about 1.4x in pure Python, 4-5x with the C parser of `ruamel.yaml.clib`
    when installed (a 5,000-question set: 8-10 s -> 6-7 s, or 2-3 s). Same YAML 1.2
    resolver, so the same values. Callers validate this first and re-parse with
    `load_yaml` only when there is a problem to report with its line. Data that reuses
    a list or mapping (an alias) or nests too deeply also takes that slow path: the C
    parser does not apply the limits of `_GuardedComposer`.
    """
    yaml = _loader("safe")
    try:
        if yaml.Constructor is _PlainConstructor and _nested_deeper(yaml, text, MAX_DEPTH):
            return None
        with no_cyclic_gc():
            data = yaml.load(text)
    except Exception:
        return None
    # Behind the C parser _PlainConstructor has checked the tree; the pure-Python path has not.
    return data if yaml.Constructor is _PlainConstructor or shape_problem(data) is None else None


def _nested_deeper(yaml: YAML, text: str, limit: int) -> bool:
    """Whether the text nests deeper than `limit`, from the C parser's events, in one pass
    that stops at the first level too deep. The C parser itself is iterative; the composer
    behind it recurses in C, per level, with no limit: 30,000 levels (60 kB of `[`)
    overflow the C stack and end the process (a segfault, no message). So the depth is
    known before anything is composed; the events cost about a third of a load."""
    depth = 0
    step = {SequenceStartEvent: 1, MappingStartEvent: 1, SequenceEndEvent: -1, MappingEndEvent: -1}
    for event in yaml.parse(text):
        depth += step.get(type(event), 0)
        if depth > limit:
            return True
    return False


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Python's cycle collector off while a large file becomes objects.

    Loading builds hundreds of thousands of objects that all stay alive; each collection
    the allocations trigger walks every one of them again, so loading time grows with the
    square of the size (questions.yml: 5,000 questions 1.2 s, 20,000 7.2 s). Nothing made
    here is garbage: the collector is switched back on (when it was on) afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def shape_problem(data: Any, max_depth: int = MAX_DEPTH) -> str | None:
    """Why loaded data (YAML or JSON) is not a plain tree of sane depth, or None.

    Iterative, so that deep data cannot raise RecursionError here; a list or mapping
    met twice (shared or cyclic, only possible through YAML aliases) stops the walk.
    """
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth >= max_depth:
            return f"nested deeper than {max_depth} levels"
        if id(node) in seen:
            return "a list or mapping appears more than once (YAML alias)"
        seen.add(id(node))
        stack.extend((child, depth + 1) for child in children)
    return None


def line_of(node: Any, key: Any = None) -> int | None:
    """1-based line of `node` (or of `node[key]`) when ruamel recorded it."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return None
    try:
        if key is None:
            return int(lc.line) + 1
        if isinstance(node, CommentedMap):
            return int(lc.key(key)[0]) + 1
        if isinstance(node, CommentedSeq):
            return int(lc.item(key)[0]) + 1
    except (KeyError, IndexError, TypeError):
        return int(lc.line) + 1
    return None


def to_plain(node: Any) -> Any:
    """ruamel's commented containers as plain dicts and lists (for pydantic)."""
    if isinstance(node, dict):
        return {str(k): to_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [to_plain(v) for v in node]
    return node


def where(filename: str, node: Any, loc: tuple[Any, ...]) -> str:
    """`file:line` for the deepest node along a pydantic error location."""
    line = line_of(node)
    current = node
    for part in loc:
        try:
            line = line_of(current, part) or line
            current = current[part]
        except (KeyError, IndexError, TypeError):
            break
    return f"{filename}:{line}" if line else filename
