"""Parsing jq programs: `parse(expr)`, the syntax tree of a program exactly as libjq 1.8 reads it (the grammar is
`jq/grammar.py`), cached, or the tree remembered from an earlier process (`jq.trees`: the catalog's blob), for which
the grammar is not even imported.

Why our own parser: the static safety check (`workload_map.jq.safety`) must see the same program libjq will run
(see `jq/grammar.py`). tests/unit/test_jq_parser.py checks accept/reject decisions and operator grouping against
libjq itself.
"""

from __future__ import annotations

import functools
from typing import Final

from workload_map.errors import ArgumentTypeError
from workload_map.jq import ast, facts, trees
from workload_map.jq.ast import ASSIGNMENT_OPERATORS, BINARY_OPERATORS, Node
from workload_map.jq.errors import JqParseError

__all__ = ["ASSIGNMENT_OPERATORS", "BINARY_OPERATORS", "MAX_DEPTH", "parse"]


def parse(expr: str) -> Node:
    """Parse a jq program into its syntax tree (cached; trees are immutable).

    Raises JqParseError (with line and column) when libjq would not parse the program, and for the module
    directives and NUL characters we refuse on purpose.
    """
    if not isinstance(expr, str):  # before the cache, which fails on an unhashable argument with a TypeError
        raise ArgumentTypeError("a jq expression", "a string", expr)
    tree = trees.remembered(expr)  # parsed by this parser in an earlier process (the catalog's blob)
    return tree if tree is not None else _parse(expr)


@functools.lru_cache(maxsize=4096)
def _parse(expr: str) -> Node:
    from workload_map.jq.grammar import Parser  # only for a text really parsed (see the module's docstring)

    try:
        parser = Parser(expr)
        tree: Node | None = parser.parse_program()
    except RecursionError:
        tree = None
    # a node consumes at least one token per three levels of depth, so short programs cannot be too deep
    if tree is None or (3 * len(parser.tokens) > MAX_DEPTH and _too_deep(tree)):
        raise JqParseError(expr, f"expression is nested too deeply (more than {MAX_DEPTH} levels)")
    return tree


MAX_DEPTH: Final = 200  # tree depth every walker (safety check, unparse, fast path) handles with Python's stack


def _too_deep(tree: Node) -> bool:
    """True when the tree is deeper than MAX_DEPTH (long postfix or operator chains build deep trees without
    deep parser recursion)."""
    stack: list[tuple[object, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for value in ast.fields_of(node):
            items = value if isinstance(value, tuple) else (value,)
            for item in items:
                if isinstance(item, tuple):
                    stack.extend((sub, depth + 1) for sub in item if ast.is_node(sub))
                elif ast.is_node(item):
                    stack.append((item, depth + 1))
    return False


def _cache_clear() -> None:
    _parse.cache_clear()
    trees.forget()
    facts.forget()  # worked out on the remembered trees: a cold start forgets both


parse.cache_clear = _cache_clear  # type: ignore[attr-defined]  # benchmarks time uncached parses
