"""Syntax trees kept between processes: a tree as plain data (`encode`) and back (`decode`), and the trees of
programs parsed in an earlier process (`remember`), which `parser.parse` hands out instead of parsing the text again.

The catalog's precompiled blob (`workload_map.catalog.precompiled`) stores the tree of every expression of the
built-in definitions, so a run that resolves a catalog workload never tokenizes or parses them (their lexing and
parsing was ~7 ms of a `describe -f`; issue 19). A stored tree is what this parser produced for the text when the
blob was built, and the blob's key covers this parser's modules (`tree_stamp`), so a changed parser or node class
means a new blob, never an old tree.

The encoding: a node is a list `[class name, field, field, ...]` (fields in declaration order, each encoded the
same way), a tuple is `[0, item, item, ...]`, anything else (str, int, float, bool, None) is itself. Trees are
decoded one at a time, when `parse` is first asked for that text; one that does not decode (a damaged blob) is
dropped and its text parsed as usual.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import msgspec

if TYPE_CHECKING:
    from workload_map.jq.ast import Node

# the node classes by name, made with the first tree decoded: a run that decodes none (a describe of a catalog
# workload runs its stored programs, `jq.stored`) never imports the syntax tree's classes (issue 19: start-up)
_CLASSES: dict[str, type] = {}
_TUPLE: Final = 0
# the modules whose code decides what tree a text parses to (and the node classes' fields)
_PARSER_MODULES: Final = ("ast.py", "fold.py", "grammar.py", "lexer.py", "parser.py", "trees.py")

_encoded: dict[str, bytes] = {}  # text -> encoded tree, not decoded yet
_decoded: dict[str, Node] = {}
_ENCODER: Final = msgspec.msgpack.Encoder()


def encode(tree: Node) -> bytes | None:
    """The tree as msgpack bytes; None when a value cannot be carried (an integer past 64 bits)."""
    try:
        return _ENCODER.encode(_plain(tree))
    except (msgspec.EncodeError, OverflowError):
        return None


def _plain(value: Any) -> Any:
    from workload_map.jq import ast  # only when a blob is built

    if isinstance(value, tuple):
        return [_TUPLE, *(_plain(item) for item in value)]
    if ast.is_node(value):
        return [type(value).__name__, *(_plain(item) for item in ast.fields_of(value))]
    return value


def decode(data: bytes) -> Node | None:
    """The tree `encode` gave these bytes; None when they are not such a tree."""
    from workload_map.jq import ast

    if not _CLASSES:
        _CLASSES.update(
            (name, value)
            for name in ast.__all__
            if isinstance(value := getattr(ast, name), type) and issubclass(value, msgspec.Struct)
        )
    try:
        tree = _build(msgspec.msgpack.decode(data))
    except (msgspec.DecodeError, KeyError, TypeError, ValueError, IndexError):
        return None
    return tree if ast.is_node(tree) else None


def _build(value: Any) -> Any:
    if type(value) is not list:
        return value
    tag = value[0]
    items = [_build(item) if type(item) is list else item for item in value[1:]]  # a scalar is itself: no call
    if type(tag) is str:
        return _CLASSES[tag](*items)
    if tag == _TUPLE and type(tag) is int:
        return tuple(items)
    raise ValueError(f"not an encoded tree: {tag!r}")


def remember(trees: Mapping[str, bytes]) -> None:
    """Trees of programs (text -> `encode`d tree) parsed in an earlier process, for `parse` to hand out."""
    _encoded.update(trees)


def remembered(expr: str) -> Node | None:
    """The remembered tree of `expr` (decoded on first use), or None."""
    tree = _decoded.get(expr)
    if tree is None:
        data = _encoded.pop(expr, None)
        if data is None:
            return None
        tree = decode(data)
        if tree is not None:
            _decoded[expr] = tree
    return tree


def forget() -> None:
    """Drop every remembered tree (benchmarks time parsing itself)."""
    _encoded.clear()
    _decoded.clear()


def tree_stamp() -> bytes | None:
    """(name, size, mtime) of the modules that decide a text's tree, as Python's bytecode cache judges a source
    file; None when they cannot be read (then no trees are stored)."""
    return module_stamp(_PARSER_MODULES)


def module_stamp(names: tuple[str, ...]) -> bytes | None:
    """(name, size, mtime) of the named modules of this package (`tree_stamp`'s, and `facts.fact_stamp`'s); None
    when one cannot be read."""
    # os.path: no pathlib import at start-up; abspath, not realpath: a symbolic link on the way names the same
    # files, and realpath's walk of every component is ~0.2 M instructions (issue 19)
    directory = os.path.dirname(os.path.abspath(__file__))
    stamps: list[str] = []
    try:
        for name in names:
            stat = os.stat(os.path.join(directory, name))
            stamps.append(f"jq/{name}:{stat.st_size}:{stat.st_mtime_ns}")
    except OSError:
        return None
    return "\n".join(stamps).encode()
