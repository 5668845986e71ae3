"""Decoding jq outputs into the types a definition field promises (karta-spec §11.2).

Every decoder takes the list of outputs of one path and returns one decoded value per output. Objects and arrays
are the jq outputs themselves, not copies: the jq Document's outputs are never the caller's object (a container
comes from its normalised tree, which nothing changes), so a part may share structure with another part of the
same snapshot but never with the document; a resolution's parts are read-only (the strict `Component` getters and
`to_dict` copy what they hand out). The one exception is an object path read in place (`Snapshot.objects`): its
decoded objects are the document's own, kept in `extract.PlainValues.read` for the request formula only; a reader
is handed their normalised copy. A wrong type raises `DecodeError` naming the output index and the value; the
caller adds the component and the field.
"""

from __future__ import annotations

import math
from typing import Any, Final

from workload_map._jsontype import json_type_phrase
from workload_map._regex import LazyPattern
from workload_map.errors import WorkloadMapError
from workload_map.resolve._json import jq_json
from workload_map.resolve.results import ValueKind

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
_INT32_DIGITS = 10
_DECIMAL = LazyPattern(r"[+-]?[0-9]+\Z")  # what Go's strconv.ParseInt(s, 10, 32) accepts


class DecodeError(WorkloadMapError, ValueError):
    """An output that does not have the type its field promises."""


def show(value: Any, limit: int = 80) -> str:
    """A short JSON rendering of a value for an error message."""
    text = jq_json(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _wrong(index: int, value: Any, wanted: str) -> DecodeError:
    return DecodeError(
        f"failed to convert object at index {index} to type {wanted}: got {json_type_phrase(value)} ({show(value)})"
    )


def decode_string(index: int, value: Any) -> str:
    """A string field: null becomes `""`; anything but a string is an error."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise _wrong(index, value, "string")


def decode_object(index: int, value: Any, wanted: str = "object") -> dict[str, Any]:
    """An object field (pod template, pod spec, metadata, container, resources, affinity): null becomes `{}`."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    raise _wrong(index, value, wanted)


def decode_optional_object(index: int, value: Any) -> dict[str, Any] | None:
    """An optional object of a fragmented spec: null stays None (absent)."""
    if value is None:
        return None
    return decode_object(index, value)


def decode_string_map(index: int, value: Any) -> dict[str, str] | None:
    """Labels or annotations: null or `{}` is None; a non-string value is an error."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _wrong(index, value, "map of strings")
    for key, item in value.items():
        if not isinstance(item, str):
            raise DecodeError(
                f"failed to convert object at index {index} to type map of strings: "
                f"the value of {key!r} is {json_type_phrase(item)} ({show(item)}), not a string"
            )
    return dict(value) if value else None


def decode_object_list(index: int, value: Any, wanted: str = "array of objects") -> list[Any] | None:
    """Containers or resource claims: null or `[]` is None; items must be objects."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise _wrong(index, value, wanted)
    for position, item in enumerate(value):
        if not isinstance(item, dict):
            raise DecodeError(
                f"failed to convert object at index {index} to type {wanted}: "
                f"item {position} is {json_type_phrase(item)} ({show(item)})"
            )
    return value if value else None


def decode_fragment(kind: ValueKind, index: int, value: Any) -> Any:
    """One output of a fragmented pod spec field, empty values as None (upstream omits them)."""
    if kind == "string":
        return decode_string(index, value) or None
    if kind == "string_map":
        return decode_string_map(index, value)
    if kind == "object":
        return decode_optional_object(index, value)
    return decode_object_list(index, value)


def decode_replicas(index: int, value: Any) -> int | None:
    """A replica count: null is None; an integral number or a base-10 numeric string in int32 range.

    Booleans, fractions (`2.5`), non-numeric strings (`"abc"`, `" 2"`, `"2_0"`) and values outside int32 are
    errors that show the value.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise DecodeError(f"output {index} is {show(value)}, a boolean, not a replica count")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise DecodeError(f"output {index} is {'NaN' if math.isnan(value) else 'infinite'}, not a replica count")
        if not value.is_integer():
            raise DecodeError(f"output {index} is {show(value)}, not a whole number of replicas")
        number = int(value)
    elif isinstance(value, str):
        if not _DECIMAL.match(value):
            raise DecodeError(f"output {index} is the string {show(value)}, not a base-10 integer")
        if len(value.lstrip("+-").lstrip("0")) > _INT32_DIGITS:  # never converted: it may be too long to convert
            raise DecodeError(f"output {index} is the string {show(value)}, outside the int32 range of a replica count")
        number = int(value, 10)
    else:
        raise DecodeError(f"output {index} is {json_type_phrase(value)} ({show(value)}), not a replica count")
    if not INT32_MIN <= number <= INT32_MAX:
        shown = show(value) if abs(number) < 10**30 else f"an integer of {_digits(number)} digits"
        raise DecodeError(f"output {index} is {shown}, outside the int32 range of a replica count")
    return number


def _digits(number: int) -> str:
    """How many decimal digits an integer has, without converting it (it may be too long to convert)."""
    size = abs(number).bit_length()
    if size < 10_000:
        return str(len(str(abs(number))))
    return f"about {int(size * 0.30103)}"


def decode_instance_ids(values: list[Any]) -> list[str]:
    """Instance ids: each output a non-empty string (null counts as empty, a number is an error)."""
    if _STR_ONLY.issuperset(map(type, values)) and all(values):  # the common case, checked in C
        return list(values)
    ids = [decode_string(index, value) for index, value in enumerate(values)]
    if any(not instance_id for instance_id in ids):
        raise DecodeError(
            f"instance id path contained empty string values [{','.join(ids)}]: every instance needs a non-empty id"
        )
    return ids


_STR_ONLY: Final = frozenset({str})
