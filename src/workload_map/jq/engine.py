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

Also here: `compile_expression`, the static facts of an expression (the fast path from `fastpath`, the closures
from `compiler`, and which parts of the input it reads, from `reads.reads`, so `Document` can hand libjq only those).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec

from workload_map._regex import LazyPattern
from workload_map.jq import facts
from workload_map.jq.convert import Roots, roots_key
from workload_map.jq.errors import JqCompileError, JqError, JqLimitError, JqParseError, JqRuntimeError
from workload_map.jq.runtime import MAX_RESULTS

__all__ = [
    "MAX_RESULTS",
    "Compiled",
    "Kind",
    "compile_expression",
    "limit_error",
    "run_batch",
    "run_one",
]


Kind = Literal["values", "paths"]
if TYPE_CHECKING:  # annotations only (a `Callable[...]` alias is ~0.1 million instructions at import; issue 19)
    from workload_map.jq import compiler
    from workload_map.jq.ast import Node

    FastEvaluator = Callable[[Any], list[Any]]

_PROGRAM_CACHE_SIZE: Final = 4096


class Compiled(msgspec.Struct, frozen=True):
    """What is known about one expression before it meets an object.

    `fast` is a pure-Python evaluator for plain paths (None: libjq runs it); `compiled` the expression compiled to
    Python closures (`compiler.compile_closure`; None: not covered), used in process; `roots` the key paths it can
    read (None: the whole object); `combinable`: it parses as one complete query without comments, so it may share
    one libjq program with other expressions; `raw` the fast path's evaluator for the caller's object as it stands
    (`fastpath.compile_fast_raw`; None: not a plain path, or not one it reads in place).
    """

    expression: str
    fast: FastEvaluator | None
    roots: Roots | None
    combinable: bool
    compiled: compiler.Closure | None = None
    raw: FastEvaluator | None = None


def _static(expr: str) -> tuple[FastEvaluator | None, Roots | None, bool]:
    """The fast path, the parts of the input `expr` can read, and whether it parses as one complete query
    (then it can be wrapped into a combined program without compiling it alone first)."""
    # the jq front end (parser, fast path, read analysis: with the syntax tree's classes, ~7 million instructions)
    # is imported by the first expression compiled: a describe of a catalog workload runs its stored programs
    # (`jq.stored`) and compiles none (issue 19: start-up)
    from workload_map.jq import fastpath, parser

    fast = fastpath.compile_fast(expr)
    try:
        tree = parser.parse(expr)
    except (JqError, RecursionError):
        return fast, None, False  # libjq reports the problem when the expression runs
    known = facts.roots(expr)  # worked out when the catalog's blob was built (jq.facts)
    return fast, _roots_of(tree) if known is None else known[0], True


def _roots_of(tree: Node) -> Roots | None:
    from workload_map.jq.reads import reads

    try:
        return roots_key(reads(tree))
    except (JqError, RecursionError):
        return None


def expression_facts(expr: str) -> facts.Stored | None:
    """What `jq.facts` keeps of `expr` (its roots, whether it builds nesting), worked out from its tree as a run
    works them out; None when it does not parse or an analysis gives up on it (then nothing is kept)."""
    from workload_map.jq import compiler, parser  # only when a catalog blob is built

    try:
        tree = parser.parse(expr)
        builds_nesting = compiler.builds_nesting(tree)
    except (JqError, RecursionError):
        return None
    return facts.stored(_roots_of(tree), builds_nesting, compile_expression(expr).raw is not None)


@functools.lru_cache(maxsize=_PROGRAM_CACHE_SIZE)
def compile_expression(expr: str) -> Compiled:
    """The cached static facts of `expr` (no libjq compile: that happens where the expression runs)."""
    fast, roots, parses = _static(expr)
    compiled = raw = None
    if fast is not None:
        from workload_map.jq.fastpath import compile_fast_raw  # loaded by `_static`

        raw = compile_fast_raw(expr)
    elif parses:
        # imported by the first expression that is neither a plain path nor answered by a stored program
        # (`jq.stored`): a `describe -f` of a catalog workload never imports the compiler (issue 19: start-up)
        from workload_map.jq import compiler

        compiled = compiler.compile_closure(expr)
    return Compiled(expr, fast, roots, combinable=parses and "#" not in expr, compiled=compiled, raw=raw)


# --------------------------------------------------------------------------------------------------- libjq


_ERROR_LINE = LazyPattern(r"^jq: error: (.*?)(?: at <top-level>, line (\d+), column (\d+):?)?$")
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
    import jq as _libjq  # the binding loads libjq: only for an expression that runs there (issue 19: start-up)

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
