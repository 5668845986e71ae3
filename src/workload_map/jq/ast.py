"""Syntax tree of a jq program, as libjq 1.8 parses it.

Every node is a frozen `msgspec.Struct` (a `_Node`), so trees can be hashed, cached and compared; `fields_of`
walks a node's fields. (Structs rather than dataclasses: 33 frozen slotted dataclasses cost ~9 ms to create at
import, a tenth of the CLI's start-up; the Structs cost well under 1 ms.) The shapes follow jq's grammar
(`src/parser.y` of jq 1.8) closely enough that `workload_map.jq.unparse.unparse` can print a tree back as a
program libjq reads the same way; see docs/jq.md for the grammar and what each node stands for. The operators a
`Binary` node may hold, with their precedence, are `BINARY_OPERATORS` (`ASSIGNMENT_OPERATORS` the assignments).
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

__all__ = [
    "ASSIGNMENT_OPERATORS",
    "BINARY_OPERATORS",
    "ArrayPattern",
    "Binary",
    "Bind",
    "Break",
    "Call",
    "Collect",
    "Comma",
    "Foreach",
    "Format",
    "FuncDef",
    "FuncDefine",
    "Identity",
    "If",
    "Index",
    "Iterate",
    "Label",
    "Literal",
    "Loc",
    "Neg",
    "Node",
    "Number",
    "ObjectCons",
    "ObjectEntry",
    "ObjectPattern",
    "ObjectPatternEntry",
    "Pattern",
    "Pipe",
    "RecurseAll",
    "Reduce",
    "Slice",
    "String",
    "Try",
    "Var",
    "VarNoCopy",
    "VarPattern",
    "fields_of",
    "is_node",
]


class _Node(msgspec.Struct, frozen=True):
    """The base of every tree node: frozen (hashable; equal to a node of the same class with equal fields)."""


def fields_of(node: object) -> tuple[Any, ...]:
    """The values of a tree node's fields in declaration order; `()` for anything that is not a node."""
    if isinstance(node, _Node):
        return msgspec.structs.astuple(node)  # the fields in declaration order, in C (no generator; issue 19)
    return ()


def is_node(value: object) -> bool:
    """Whether `value` is a syntax tree node (of any class in this module)."""
    return isinstance(value, _Node)


class Identity(_Node, frozen=True):
    """`.`"""


class RecurseAll(_Node, frozen=True):
    """`..` (libjq compiles it to `recurse`)."""


class Literal(_Node, frozen=True):
    """`null`, `true` or `false`."""

    value: bool | None


class Number(_Node, frozen=True):
    """A number literal; `text` is the source spelling (`1`, `.5`, `1e3`)."""

    text: str
    value: int | float


class String(_Node, frozen=True):
    """A string literal: text parts and interpolated queries (`"a\\(.b)c"`), optionally with a format prefix
    (`@base64 "..."` applies the format to each interpolated value)."""

    parts: tuple[str | Node, ...]
    format: str | None = None

    @property
    def constant(self) -> str | None:
        """The string's value when it has no interpolation, else None."""
        # one list rather than two generators: asked for every key the analyses and the compiler read (issue 19)
        parts = self.parts
        texts = [part for part in parts if isinstance(part, str)]
        return "".join(texts) if len(texts) == len(parts) else None


class Format(_Node, frozen=True):
    """A bare format such as `@base64` (applies the format to `.`)."""

    name: str


class Var(_Node, frozen=True):
    """`$name` (name without the dollar; may contain `::` for module variables)."""

    name: str


class VarNoCopy(_Node, frozen=True):
    """`$$$$name`: libjq's private "load and clear" variable access (used inside its own builtins)."""

    name: str


class Loc(_Node, frozen=True):
    """`$__loc__`: `{"file": ..., "line": ...}` of its position."""

    line: int


class Index(_Node, frozen=True):
    """`T.name`, `T."name"`, `T[key]`, `T.[key]`; `optional` for a trailing `?` on the index itself."""

    target: Node
    key: Node
    optional: bool = False


class Slice(_Node, frozen=True):
    """`T[start:end]` with either bound possibly absent."""

    target: Node
    start: Node | None
    end: Node | None
    optional: bool = False


class Iterate(_Node, frozen=True):
    """`T[]` (or `T.[]`); `optional` for `T[]?`."""

    target: Node
    optional: bool = False


class Try(_Node, frozen=True):
    """`try body catch handler`, `try body`, or a postfix `body?` (handler None)."""

    body: Node
    handler: Node | None = None


class Call(_Node, frozen=True):
    """A function call `name` or `name(a; b)`."""

    name: str
    args: tuple[Node, ...] = ()

    @property
    def signature(self) -> str:
        return f"{self.name}/{len(self.args)}"


class Neg(_Node, frozen=True):
    """Unary minus `-T`."""

    operand: Node


class Collect(_Node, frozen=True):
    """`[query]`, or `[]` when body is None."""

    body: Node | None


class ObjectEntry(_Node, frozen=True):
    """One `key: value` pair of an object constructor; `key` is evaluated (a constant string for `a:`/`"a":`,
    the variable for `$x:`, any query for `(q):`). `value` None is the shorthand `{a}` / `{"a\\(x)"}`: the
    input indexed by each key."""

    key: Node
    value: Node | None


class ObjectCons(_Node, frozen=True):
    """`{...}` object constructor. `{$x}` is stored as `{"x": $x}`, `{$__loc__}` as `{"__loc__": $__loc__}`."""

    entries: tuple[ObjectEntry, ...]


class Pipe(_Node, frozen=True):
    """`left | right`"""

    left: Node
    right: Node


class Comma(_Node, frozen=True):
    """`left, right`"""

    left: Node
    right: Node


class Binary(_Node, frozen=True):
    """A binary operator: arithmetic, comparison, `and`, `or`, `//`, and the assignment operators
    (`=`, `|=`, `+=`, `-=`, `*=`, `/=`, `%=`, `//=`)."""

    op: str
    left: Node
    right: Node


# The operators of jq's grammar and their precedence, from jq 1.8's `parser.y`: what the grammar (`jq/grammar.py`)
# builds `Binary` nodes by, and what the analyses (`reads`, `safety`) read an operator's kind by, without importing
# the grammar. (Here rather than in a module of their own: one file fewer for every start to find and read; issue 19.)
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


class If(_Node, frozen=True):
    """`if c then t (elif c then t)* (else e)? end` (a missing else is `.`)."""

    cond: Node
    then: Node
    elifs: tuple[tuple[Node, Node], ...]
    otherwise: Node | None


class VarPattern(_Node, frozen=True):
    """`$name` in a destructuring pattern."""

    name: str


class ArrayPattern(_Node, frozen=True):
    """`[p1, p2, ...]`"""

    elements: tuple[Pattern, ...]


class ObjectPatternEntry(_Node, frozen=True):
    """One entry of an object pattern: `$name` (binds `.name`), `$name: p` (binds and destructures),
    `key: p`, `"key": p`, `(query): p`. `var` is the bound name for the `$name` forms."""

    key: Node
    var: str | None
    pattern: Pattern | None


class ObjectPattern(_Node, frozen=True):
    """`{...}` destructuring pattern."""

    entries: tuple[ObjectPatternEntry, ...]


Pattern = VarPattern | ArrayPattern | ObjectPattern


class Bind(_Node, frozen=True):
    """`source as p1 ?// p2 ... | body`. `bare_source` records a source written as a binary expression without
    parentheses (`1 + 2 as $x`), which gojq before 0.12.18 does not parse (not part of equality)."""

    source: Node
    patterns: tuple[Pattern, ...]
    body: Node
    bare_source: bool = False

    # bare_source is not part of equality (a Struct field cannot opt out, so Bind says so itself)
    def __eq__(self, other: object) -> bool:
        if type(other) is not Bind:
            return NotImplemented
        return (self.source, self.patterns, self.body) == (other.source, other.patterns, other.body)

    def __hash__(self) -> int:
        return hash((Bind, self.source, self.patterns, self.body))


class Reduce(_Node, frozen=True):
    """`reduce source as patterns (init; update)`"""

    source: Node
    patterns: tuple[Pattern, ...]
    init: Node
    update: Node


class Foreach(_Node, frozen=True):
    """`foreach source as patterns (init; update)` or with a third `; extract`."""

    source: Node
    patterns: tuple[Pattern, ...]
    init: Node
    update: Node
    extract: Node | None


class Label(_Node, frozen=True):
    """`label $name | body`"""

    name: str
    body: Node


class Break(_Node, frozen=True):
    """`break $name`"""

    name: str


class FuncDef(_Node, frozen=True):
    """`def name(params): body;` — a param is `"$x"` (value parameter) or `"f"` (filter parameter)."""

    name: str
    params: tuple[str, ...]
    body: Node

    @property
    def signature(self) -> str:
        return f"{self.name}/{len(self.params)}"


class FuncDefine(_Node, frozen=True):
    """A definition and the query it scopes over: `def f: ...; rest`."""

    definition: FuncDef
    rest: Node


Node = (
    Identity
    | RecurseAll
    | Literal
    | Number
    | String
    | Format
    | Var
    | VarNoCopy
    | Loc
    | Index
    | Slice
    | Iterate
    | Try
    | Call
    | Neg
    | Collect
    | ObjectCons
    | Pipe
    | Comma
    | Binary
    | If
    | Bind
    | Reduce
    | Foreach
    | Label
    | Break
    | FuncDefine
)
