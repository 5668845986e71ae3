"""What a generated program (`jq/codegen.py`) hands back, for the modules that read its answers without building
one: `BAIL` (the result of an expression it could not answer), `Bail` (what the generated code and these helpers
raise to give it) and the finishing of its outputs (`finish`, `finish_read`).

Kept apart from the generator so that a reader of generated answers (the resolve layer's status plan, the batch
front in `jq/generated.py`) imports this much only: a command that evaluates each batch once (`describe -f FILE`)
never builds a program, and the generator module is ~2.5 million instructions to import (issue 19: start-up).
"""

from __future__ import annotations

from typing import Any, Final

from workload_map.errors import WorkloadMapError
from workload_map.jq import convert

__all__ = ["BAIL", "SAFE", "Bail", "finish", "finish_conditions", "finish_read", "numbers_only"]

SAFE: Final = 2**53  # the ints a double holds exactly: past them the normalised form may read differently


class Bail(WorkloadMapError):  # noqa: N818 - not an error: "take the current path for this expression"
    """The generated code met something only the current path answers exactly."""


class _Bailed:
    __slots__ = ()

    def __repr__(self) -> str:
        return "BAIL"


BAIL: Final = _Bailed()
"""A generated program's result for an expression it could not answer (evaluate it the current way)."""


def finish(outputs: list[Any]) -> list[Any]:
    """The outputs as the current path gives them: scalars as they are, containers normalised (sorted keys,
    integral floats as ints); anything the normalised form might read differently bails."""
    for position, value in enumerate(outputs):
        kind = type(value)
        if kind is str or kind is bool or value is None:
            continue
        if kind is int:
            if -SAFE < value < SAFE:
                continue
            raise Bail
        if kind is list and numbers_only(value):
            outputs[position] = list(value)  # what normalising gives, without the encode and decode
            continue
        if kind is list or kind is dict:
            outputs[position] = convert.normalize(value)
            continue
        raise Bail
    return outputs


def finish_read(outputs: list[Any]) -> list[Any]:
    """`finish` for a reader that ignores a first output which is a list holding an object or an array (the
    status reason's field reads: such a value is no fact): that list is handed back as it is, not normalised,
    once the encoder that normalising starts with takes it (then normalising it succeeds, and gives a list
    holding containers again: an object stays an object, an array an array). A single output that is a list of
    safe ints, booleans and nulls is handed back as it is too, not copied (`finish` would give an equal copy; this
    reader never keeps nor changes it). Whatever those checks refuse, and every other output, is finished by
    `finish`, so this raises exactly where `finish` does."""
    first = outputs[0] if outputs else None
    if type(first) is list:
        if len(outputs) == 1 and numbers_only(first):
            return outputs  # the usual read (`[.spec.replicatedJobs[]?.replicas]`): read, never kept: no copy
        for item in first:  # a loop, not any(): a list of scalars (the usual case) costs a few type checks
            kind = type(item)
            if kind is dict or kind is list:
                if convert.encodes(first):
                    return [first, *finish(outputs[1:])]
                break
    return finish(outputs)


def finish_conditions(outputs: list[Any]) -> list[Any]:
    """`finish` for the status conditions' reader (`resolve.status_plan`), which reads the strings of a list's
    objects and checks every other value it reads: outputs that are each null or a list the encoder normalising
    starts with takes are handed back as they are (then normalising each succeeds, and keeps every string as it
    is: the encoder refuses a lone surrogate); anything else is finished by `finish`, so this raises exactly
    where `finish` does."""
    for value in outputs:
        if value is not None and (type(value) is not list or not convert.encodes(value)):
            return finish(outputs)
    return outputs


def numbers_only(items: list[Any]) -> bool:
    """Whether every item is a safe int, a boolean or null (`[.spec.replicatedJobs[].replicas]`): normalised, such
    a list is an equal list of the same items. Strings are left to `convert.normalize`, which decides what a string
    JSON cannot carry (a lone surrogate) does."""
    for item in items:
        if item is None or item is True or item is False:
            continue
        if type(item) is not int or not -SAFE < item < SAFE:
            return False
    return True
