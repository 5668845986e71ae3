"""libjq-backed evaluation: compile cache, one program for many expressions, error classes, the output cap.

Everything here works on JSON *text* already normalised by `convert` (sorted keys, integral numbers as ints): the
PyPI `jq` binding parses its input from text anyway (`input_value` is `json.dumps` + libjq's parser), so the text is
made once per object and reused by every program. The `Document` (document.py) decides which text to hand over;
the worker process (worker.py) calls `run_batch` on its side of the pipe.

Programs are compiled once per process (`functools.lru_cache` keyed by the program text; compile failures are
cached too). Many expressions on one object run as ONE libjq program, so the input is parsed once:

    (try ((E0
    ) | [0, .]) catch [0, null, .]), [0],
    (try ((E1
    ) | [1, .]) catch [1, null, .]), [1], ...

Only expressions our parser reads as one complete query are combined (so none can change how its neighbours
parse); if the combined program does not compile, each is compiled alone to find and report the broken ones. The
stream tags every output with its expression, so outputs are counted in Python as they arrive and a runaway
generator is cut off at the cap (jq's own `limit` costs more than typical expressions); `try ... catch` keeps an
error in one expression from touching the others. Expressions with a `#` comment are evaluated on their own (a
comment ending in a backslash continues onto the next line in jq 1.8 and would swallow the wrapper).

Also here: `compile_expression`, the static facts of an expression (the fast path from `fastpath`, and which parts
of the input it reads, so `Document` can hand libjq only those; see `_reads`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import jq as _libjq

from workload_map.jq import ast, fastpath, parser, safety
from workload_map.jq.convert import Roots, roots_key
from workload_map.jq.errors import JqCompileError, JqError, JqLimitError, JqParseError, JqRuntimeError

__all__ = [
    "MAX_RESULTS",
    "Compiled",
    "Kind",
    "compile_expression",
    "limit_error",
    "run_batch",
    "run_one",
]

MAX_RESULTS: Final = 1000
"""Outputs per evaluation; reaching it is an error, as upstream (`query results exceed the allowed number 1000`)."""

Kind = Literal["values", "paths"]
FastEvaluator = Callable[[Any], list[Any]]

_PROGRAM_CACHE_SIZE: Final = 4096


@dataclass(frozen=True)
class Compiled:
    """What is known about one expression before it meets an object.

    `fast` is a pure-Python evaluator for plain paths (None: libjq runs it); `roots` the key paths it can read
    (None: the whole object); `combinable`: it parses as one complete query without comments, so it may share one
    libjq program with other expressions.
    """

    expression: str
    fast: FastEvaluator | None
    roots: Roots | None
    combinable: bool


_ROOT_DEPTH: Final = 64  # follow key paths as deep as they go (up to the first `.[]`, index or dynamic key)


def _static(expr: str) -> tuple[FastEvaluator | None, Roots | None, bool]:
    """The fast path, the parts of the input `expr` can read, and whether it parses as one complete query
    (then it can be wrapped into a combined program without compiling it alone first)."""
    fast = fastpath.compile_fast(expr)
    try:
        tree = parser.parse(expr)
    except (JqError, RecursionError):
        return fast, None, False  # libjq reports the problem when the expression runs
    try:
        patterns = _reads(tree)
        roots = roots_key(patterns if patterns is not None else safety.referenced_roots(tree, _ROOT_DEPTH))
    except (JqError, RecursionError):
        roots = None
    return fast, roots, True


# --- which parts of its input an expression reads, through iterations ------------------------------------------
#
# `safety.referenced_roots` stops at the first `.[]`; a JobSet matcher such as
# `[.spec.replicatedJobs[]? | .replicas // 1] | add` then needs all of `spec.replicatedJobs`, pod templates
# included. `_reads` follows iterations and constant indexes (None = every element or value, an int = that
# index; see `convert.prune`), so libjq is given only what the expression looks at. It answers for a closed subset
# and None for anything else (variables, definitions, reduce/foreach, label, assignments), where the caller falls
# back to `referenced_roots`. Soundness: evaluating `node` on `prune(x, _reads(node))` gives the same outputs and
# errors as on `x`; a pattern's end keeps its whole subtree, and prune keeps types, lengths and key sets along
# the way (so truthiness, iteration counts and navigation errors do not change). Checked by the differential
# tests in tests/unit/test_jq_engine.py and test_jq_document.py.

_Pattern = tuple[str | int | None, ...]
_Names = frozenset[str]
_WHOLE_INPUT: Final[frozenset[_Pattern]] = frozenset({()})
_FIRST_ARG: Final = frozenset({"first/1", "last/1", "isempty/1", "error/1"})
_GENERATOR_THEN_CONDITION: Final = frozenset({"any/2", "all/2"})
_NOTHING: Final[_Names] = frozenset()


def _navigation(node: ast.Node) -> set[_Pattern] | None:
    """The input positions whose values `node` outputs (unchanged), when it only navigates: `.a.b`, `.a[]`,
    `.a[0]`, `?`, and pipes and `//` of navigations."""
    if isinstance(node, ast.Identity):
        return {()}
    if isinstance(node, ast.Try) and node.handler is None:
        return _navigation(node.body)
    if isinstance(node, ast.Index | ast.Iterate):
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


def _reads(node: ast.Node, bound: _Names = _NOTHING) -> set[_Pattern] | None:
    """The input positions `node` may read (each with its whole subtree), or None when unsure.

    `bound` names the variables bound (by `as`) to values this analysis already keeps whole.
    """
    navigation = _navigation(node)
    if navigation is not None:
        return navigation
    if isinstance(node, ast.Literal | ast.Number | ast.Loc):
        return set()
    if isinstance(node, ast.Var):
        return set() if node.name in bound else None
    if isinstance(node, ast.Format | ast.RecurseAll):
        return set(_WHOLE_INPUT)
    if isinstance(node, ast.String):
        return _union(bound, *(part for part in node.parts if not isinstance(part, str)))
    if isinstance(node, ast.Pipe):
        return _pipe(node.left, node.right, bound)
    if isinstance(node, ast.Comma):
        return _union(bound, node.left, node.right)
    if isinstance(node, ast.Binary):
        return None if node.op in parser.ASSIGNMENT_OPERATORS else _union(bound, node.left, node.right)
    if isinstance(node, ast.Neg):
        return _reads(node.operand, bound)
    if isinstance(node, ast.Collect):
        return set() if node.body is None else _reads(node.body, bound)
    if isinstance(node, ast.Index):
        return _union(bound, node.target, node.key)
    if isinstance(node, ast.Iterate):
        return _reads(node.target, bound)
    if isinstance(node, ast.Slice):
        return _union(bound, *(part for part in (node.target, node.start, node.end) if part is not None))
    if isinstance(node, ast.Try):
        # the handler sees the error, not the input; error messages only show values read by the body
        if node.handler is not None and not _closed(node.handler, bound):
            return None
        return _reads(node.body, bound)
    if isinstance(node, ast.ObjectCons):
        parts: list[ast.Node] = []
        for entry in node.entries:
            parts.append(entry.key)
            parts.append(entry.value if entry.value is not None else ast.Index(ast.Identity(), entry.key))
        return _union(bound, *parts)
    if isinstance(node, ast.If):
        branches = [node.cond, node.then, *(part for pair in node.elifs for part in pair)]
        return _union(bound, *branches, node.otherwise if node.otherwise is not None else ast.Identity())
    if isinstance(node, ast.Bind):
        # `source as $x | body`: $x holds source's outputs, which source's reads keep whole
        names = _pattern_names(node.patterns)
        source = _reads(node.source, bound)
        if names is None or source is None:
            return None
        body = _reads(node.body, bound | names)
        return None if body is None else source | body
    if isinstance(node, ast.Call):
        signature = node.signature
        if signature == "empty/0":
            return set()
        if signature in _FIRST_ARG:
            return _reads(node.args[0], bound)
        if signature == "limit/2":
            return _union(bound, *node.args)
        if signature in _GENERATOR_THEN_CONDITION:
            return _pipe(node.args[0], node.args[1], bound)
        # any other builtin is a function of its whole input (its arguments too see only that input)
        return set(_WHOLE_INPUT) if all(_closed(arg, bound) for arg in node.args) else None
    return None  # unbound variables, definitions, reduce, foreach, label/break


def _pipe(left: ast.Node, right: ast.Node, bound: _Names) -> set[_Pattern] | None:
    """Reads of `left | right`: through a navigation, right's reads continue below each position left outputs."""
    after = _reads(right, bound)
    if after is None:
        return None
    positions = _navigation(left)
    if positions is None:
        # left computes new values (or outputs whole subtrees it already reads): right sees only those
        return _reads(left, bound) if _closed(right, bound) else None
    return {position + rest for position in positions for rest in (after or {()})}


def _union(bound: _Names, *nodes: ast.Node) -> set[_Pattern] | None:
    out: set[_Pattern] = set()
    for node in nodes:
        found = _reads(node, bound)
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


def _closed(node: ast.Node, bound: _Names) -> bool:
    """No outside variables, bindings, definitions or labels in node: it sees nothing but its own input (and
    variables whose values are already kept whole)."""
    stack: list[object] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, _OPEN) or (isinstance(item, ast.Var) and item.name not in bound):
            return False
        if isinstance(item, tuple):
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
    return True


@functools.lru_cache(maxsize=_PROGRAM_CACHE_SIZE)
def compile_expression(expr: str) -> Compiled:
    """The cached static facts of `expr` (no libjq compile: that happens where the expression runs)."""
    fast, roots, parses = _static(expr)
    return Compiled(expr, fast, roots, combinable=parses and "#" not in expr)


# --------------------------------------------------------------------------------------------------- libjq


_ERROR_LINE = re.compile(r"^jq: error: (.*?)(?: at <top-level>, line (\d+), column (\d+):?)?$")
_PARSE_MARKERS: Final = ("syntax error", "Invalid", "unterminated", "Unterminated")


def _compile_failure(expr: str, raw: str) -> JqError:
    """libjq's compile report as one line, classified: grammar problems parse errors, the rest compile errors."""
    problems: list[str] = []
    for line in raw.splitlines():
        match = _ERROR_LINE.match(line)
        if match:
            text, row, column = match.groups()
            problems.append(f"{text} (line {row}, column {column})" if row else text)
    if not problems:
        problems = raw.strip().splitlines()[:1] or ["invalid program"]
    message = "; ".join(problems)
    if any(marker in message for marker in _PARSE_MARKERS):
        return JqParseError(expr, message)
    return JqCompileError(expr, message)


@functools.lru_cache(maxsize=_PROGRAM_CACHE_SIZE)
def _program(text: str) -> Any:
    """libjq's compiled program for `text`, or the JqError it fails with (both cached)."""
    try:
        return _libjq.compile(text)
    except ValueError as exc:
        return _compile_failure(text, str(exc))


def _path_program(expr: str) -> Any:
    # the blank line ends a trailing comment even when it ends with a backslash (jq 1.8 comment continuation)
    return _program(f"path({expr}\n\n)")


def _compiled_program(expr: str, kind: Kind) -> Any:
    """The program running `expr` as `kind`; raises the expression's own parse or compile error."""
    program = _program(expr)
    if isinstance(program, JqError):
        raise program
    if kind == "values":
        return program
    program = _path_program(expr)
    if isinstance(program, JqError):  # valid alone but not inside path(...): should not happen with libjq 1.8
        raise JqCompileError(expr, f"cannot be used as a path: {program.message}")
    return program


def limit_error(expr: str, max_results: int) -> JqLimitError:
    return JqLimitError(expr, f"query results exceed the allowed number {max_results}")


def _runtime_error(expr: str, message: str, kind: Kind) -> JqRuntimeError:
    if kind == "paths" and message.startswith("Invalid path expression"):
        detail = message if len(message) <= 120 else message[:117] + "..."
        return JqRuntimeError(
            expr,
            "not a path expression: it computes new values (to_entries, map, keys, arithmetic, constants, ...) "
            f"instead of selecting parts of the object, so nothing can be written through it ({detail})",
        )
    return JqRuntimeError(expr, message)


def run_one(expr: str, text: str, max_results: int = MAX_RESULTS, kind: Kind = "values") -> list[Any]:
    """All outputs of `expr` (or of `path(expr)`) on the JSON `text`, streamed and capped at `max_results`."""
    program = _compiled_program(expr, kind)
    outputs: list[Any] = []
    try:
        for value in program.input_text(text):
            outputs.append(value)
            if len(outputs) >= max_results:
                raise limit_error(expr, max_results)
    except ValueError as exc:
        raise _runtime_error(expr, str(exc), kind) from None
    return outputs


def _combined_text(exprs: Sequence[str], kind: Kind) -> str:
    parts = []
    for index, expr in enumerate(exprs):
        body = f"({expr}\n)" if kind == "values" else f"path({expr}\n\n)"
        parts.append(f"(try ({body} | [{index}, .]) catch [{index}, null, .]), [{index}]")
    return ",\n".join(parts)


def run_batch(
    exprs: Sequence[str], text: str, max_results: int = MAX_RESULTS, kind: Kind = "values"
) -> list[list[Any] | JqError]:
    """Each expression's outputs (or its error) on one JSON `text`, with the text parsed once where possible.

    Expressions our parser accepts go into one combined program without a libjq compile of their own (a compile
    costs about 2 ms, mostly libjq's builtins, so one program for all is also the cheapest to compile). If the
    combined program does not compile (an undefined function in one of them), each is compiled alone to find and
    report the broken ones, and the rest are combined again.
    """
    results: list[list[Any] | JqError | None] = [None] * len(exprs)
    together = [i for i, expr in enumerate(exprs) if compile_expression(expr).combinable]
    if len(together) > 1 and isinstance(_program(_combined_text([exprs[i] for i in together], kind)), JqError):
        together = [i for i in together if _compiles(exprs[i], kind, results, i)]
    while len(together) > 1:
        # one program for all; an expression that reaches the cap stops the stream, the rest go round again
        together = _run_combined([exprs[i] for i in together], text, max_results, kind, results=results, slots=together)
    for index, expr in enumerate(exprs):
        if results[index] is None:
            try:
                results[index] = run_one(expr, text, max_results, kind)
            except JqError as exc:
                results[index] = exc
    return [result if result is not None else [] for result in results]


def _compiles(expr: str, kind: Kind, results: list[list[Any] | JqError | None], index: int) -> bool:
    try:
        _compiled_program(expr, kind)
    except JqError as exc:
        results[index] = exc
        return False
    return True


def _run_combined(
    exprs: list[str],
    text: str,
    max_results: int,
    kind: Kind,
    *,
    results: list[list[Any] | JqError | None],
    slots: list[int],
) -> list[int]:
    """Fill `results[slots[i]]` from one program streaming every expression's outputs in turn.

    The program emits `[i, value]` per output of expression i, `[i, null, error]` when it fails, and `[i]` when it
    is done, so outputs are counted as they come (no `limit`, which costs more than the expressions) and a runaway
    expression is cut off at the cap. Returns the slots still to run together (after one that reached the cap);
    a slot left None (the program ended early, e.g. `halt`) is run alone by the caller.
    """
    program = _program(_combined_text(exprs, kind))
    if isinstance(program, JqError):
        return []
    outputs: list[list[Any]] = [[] for _ in exprs]
    errors: dict[int, JqError] = {}
    try:
        for item in program.input_text(text):
            index = item[0]
            if len(item) == 2:
                if index not in errors:
                    outputs[index].append(item[1])
                    if len(outputs[index]) >= max_results:
                        results[slots[index]] = limit_error(exprs[index], max_results)
                        return slots[index + 1 :]
            elif len(item) == 3:
                error = item[2]
                errors[index] = _runtime_error(
                    exprs[index], error if isinstance(error, str) else json.dumps(error), kind
                )
            else:
                results[slots[index]] = errors.get(index, outputs[index])
    except ValueError:
        pass  # cannot happen with every expression inside `try`; whatever is unfinished runs alone
    return []
