"""Static safety check of a definition's jq expressions, on the whole syntax tree.

A Karta definition may come from anyone who can create a custom resource, and its expressions run inside
our process. The check walks every node of the tree `workload_map.jq.parser` builds (the tree libjq itself
will run: parentheses, arrays, objects, if, reduce, foreach, try, def bodies, call arguments, string
interpolation, `?//` alternatives, label/break, `as` bindings) and rejects:

- mutation: the assignment operators (`=`, `|=`, `+=`, `-=`, `*=`, `/=`, `%=`, `//=`), `del`, `delpaths`,
  `setpath`;
- unbounded or excessive output: `..`, `range`, `recurse`, `walk`, `paths`, `repeat`, `until`, `while`,
  `combinations`, `tostream`, and recursive definitions (direct or mutual);
- anything that reaches outside the object: `env`, `$ENV`, `input(s)`, `debug`, `stderr`, `halt(_error)`,
  `input_filename`, `input_line_number`, `$__loc__`, `get_*`, `modulemeta`, time-zone dependent functions;
- anything not portable to upstream (gojq): libjq-only builtins and syntax, builtins newer than the gojq
  baseline, module-qualified names, keyword-named definitions;
- undefined functions and unbound variables (found statically, not at evaluation time).

Reasons are one line each and name the construct. See docs/jq.md for the full list and the reasoning.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Final

from workload_map.jq import builtins
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
    ObjectPattern,
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
from workload_map.jq.errors import JqError, UnsafeExpressionError
from workload_map.jq.parser import ASSIGNMENT_OPERATORS, parse
from workload_map.jq.reads import reads

__all__ = ["check_safety", "check_tree", "referenced_roots", "require_safe"]

_PARAM: Final = -1  # scope entry for a function parameter (not a definition)


@dataclass(frozen=True)
class _Scope:
    functions: dict[str, int] = field(default_factory=dict)  # "name/arity" -> definition id or _PARAM
    variables: frozenset[str] = frozenset()
    labels: frozenset[str] = frozenset()
    current: int | None = None  # innermost enclosing definition

    def with_vars(self, names: set[str]) -> _Scope:
        return _Scope(self.functions, self.variables | names, self.labels, self.current)


class _Checker:
    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.ids = itertools.count()
        self.names: dict[int, str] = {}
        self.edges: dict[int, set[int]] = {}

    def reject(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    # -- names
    def call(self, node: Call, scope: _Scope) -> None:
        sig = node.signature
        for arg in node.args:
            self.walk(arg, scope)
        unsafe = builtins.unsafe_reason(node.name)
        if unsafe is not None:
            self.reject(unsafe)
            return
        target = scope.functions.get(sig)
        if target is not None:
            if target != _PARAM and scope.current is not None:
                self.edges.setdefault(scope.current, set()).add(target)
            return
        if "::" in node.name:
            self.reject(f"module-qualified function '{sig}' is not allowed (modules are not supported)")
        elif node.name.startswith("_"):
            self.reject(f"internal libjq function '{sig}' is not allowed")
        elif builtins.is_portable(sig):
            return
        elif sig in builtins.LIBJQ_ONLY:
            self.reject(f"function '{sig}' exists only in libjq (upstream's gojq lacks it) and is not allowed")
        elif sig in builtins.PORTABLE:
            since = ".".join(map(str, builtins.GOJQ_SINCE[sig]))
            self.reject(f"function '{sig}' needs gojq {since} or newer; upstream may run an older gojq")
        else:
            self.reject(_undefined(node.name, len(node.args), scope))

    def variable(self, name: str, scope: _Scope) -> None:
        if name in scope.variables:
            return
        self.reject(builtins.UNSAFE_VARIABLES.get(name) or f"undefined variable '${name}'")

    def format(self, name: str) -> None:
        if name not in builtins.FORMATS:
            self.reject(f"format '@{name}' is not supported by both jq and gojq")

    # -- tree walk
    def walk(self, node: Node, scope: _Scope) -> None:
        if isinstance(node, Identity | Literal | Number):
            return
        if isinstance(node, RecurseAll):
            self.reject("recursive descent operator '..' is not allowed")
        elif isinstance(node, String):
            if node.format is not None:
                self.format(node.format)
            for part in node.parts:
                if not isinstance(part, str):
                    self.walk(part, scope)
        elif isinstance(node, Format):
            self.format(node.name)
        elif isinstance(node, Var):
            self.variable(node.name, scope)
        elif isinstance(node, VarNoCopy):
            self.reject(f"libjq-private variable access '$$$${node.name}' is not allowed")
        elif isinstance(node, Loc):
            self.reject(builtins.UNSAFE_VARIABLES["__loc__"])
        elif isinstance(node, Index):
            self.walk(node.target, scope)
            self.walk(node.key, scope)
        elif isinstance(node, Slice):
            self.walk(node.target, scope)
            for bound in (node.start, node.end):
                if bound is not None:
                    self.walk(bound, scope)
        elif isinstance(node, Iterate):
            self.walk(node.target, scope)
        elif isinstance(node, Try):
            self.walk(node.body, scope)
            if node.handler is not None:
                self.walk(node.handler, scope)
        elif isinstance(node, Call):
            self.call(node, scope)
        elif isinstance(node, Neg):
            self.walk(node.operand, scope)
        elif isinstance(node, Collect):
            if node.body is not None:
                self.walk(node.body, scope)
        elif isinstance(node, ObjectCons):
            for entry in node.entries:
                self.walk(entry.key, scope)
                if entry.value is not None:
                    self.walk(entry.value, scope)
        elif isinstance(node, Pipe | Comma):
            self.walk(node.left, scope)
            self.walk(node.right, scope)
        elif isinstance(node, Binary):
            if node.op in ASSIGNMENT_OPERATORS:
                self.reject(f"modifying operator '{node.op}' is not allowed")
            self.walk(node.left, scope)
            self.walk(node.right, scope)
        elif isinstance(node, If):
            self.walk(node.cond, scope)
            self.walk(node.then, scope)
            for cond, then in node.elifs:
                self.walk(cond, scope)
                self.walk(then, scope)
            if node.otherwise is not None:
                self.walk(node.otherwise, scope)
        elif isinstance(node, Bind):
            if node.bare_source:
                self.reject(
                    "binding a binary expression without parentheses ('a + b as $x') is not portable to "
                    "gojq before 0.12.18; write '(a + b) as $x'"
                )
            self.walk(node.source, scope)
            self.walk(node.body, scope.with_vars(self.patterns(node.patterns, scope)))
        elif isinstance(node, Reduce | Foreach):
            keyword = "reduce" if isinstance(node, Reduce) else "foreach"
            if len(node.patterns) > 1:
                self.reject(f"destructuring alternatives (?//) in {keyword} need gojq 0.12.20 or newer")
            self.walk(node.source, scope)
            self.walk(node.init, scope)
            inner = scope.with_vars(self.patterns(node.patterns, scope))
            self.walk(node.update, inner)
            if isinstance(node, Foreach) and node.extract is not None:
                self.walk(node.extract, inner)
        elif isinstance(node, Label):
            self.walk(node.body, _Scope(scope.functions, scope.variables, scope.labels | {node.name}, scope.current))
        elif isinstance(node, Break):
            if node.name not in scope.labels:
                self.reject(f"'break ${node.name}' has no enclosing 'label ${node.name}'")
        elif isinstance(node, FuncDefine):
            self.define(node, scope)
        else:  # pragma: no cover - every node type is handled above
            raise TypeError(f"not a jq syntax node: {node!r}")

    def define(self, node: FuncDefine, scope: _Scope) -> None:
        d = node.definition
        ident = next(self.ids)
        self.names[ident] = d.signature
        if d.name in ("true", "false", "null"):
            self.reject(f"defining a function named '{d.name}' is not allowed (gojq rejects keyword names)")
        if "::" in d.name:
            self.reject(f"module-qualified definition '{d.signature}' is not allowed")
        functions = {**scope.functions, d.signature: ident}
        body_functions = dict(functions)
        variables: set[str] = set()
        for param in d.params:
            name = param.removeprefix("$")
            body_functions[f"{name}/0"] = _PARAM
            if param.startswith("$"):
                variables.add(name)
        self.walk(d.body, _Scope(body_functions, scope.variables | variables, scope.labels, ident))
        self.walk(node.rest, _Scope(functions, scope.variables, scope.labels, scope.current))

    def patterns(self, patterns: tuple[Pattern, ...], scope: _Scope) -> set[str]:
        """Walk key expressions of the patterns (evaluated in the outer scope); return all bound names (every
        `?//` alternative binds the union)."""
        names: set[str] = set()
        for p in patterns:
            self.pattern(p, scope, names)
        return names

    def pattern(self, p: Pattern, scope: _Scope, names: set[str]) -> None:
        if isinstance(p, VarPattern):
            names.add(p.name)
        elif isinstance(p, ArrayPattern):
            for element in p.elements:
                self.pattern(element, scope, names)
        elif isinstance(p, ObjectPattern):
            for entry in p.entries:
                if entry.var is not None:
                    names.add(entry.var)
                else:
                    self.walk(entry.key, scope)
                if entry.pattern is not None:
                    self.pattern(entry.pattern, scope, names)

    def recursion(self) -> None:
        """Report every definition that can reach itself through calls (direct or mutual recursion)."""
        for start in sorted(self.edges):
            cycle = self._cycle_from(start)
            if cycle is not None:
                chain = " -> ".join(self.names[i] for i in cycle)
                self.reject(f"recursive function '{self.names[start]}' is not allowed ({chain})")

    def _cycle_from(self, start: int) -> list[int] | None:
        stack: list[tuple[int, list[int]]] = [(start, [start])]
        seen: set[int] = set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(self.edges.get(node, ())):
                if nxt == start:
                    return [*path, start]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
        return None


def _undefined(name: str, arity: int, scope: _Scope) -> str:
    sig = f"{name}/{arity}"
    known = builtins.arities(name) or sorted(
        int(s.rsplit("/", 1)[1]) for s in scope.functions if s.rsplit("/", 1)[0] == name
    )
    if known:
        counts = " or ".join(str(k) for k in known)
        return f"undefined function '{sig}': '{name}' takes {counts} argument(s)"
    if arity == 0:
        return f"undefined function '{sig}'; to write a constant string use '\"{name}\"'"
    return f"undefined function '{sig}'"


def check_tree(tree: Node) -> list[str]:
    """Reasons a parsed expression is unsafe (empty when it is safe)."""
    checker = _Checker()
    checker.walk(tree, _Scope())
    checker.recursion()
    return checker.reasons


def check_safety(expr: str) -> list[str]:
    """Human-readable reasons why `expr` is unsafe; an empty list means it is safe.

    Raises JqParseError when the expression cannot be parsed.
    """
    return check_tree(parse(expr))


def require_safe(expr: str, field_path: str | None = None) -> None:
    """Raise UnsafeExpressionError (all reasons, joined with '; ') unless `expr` is safe.

    Raises JqParseError (with field_path) when the expression cannot be parsed.
    """
    try:
        reasons = check_safety(expr)
    except JqError as exc:
        if field_path is None:
            raise
        raise exc.with_field_path(field_path) from None
    if reasons:
        raise UnsafeExpressionError(expr, "; ".join(reasons), field_path)


# ---------------------------------------------------------------------------------------------------------
# Which parts of the input an expression reads: a view of `reads.reads`


def referenced_roots(node: Node | str, depth: int = 1) -> set[tuple[str, ...]] | None:
    """The object paths (truncated to `depth` keys) an expression can read from its input, or None when it may
    read more than plain paths show (the whole input, variables, definitions, `..`, most builtins on `.`).

    `.status.conditions[]? | select(.type == "Ready")` reads `{("status",)}`; `.spec.replicas // 1` reads
    `{("spec",)}`; `length` gives None. Safe to use for shrinking the object handed to libjq: evaluating the
    expression on `{k: obj[k] for (k,) in roots if k in obj}` gives the same result as on obj.

    A view of `reads.reads` (without following `as` bindings): each pattern cut at its first index or `.[]`.
    """
    tree = parse(node) if isinstance(node, str) else node
    patterns = reads(tree, bindings=False)
    if depth < 1 or patterns is None:
        return None
    out: set[tuple[str, ...]] = set()
    for pattern in patterns:
        keys: list[str] = []
        for step in pattern[:depth]:
            if not isinstance(step, str):
                break
            keys.append(step)
        if not keys:
            return None
        out.add(tuple(keys))
    return out
