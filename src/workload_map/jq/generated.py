"""When a batch of expressions runs as generated code (`jq/codegen.py`), and the two doors the resolve layer uses:
`evaluate_batch` (a whole batch) and `generated_functions` (a function per expression, for the status plan).

A process evaluates a batch the current way (`Document.evaluate_many`) `GENERATE_AFTER` times before it builds the
batch's program, so a command that reads one object of a definition never builds one, and then never imports the
generator either: it is imported here, by the first batch worth generating (the module is ~2.5 million
instructions of a `describe -f`; issue 19: start-up). Before that, the expressions of a catalog definition run
the programs generated for them when the catalog's blob was built (`jq.stored`), so those first objects are read
by generated code too, without the closure compiler.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from workload_map.jq.finish import BAIL
from workload_map.jq.policy import EvaluationPolicy
from workload_map.jq.stored import programs as stored_programs

if TYPE_CHECKING:
    from workload_map.jq.document import Document
    from workload_map.jq.errors import JqError

__all__ = ["GENERATE_AFTER", "evaluate_batch", "generated_functions"]

GENERATE_AFTER = 1
"""How many times a process evaluates a batch the current way before it generates the batch's program. Building
and compiling a program costs about a hundred evaluations of it (4-8 ms for a definition's group), so a command
that reads one object of a definition (`describe -f FILE`, `describe TYPE/NAME`) is faster without it, and one that
reads many (`get`, the informer's views) generates it at the second object. Tests set it to 0."""

# the generator, once a batch was worth generating (held here: an import statement on every evaluation would cost
# more than a `wmap get` row's check of its batch)
_codegen: ModuleType | None = None


def _generator() -> ModuleType:
    """The generator module, imported by the first batch worth generating."""
    global _codegen
    from workload_map.jq import codegen

    _codegen = codegen
    return codegen


_MAX_SEEN: Final = 4096
_seen: dict[tuple[str, ...], int] = {}


def _worth_generating(batch: tuple[str, ...]) -> bool:
    """Whether this process evaluated `batch` the current way `GENERATE_AFTER` times already (if not, this call
    is counted as one more)."""
    count = _seen.get(batch, 0)
    if count >= GENERATE_AFTER:
        return True
    if len(_seen) >= _MAX_SEEN:  # bounded: many user definitions may pass through a long-lived process
        _seen.clear()
    _seen[batch] = count + 1
    return False


def _refuses(policy: EvaluationPolicy, exprs: Sequence[str]) -> bool:
    """Whether `policy` refuses any of `exprs` (`policy.refusal` of each in turn, up to the first refusal). Asked
    on every evaluation of a batch, never remembered: a recorder's answer changes within a command (the CLI's
    refuses everything once a definition was stopped or the budget is spent). For the policy class itself,
    whose `refusal` is its recorder's `refuse`, that method is looked up once per batch rather than once per
    expression (17 expressions a Deployment in `wmap get`, issue 19); the same calls, in the same order."""
    if type(policy) is not EvaluationPolicy:  # a subclass may answer `refusal` otherwise
        return any(policy.refusal(expr) is not None for expr in exprs)
    refuse = getattr(policy.stops, "refuse", None)
    if refuse is None:
        return False
    for expr in exprs:  # noqa: SIM110 (a loop: no generator frame per batch)
        if refuse(expr) is not None:
            return True
    return False


def generated_functions(
    document: Document, exprs: tuple[str, ...]
) -> tuple[Callable[[Any, dict[int, Any]], Any] | None, ...] | None:
    """The per-expression generated functions of `exprs` for `document` (each called with the document's object
    in place and one memo dict per evaluation: `f(document.obj, memo)`, outputs or `BAIL`), under the conditions
    `evaluate_batch` runs generated code under; None when it would not (another policy, a refused expression, a
    batch not yet evaluated `GENERATE_AFTER` times): then evaluate the batch with `evaluate_batch`."""
    policy = document.policy
    if policy.mode != "inprocess" or (policy.stops is not None and _refuses(policy, exprs)):
        return None
    if not _worth_generating((_LAZY, *exprs)):
        return None
    functions: tuple[Callable[[Any, dict[int, Any]], Any] | None, ...] = (
        (_codegen or _generator()).expression_functions(exprs).functions
    )
    return functions


_LAZY: Final = "\x00lazy"  # the counting key of a lazy batch: no jq expression starts with a NUL


def evaluate_batch(document: Document, exprs: Sequence[str]) -> list[list[Any] | JqError]:
    """`document.evaluate_many(exprs)` with the generated program: each expression it answers on the document's
    object in place, the rest (not covered, bailed) through `evaluate_many`. The document's object must be plain
    JSON as the resolve layer keeps it (a dict a decoder made, or one `_json.shareable` accepted, or a copy); under
    a policy other than "inprocess", or one that refuses an expression, everything takes `evaluate_many`."""
    policy = document.policy
    batch = tuple(exprs)
    if policy.mode != "inprocess" or (policy.stops is not None and _refuses(policy, batch)):
        return document.evaluate_many(batch)
    if not _worth_generating(batch):
        return _with_stored(document, batch)
    found: list[Any] = (_codegen or _generator()).batch_program(batch).run(document.obj)
    return _rest_evaluated(document, batch, found)


def _with_stored(document: Document, batch: tuple[str, ...]) -> list[list[Any] | JqError]:
    """`document.evaluate_many(batch)` with the stored programs (`jq.stored`) of the expressions that have one:
    each answers on the document's object in place, with a memo of its own; the rest (none stored, bailed) go to
    `evaluate_many`."""
    programs = stored_programs(batch)
    if programs is None:
        return document.evaluate_many(batch)
    obj = document.obj
    found: list[Any] = [BAIL if program is None else program(obj, {}) for program in programs]
    return _rest_evaluated(document, batch, found)


def _rest_evaluated(document: Document, batch: Sequence[str], found: list[Any]) -> list[list[Any] | JqError]:
    """`found` with each expression left unanswered (`BAIL`) evaluated the current way, in one `evaluate_many`."""
    rest = [index for index, result in enumerate(found) if result is BAIL]
    if rest:
        for index, result in zip(rest, document.evaluate_many([batch[i] for i in rest]), strict=True):
            found[index] = result
    return found
