"""Unparse: a canonical, fully parenthesised program that libjq reads as the same tree.

The inverse of `workload_map.jq.parser.parse`: tests/unit/test_jq_parser.py checks that `unparse(parse(e))`
means the same to libjq as `e`, which pins the parser's precedence and grouping.
"""

from __future__ import annotations

import json
from typing import Final

from workload_map.jq.ast import (
    ArrayPattern,
    Binary,
    Bind,
    Break,
    Call,
    Collect,
    Comma,
    Foreach,
    Format,
    FuncDefine,
    Identity,
    If,
    Index,
    Iterate,
    Label,
    Literal,
    Loc,
    Neg,
    Node,
    Number,
    ObjectCons,
    Pattern,
    Pipe,
    RecurseAll,
    Reduce,
    Slice,
    String,
    Try,
    Var,
    VarNoCopy,
    VarPattern,
)

__all__ = ["unparse"]

_ATOMIC: Final = (
    Identity, Literal, Number, String, Format, Var, VarNoCopy, Loc, Call, Collect, ObjectCons, Index, Slice, Iterate,
)  # fmt: skip


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1].replace("\x7f", "\\u007f")


def _string(node: String) -> str:
    out = [f"@{node.format} " if node.format else "", '"']
    for part in node.parts:
        out.append(_quote(part) if isinstance(part, str) else f"\\({unparse(part)})")
    out.append('"')
    return "".join(out)


def _paren(node: Node) -> str:
    text = unparse(node)
    return text if isinstance(node, _ATOMIC) else f"({text})"


def _pattern(p: Pattern) -> str:
    if isinstance(p, VarPattern):
        return f"${p.name}"
    if isinstance(p, ArrayPattern):
        return "[" + ", ".join(_pattern(e) for e in p.elements) + "]"
    entries = []
    for e in p.entries:
        if e.var is not None:
            entries.append(f"${e.var}" + (f": {_pattern(e.pattern)}" if e.pattern is not None else ""))
        else:
            assert e.pattern is not None
            entries.append(f"({unparse(e.key)}): {_pattern(e.pattern)}")
    return "{" + ", ".join(entries) + "}"


def _patterns(ps: tuple[Pattern, ...]) -> str:
    return " ?// ".join(_pattern(p) for p in ps)


def _opt(optional: bool) -> str:
    return "?" if optional else ""


def unparse(node: Node) -> str:
    """Print a tree as a fully parenthesised jq program with the same meaning (one line)."""
    if isinstance(node, Identity):
        return "."
    if isinstance(node, RecurseAll):
        return ".."
    if isinstance(node, Literal):
        return "null" if node.value is None else ("true" if node.value else "false")
    if isinstance(node, Number):
        return node.text
    if isinstance(node, String):
        return _string(node)
    if isinstance(node, Format):
        return f"@{node.name}"
    if isinstance(node, Var):
        return f"${node.name}"
    if isinstance(node, VarNoCopy):
        return f"$$$${node.name}"
    if isinstance(node, Loc):
        return "$__loc__"
    if isinstance(node, Index):
        return f"{_paren(node.target)}[{unparse(node.key)}]{_opt(node.optional)}"
    if isinstance(node, Slice):
        start = "" if node.start is None else unparse(node.start)
        end = "" if node.end is None else unparse(node.end)
        return f"{_paren(node.target)}[{start}:{end}]{_opt(node.optional)}"
    if isinstance(node, Iterate):
        return f"{_paren(node.target)}[]{_opt(node.optional)}"
    if isinstance(node, Try):
        if node.handler is None:
            return f"try {_paren(node.body)}"
        return f"try {_paren(node.body)} catch {_paren(node.handler)}"
    if isinstance(node, Call):
        if not node.args:
            return node.name
        return node.name + "(" + "; ".join(unparse(a) for a in node.args) + ")"
    if isinstance(node, Neg):
        return f"-{_paren(node.operand)}"
    if isinstance(node, Collect):
        return "[]" if node.body is None else f"[{unparse(node.body)}]"
    if isinstance(node, ObjectCons):
        entries = []
        for e in node.entries:
            if e.value is None:
                assert isinstance(e.key, String)
                entries.append(_string(e.key))
            else:
                entries.append(f"({unparse(e.key)}): {_paren(e.value)}")
        return "{" + ", ".join(entries) + "}"
    if isinstance(node, Pipe):
        return f"{_paren(node.left)} | {_paren(node.right)}"
    if isinstance(node, Comma):
        return f"{_paren(node.left)}, {_paren(node.right)}"
    if isinstance(node, Binary):
        return f"{_paren(node.left)} {node.op} {_paren(node.right)}"
    if isinstance(node, If):
        out = f"if {unparse(node.cond)} then {unparse(node.then)}"
        for c, t in node.elifs:
            out += f" elif {unparse(c)} then {unparse(t)}"
        if node.otherwise is not None:
            out += f" else {unparse(node.otherwise)}"
        return out + " end"
    if isinstance(node, Bind):
        return f"{_paren(node.source)} as {_patterns(node.patterns)} | {_paren(node.body)}"
    if isinstance(node, Reduce):
        return (
            f"reduce {_paren(node.source)} as {_patterns(node.patterns)} ({unparse(node.init)}; {unparse(node.update)})"
        )
    if isinstance(node, Foreach):
        extract = "" if node.extract is None else f"; {unparse(node.extract)}"
        return (
            f"foreach {_paren(node.source)} as {_patterns(node.patterns)} "
            f"({unparse(node.init)}; {unparse(node.update)}{extract})"
        )
    if isinstance(node, Label):
        return f"label ${node.name} | {_paren(node.body)}"
    if isinstance(node, Break):
        return f"break ${node.name}"
    if isinstance(node, FuncDefine):
        d = node.definition
        params = "(" + "; ".join(d.params) + ")" if d.params else ""
        return f"def {d.name}{params}: {unparse(d.body)}; {_paren(node.rest)}"
    raise TypeError(f"not a jq syntax node: {node!r}")  # pragma: no cover
