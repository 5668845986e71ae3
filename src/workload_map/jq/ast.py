"""Syntax tree of a jq program, as libjq 1.8 parses it.

Every node is a frozen dataclass, so trees can be hashed, cached and compared. The shapes follow jq's grammar
(`src/parser.y` of jq 1.8) closely enough that `workload_map.jq.unparse.unparse` can print a tree back as a
program libjq reads the same way; see docs/jq.md for the grammar and what each node stands for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

__all__ = [
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
]


@dataclass(frozen=True, slots=True)
class Identity:
    """`.`"""


@dataclass(frozen=True, slots=True)
class RecurseAll:
    """`..` (libjq compiles it to `recurse`)."""


@dataclass(frozen=True, slots=True)
class Literal:
    """`null`, `true` or `false`."""

    value: bool | None


@dataclass(frozen=True, slots=True)
class Number:
    """A number literal; `text` is the source spelling (`1`, `.5`, `1e3`)."""

    text: str
    value: int | float


@dataclass(frozen=True, slots=True)
class String:
    """A string literal: text parts and interpolated queries (`"a\\(.b)c"`), optionally with a format prefix
    (`@base64 "..."` applies the format to each interpolated value)."""

    parts: tuple[str | Node, ...]
    format: str | None = None

    @property
    def constant(self) -> str | None:
        """The string's value when it has no interpolation, else None."""
        if all(isinstance(p, str) for p in self.parts):
            return "".join(p for p in self.parts if isinstance(p, str))
        return None


@dataclass(frozen=True, slots=True)
class Format:
    """A bare format such as `@base64` (applies the format to `.`)."""

    name: str


@dataclass(frozen=True, slots=True)
class Var:
    """`$name` (name without the dollar; may contain `::` for module variables)."""

    name: str


@dataclass(frozen=True, slots=True)
class VarNoCopy:
    """`$$$$name`: libjq's private "load and clear" variable access (used inside its own builtins)."""

    name: str


@dataclass(frozen=True, slots=True)
class Loc:
    """`$__loc__`: `{"file": ..., "line": ...}` of its position."""

    line: int


@dataclass(frozen=True, slots=True)
class Index:
    """`T.name`, `T."name"`, `T[key]`, `T.[key]`; `optional` for a trailing `?` on the index itself."""

    target: Node
    key: Node
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Slice:
    """`T[start:end]` with either bound possibly absent."""

    target: Node
    start: Node | None
    end: Node | None
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Iterate:
    """`T[]` (or `T.[]`); `optional` for `T[]?`."""

    target: Node
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Try:
    """`try body catch handler`, `try body`, or a postfix `body?` (handler None)."""

    body: Node
    handler: Node | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """A function call `name` or `name(a; b)`."""

    name: str
    args: tuple[Node, ...] = ()

    @property
    def signature(self) -> str:
        return f"{self.name}/{len(self.args)}"


@dataclass(frozen=True, slots=True)
class Neg:
    """Unary minus `-T`."""

    operand: Node


@dataclass(frozen=True, slots=True)
class Collect:
    """`[query]`, or `[]` when body is None."""

    body: Node | None


@dataclass(frozen=True, slots=True)
class ObjectEntry:
    """One `key: value` pair of an object constructor; `key` is evaluated (a constant string for `a:`/`"a":`,
    the variable for `$x:`, any query for `(q):`). `value` None is the shorthand `{a}` / `{"a\\(x)"}`: the
    input indexed by each key."""

    key: Node
    value: Node | None


@dataclass(frozen=True, slots=True)
class ObjectCons:
    """`{...}` object constructor. `{$x}` is stored as `{"x": $x}`, `{$__loc__}` as `{"__loc__": $__loc__}`."""

    entries: tuple[ObjectEntry, ...]


@dataclass(frozen=True, slots=True)
class Pipe:
    """`left | right`"""

    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Comma:
    """`left, right`"""

    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Binary:
    """A binary operator: arithmetic, comparison, `and`, `or`, `//`, and the assignment operators
    (`=`, `|=`, `+=`, `-=`, `*=`, `/=`, `%=`, `//=`)."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class If:
    """`if c then t (elif c then t)* (else e)? end` (a missing else is `.`)."""

    cond: Node
    then: Node
    elifs: tuple[tuple[Node, Node], ...]
    otherwise: Node | None


@dataclass(frozen=True, slots=True)
class VarPattern:
    """`$name` in a destructuring pattern."""

    name: str


@dataclass(frozen=True, slots=True)
class ArrayPattern:
    """`[p1, p2, ...]`"""

    elements: tuple[Pattern, ...]


@dataclass(frozen=True, slots=True)
class ObjectPatternEntry:
    """One entry of an object pattern: `$name` (binds `.name`), `$name: p` (binds and destructures),
    `key: p`, `"key": p`, `(query): p`. `var` is the bound name for the `$name` forms."""

    key: Node
    var: str | None
    pattern: Pattern | None


@dataclass(frozen=True, slots=True)
class ObjectPattern:
    """`{...}` destructuring pattern."""

    entries: tuple[ObjectPatternEntry, ...]


Pattern = Union[VarPattern, ArrayPattern, ObjectPattern]


@dataclass(frozen=True, slots=True)
class Bind:
    """`source as p1 ?// p2 ... | body`. `bare_source` records a source written as a binary expression without
    parentheses (`1 + 2 as $x`), which gojq before 0.12.18 does not parse (not part of equality)."""

    source: Node
    patterns: tuple[Pattern, ...]
    body: Node
    bare_source: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class Reduce:
    """`reduce source as patterns (init; update)`"""

    source: Node
    patterns: tuple[Pattern, ...]
    init: Node
    update: Node


@dataclass(frozen=True, slots=True)
class Foreach:
    """`foreach source as patterns (init; update)` or with a third `; extract`."""

    source: Node
    patterns: tuple[Pattern, ...]
    init: Node
    update: Node
    extract: Node | None


@dataclass(frozen=True, slots=True)
class Label:
    """`label $name | body`"""

    name: str
    body: Node


@dataclass(frozen=True, slots=True)
class Break:
    """`break $name`"""

    name: str


@dataclass(frozen=True, slots=True)
class FuncDef:
    """`def name(params): body;` — a param is `"$x"` (value parameter) or `"f"` (filter parameter)."""

    name: str
    params: tuple[str, ...]
    body: Node

    @property
    def signature(self) -> str:
        return f"{self.name}/{len(self.params)}"


@dataclass(frozen=True, slots=True)
class FuncDefine:
    """A definition and the query it scopes over: `def f: ...; rest`."""

    definition: FuncDef
    rest: Node


Node = Union[
    Identity,
    RecurseAll,
    Literal,
    Number,
    String,
    Format,
    Var,
    VarNoCopy,
    Loc,
    Index,
    Slice,
    Iterate,
    Try,
    Call,
    Neg,
    Collect,
    ObjectCons,
    Pipe,
    Comma,
    Binary,
    If,
    Bind,
    Reduce,
    Foreach,
    Label,
    Break,
    FuncDefine,
]
