"""Which parts of its input a jq expression reads: the one static read analysis.

`reads(node)` gives the input positions an expression may read, each as a pattern of steps from `.` (a string
key, an int index, or None = every element or value), or None when it cannot tell. The end of a pattern keeps its
whole subtree; `convert.prune` keeps exactly those (plus types, lengths and key sets along the way). The engine
hands libjq only what `reads` keeps; `safety.referenced_roots` is a view of the same result (leading key paths).

It follows paths, iterations and constant indexes, pipes (through a navigation, the right side's reads continue
below each position the left side outputs), `,`, operators other than assignments, literals, strings, arrays,
objects, `if`, `try`, `as` bindings, `first`/`last`/`isempty`/`limit`/`any`/`all`/`error`/`empty`, and treats
any other builtin as reading its whole input. A sub-expression it cannot follow (definitions, `reduce`, `foreach`,
`label`) still counts when it is closed (sees nothing but its own input): it then reads whatever feeds it, kept
whole. Anything else (an unbound variable, an assignment) gives None.

Soundness: evaluating `node` on `prune(x, reads(node))` gives the same outputs and errors as on `x`. Checked by
the differential tests in tests/unit/test_jq_engine.py, test_jq_document.py and test_jq_safety.py.
"""

from __future__ import annotations

from typing import Final

import msgspec

from workload_map.jq import ast
from workload_map.jq.parser import ASSIGNMENT_OPERATORS

__all__ = ["Pattern", "reads"]

Pattern = tuple[str | int | None, ...]
_Names = frozenset[str]

_WHOLE_INPUT: Final[frozenset[Pattern]] = frozenset({()})
_FIRST_ARG: Final = frozenset({"first/1", "last/1", "isempty/1", "error/1"})
_GENERATOR_THEN_CONDITION: Final = frozenset({"any/2", "all/2"})
_NOTHING: Final[_Names] = frozenset()


def reads(node: ast.Node, *, bindings: bool = True) -> set[Pattern] | None:
    """The input positions `node` may read (each with its whole subtree), or None when unsure.

    `bindings=False` answers None for `as` bindings instead of following them.
    """
    return _Reads(bindings).of(node, _NOTHING)


# isinstance's class tuples, made once: a `ast.A | ast.B` union is made again each time a node is looked at
_STEPS: Final = (ast.Index, ast.Iterate)
_CONSTANTS: Final = (ast.Literal, ast.Number, ast.Loc)
_READS_ALL: Final = (ast.Format, ast.RecurseAll)


def _navigation(node: ast.Node) -> set[Pattern] | None:
    """The input positions whose values `node` outputs (unchanged), when it only navigates: `.a.b`, `.a[]`,
    `.a[0]`, `?`, and pipes and `//` of navigations."""
    if isinstance(node, ast.Identity):
        return {()}
    if isinstance(node, ast.Try) and node.handler is None:
        return _navigation(node.body)
    if isinstance(node, _STEPS):
        step: str | int | None
        if isinstance(node, ast.Iterate):
            step = None
        elif isinstance(node.key, ast.String) and node.key.constant is not None:
            step = node.key.constant
        elif isinstance(node.key, ast.Number) and isinstance(node.key.value, int):
            step = node.key.value
        else:
            return None
        targets = _navigation(node.target)
        return None if targets is None else {(*target, step) for target in targets}
    if isinstance(node, ast.Pipe):
        left, right = _navigation(node.left), _navigation(node.right)
        return None if left is None or right is None else {a + b for a in left for b in right}
    if isinstance(node, ast.Binary) and node.op == "//":
        left, right = _navigation(node.left), _navigation(node.right)
        return None if left is None or right is None else left | right
    return None


class _Reads(msgspec.Struct, frozen=True):
    bindings: bool

    def of(self, node: ast.Node, bound: _Names) -> set[Pattern] | None:
        """`bound` names the variables bound (by `as`) to values this analysis already keeps whole."""
        navigation = _navigation(node)
        if navigation is not None:
            return navigation
        if isinstance(node, _CONSTANTS):
            return set()
        if isinstance(node, ast.Var):
            return set() if node.name in bound else None
        if isinstance(node, _READS_ALL):
            return set(_WHOLE_INPUT)
        if isinstance(node, ast.String):
            return self.union(bound, *(part for part in node.parts if not isinstance(part, str)))
        if isinstance(node, ast.Pipe):
            return self.pipe(node.left, node.right, bound)
        if isinstance(node, ast.Comma):
            return self.union(bound, node.left, node.right)
        if isinstance(node, ast.Binary):
            return None if node.op in ASSIGNMENT_OPERATORS else self.union(bound, node.left, node.right)
        if isinstance(node, ast.Neg):
            return self.of(node.operand, bound)
        if isinstance(node, ast.Collect):
            return set() if node.body is None else self.of(node.body, bound)
        if isinstance(node, ast.Index):
            return self.union(bound, node.target, node.key)
        if isinstance(node, ast.Iterate):
            return self.of(node.target, bound)
        if isinstance(node, ast.Slice):
            return self.union(bound, *(part for part in (node.target, node.start, node.end) if part is not None))
        if isinstance(node, ast.Try):
            # the handler sees the error, not the input; error messages only show values read by the body
            if node.handler is not None and not _closed(node.handler, bound):
                return None
            return self.of(node.body, bound)
        if isinstance(node, ast.ObjectCons):
            parts: list[ast.Node] = []
            for entry in node.entries:
                parts.append(entry.key)
                parts.append(entry.value if entry.value is not None else ast.Index(ast.Identity(), entry.key))
            return self.union(bound, *parts)
        if isinstance(node, ast.If):
            branches = [node.cond, node.then, *(part for pair in node.elifs for part in pair)]
            return self.union(bound, *branches, node.otherwise if node.otherwise is not None else ast.Identity())
        if isinstance(node, ast.Bind) and self.bindings:
            # `source as $x | body`: $x holds source's outputs, which source's reads keep whole
            names = _pattern_names(node.patterns)
            source = self.of(node.source, bound)
            if names is None or source is None:
                return None
            body = self.of(node.body, bound | names)
            return None if body is None else source | body
        if isinstance(node, ast.Call):
            signature = node.signature
            if signature == "empty/0":
                return set()
            if signature in _FIRST_ARG:
                return self.of(node.args[0], bound)
            if signature == "limit/2":
                return self.union(bound, *node.args)
            if signature in _GENERATOR_THEN_CONDITION:
                return self.pipe(node.args[0], node.args[1], bound)
            # any other builtin is a function of its whole input (its arguments too see only that input)
            return set(_WHOLE_INPUT) if all(_closed(arg, bound) for arg in node.args) else None
        return None  # unbound variables, definitions, reduce, foreach, label/break

    def pipe(self, left: ast.Node, right: ast.Node, bound: _Names) -> set[Pattern] | None:
        """Reads of `left | right`: through a navigation, right's reads continue below each position left
        outputs; a closed right side sees only left's outputs."""
        positions = _navigation(left)
        if positions is None:
            # left computes new values (or outputs whole subtrees it already reads): right sees only those
            return self.of(left, bound) if _closed(right, bound) else None
        after = self.of(right, bound)
        if after is None:
            # right is beyond this analysis but sees only the values at left's positions: keep those whole
            return positions if _closed(right, bound) else None
        return {position + rest for position in positions for rest in (after or {()})}

    def union(self, bound: _Names, *nodes: ast.Node) -> set[Pattern] | None:
        out: set[Pattern] = set()
        for node in nodes:
            found = self.of(node, bound)
            if found is None:
                return None
            out |= found
        return out


def _pattern_names(patterns: tuple[ast.Pattern, ...]) -> _Names | None:
    """Every variable a destructuring binds, or None when a key is computed (`(expr): $x`)."""
    names: set[str] = set()
    stack: list[ast.Pattern] = list(patterns)
    while stack:
        pattern = stack.pop()
        if isinstance(pattern, ast.VarPattern):
            names.add(pattern.name)
        elif isinstance(pattern, ast.ArrayPattern):
            stack.extend(pattern.elements)
        else:
            for entry in pattern.entries:
                if not (isinstance(entry.key, ast.String) and entry.key.constant is not None) and entry.var is None:
                    return None
                if entry.var is not None:
                    names.add(entry.var)
                if entry.pattern is not None:
                    stack.append(entry.pattern)
    return frozenset(names)


_OPEN: Final = (ast.VarNoCopy, ast.Bind, ast.Reduce, ast.Foreach, ast.FuncDefine, ast.Label, ast.Break)
_VARIABLES: Final = (ast.Var, ast.VarNoCopy)


def _closed(node: ast.Node, bound: _Names) -> bool:
    """node sees nothing but its own input (and variables whose values are already kept whole): either it
    mentions no variable at all, or it has no bindings, definitions or labels and only variables in `bound`."""
    no_variables = True
    simple = True
    stack: list[object] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, _VARIABLES):
            no_variables = False
        if isinstance(item, _OPEN) or (isinstance(item, ast.Var) and item.name not in bound):
            simple = False
        if not (no_variables or simple):
            return False
        if isinstance(item, tuple):
            stack.extend(item)
        else:
            stack.extend(ast.fields_of(item))
    return True
