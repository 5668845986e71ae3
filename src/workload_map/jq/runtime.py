"""What generated jq code (`jq/codegen.py`) calls and reads when it runs: the helpers and constants every program
gets as its globals (`GLOBALS`), the step budget of in-process evaluation and the output cap of every evaluation.

Apart from the generator so that a program generated earlier (one stored with the built-in catalog:
`jq/stored.py`) runs without the generator, the parser or the closure compiler being imported: those are most of
what a `describe -f` imported for jq (~5 million instructions for `jq.compiler` alone; issue 19: start-up).
"""

from __future__ import annotations

from typing import Any, Final

from workload_map.jq.finish import BAIL
from workload_map.jq.finish import Bail as _Bail
from workload_map.jq.finish import finish as _finish

__all__ = ["GLOBALS", "MAX_RESULTS", "SAFE", "STEPS", "STEP_BUDGET", "ascii_text"]

MAX_RESULTS: Final = 1000
"""Outputs per evaluation; reaching it is an error, as upstream (`query results exceed the allowed number 1000`)."""

STEP_BUDGET: Final = 1_000_000
"""Steps one evaluation by the closures (`jq.compiler`) may take (elements iterated, reduction steps, characters
and elements built)."""

STEPS: Final = STEP_BUDGET // 10
"""Steps generated code counts before it bails (a tenth of the closures' budget: the closures then stop the
evaluation exactly as they would have)."""

SAFE: Final = 2**53
"""Ints at or past it in size may read differently normalised (`convert.normalize`): generated code bails on them."""


def ascii_text(text: str, upper: bool) -> str:
    """`ascii_upcase` / `ascii_downcase` of a string: only the ASCII letters change case."""
    if upper:
        return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in text)
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


_STR: Final = frozenset({str})


def _str_keys(obj: dict[Any, Any]) -> bool:
    # the key types gathered in C: half the time of a generator over the keys (a str subclass is not `str`)
    return set(map(type, obj)) <= _STR


def _sorted_values(obj: dict[Any, Any]) -> list[Any]:
    """A dict's values in gojq's order (sorted keys), when sorting the keys in place sorts them as the normalised
    form does: ASCII string keys only (the byte order of UTF-8 is not Python's order for every string)."""
    keys = list(obj)
    if not all(type(key) is str and key.isascii() for key in keys):
        raise _Bail
    keys.sort()
    return [obj[key] for key in keys]


def _key(value: Any) -> tuple[Any, ...]:
    """jq's order of the scalars the generated comparisons accept: null < false < true < numbers < strings."""
    if value is None:
        return (0,)
    kind = type(value)
    if kind is bool:
        return (2,) if value else (1,)
    if kind is int:
        return (3, value)
    return (4, value)


_PLAIN: Final = frozenset({type(None), bool, int, str, list, dict})


def _equal(a: Any, b: Any) -> bool:
    """`a == b` as the engine compares, where the normalised form cannot differ; else bails."""
    kind = type(a)
    if kind is type(b):
        if kind is str or kind is bool or a is None:
            return bool(a == b)
        if kind is int and -SAFE < a < SAFE and -SAFE < b < SAFE:
            return bool(a == b)
        raise _Bail  # containers (tuples, int keys, floats inside) and floats: the current path decides
    if kind in _PLAIN and type(b) in _PLAIN:
        return False  # different JSON types are never equal (a float is not in _PLAIN: 1.0 == 1)
    raise _Bail


def _extreme(values: Any, is_min: bool) -> Any:
    """`min` / `max` of an array of scalars that read the same normalised (else bails); null when empty."""
    if type(values) is not list:
        raise _Bail
    ints = strs = True  # one JSON type throughout: Python's own order of the values is jq's, no key needed
    for value in values:
        kind = type(value)
        if kind is int:
            if not -SAFE < value < SAFE:
                raise _Bail
            strs = False
        elif kind is str:
            ints = False
        elif value is None or kind is bool:
            ints = strs = False
        else:
            raise _Bail
    if not values:
        return None
    # equal keys are equal values here, so which of several equal elements is given does not show
    if ints or strs:  # the key's call and tuple per element cost more than the rest of `[a, b] | min`
        return min(values) if is_min else max(values)
    return min(values, key=_key) if is_min else max(values, key=_key)


def _ascii_case(value: Any, upper: bool) -> str:
    if type(value) is not str:
        raise _Bail
    return ascii_text(value, upper)


GLOBALS: Final[dict[str, Any]] = {
    "__builtins__": {
        "Exception": Exception,
        "abs": abs,
        "bool": bool,
        "dict": dict,
        "float": float,
        "int": int,
        "len": len,
        "list": list,
        "str": str,
        "type": type,
    },
    "B": _Bail,
    "BAIL": BAIL,
    "SK": _str_keys,
    "SV": _sorted_values,
    "KEY": _key,
    "EQ": _equal,
    "EXT": _extreme,
    "FIN": _finish,
    "ASC": _ascii_case,
    "S": SAFE,
    "L": STEPS,
}
