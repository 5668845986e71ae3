"""Definitions already known to have no validation errors, so resolving through them validates nothing.

The built-in catalog validates its definitions when it builds its precompiled blob (`catalog.precompiled`, whose
key covers the validator's own source files) and marks the objects it decodes from that blob; `resolve.Workload`
asks `is_validated` before it validates a definition. The validation layer (and the jq safety checks it runs) is
then never imported by a command that resolves only catalog workloads (issue 19: start-up).

It sits in the model, the one layer both the catalog and the resolver import. The objects are held, so an id is
never reused while its mark lives; the catalog's objects live as long as the process anyway. A changed copy
(`msgspec.structs.replace`) is another object, validated anew.
"""

from __future__ import annotations

from _thread import allocate_lock
from collections.abc import Iterable

from workload_map.model.types import Karta

_VALIDATED: dict[int, Karta] = {}
_LOCK = allocate_lock()  # what threading.Lock() is, without importing threading (~0.6 ms of a start; issue 19)


def mark_validated(definitions: Iterable[Karta]) -> None:
    """Record that these very objects were validated by this package's validator and had no error findings."""
    with _LOCK:
        for definition in definitions:
            _VALIDATED[id(definition)] = definition


def is_validated(definition: Karta) -> bool:
    """Whether this very object was recorded by `mark_validated`."""
    return _VALIDATED.get(id(definition)) is definition
