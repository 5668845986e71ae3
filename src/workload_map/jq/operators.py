"""The operators of jq's grammar and their precedence, from jq 1.8's `parser.y`: what the grammar
(`jq/grammar.py`) builds binary nodes by, and what the analyses (`reads`, `safety`) read an operator's kind by,
without importing the grammar itself."""

from __future__ import annotations

from typing import Final

__all__ = ["ASSIGNMENT_OPERATORS", "BINARY_OPERATORS"]

# Binary operators inside an expression: (level, associativity). Higher level binds tighter. `|` and `,`
# sit below all of these (query level). From jq 1.8 parser.y's precedence declarations.
BINARY_OPERATORS: Final[dict[str, tuple[int, str]]] = {
    "//": (1, "right"),
    "=": (2, "nonassoc"),
    "|=": (2, "nonassoc"),
    "+=": (2, "nonassoc"),
    "-=": (2, "nonassoc"),
    "*=": (2, "nonassoc"),
    "/=": (2, "nonassoc"),
    "%=": (2, "nonassoc"),
    "//=": (2, "nonassoc"),
    "or": (3, "left"),
    "and": (4, "left"),
    "==": (5, "nonassoc"),
    "!=": (5, "nonassoc"),
    "<": (5, "nonassoc"),
    "<=": (5, "nonassoc"),
    ">": (5, "nonassoc"),
    ">=": (5, "nonassoc"),
    "+": (6, "left"),
    "-": (6, "left"),
    "*": (7, "left"),
    "/": (7, "left"),
    "%": (7, "left"),
}
ASSIGNMENT_OPERATORS: Final = frozenset(op for op, (level, _) in BINARY_OPERATORS.items() if level == 2)
