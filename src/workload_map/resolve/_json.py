"""Plain-JSON helpers of the resolve layer: copying, emptiness, concrete paths, merge patches, gojq `tostring`.

Everything here works on plain JSON values (dict, list, str, int, float, bool, None) and knows nothing of
definitions.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import sys
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import msgspec

from workload_map.errors import WorkloadMapError

Path = Sequence[str | int]


class NotJSONError(WorkloadMapError, ValueError):
    """A value that has no JSON form (a set, an object, a non-string key that cannot be named)."""

    def __init__(self, where: str, value: Any) -> None:
        self.where = where
        super().__init__(f"{where or 'the object'} holds a {type(value).__name__} value, which has no JSON form")


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value, normalised the way the API server would hand it over.

    Tuples become lists and YAML timestamps (`datetime`/`date`, which PyYAML makes of unquoted timestamps) become
    RFC 3339 strings; anything else without a JSON form raises `NotJSONError` naming where it is.
    """
    try:  # a JSON round trip in C: several times faster than walking the value in Python
        return _DECODER.decode(_ENCODER.encode(value))
    except (TypeError, ValueError, msgspec.MsgspecError):
        return _walk_copy(value, "")


def _walk_copy(value: Any, where: str) -> Any:
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value
    if isinstance(value, Mapping):
        copied: dict[str, Any] = {}
        for key, item in value.items():
            name = key
            if not isinstance(name, str):
                if not (isinstance(name, bool | int | float) or name is None):
                    raise NotJSONError(where, name)
                name = json.dumps(name)
            copied[name] = _walk_copy(item, f"{where}.{name}" if where else name)
        return copied
    if isinstance(value, list | tuple):
        return [_walk_copy(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None and value.utcoffset() == _dt.timedelta(0):
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    raise NotJSONError(where, value)


def fast_copy(value: Any) -> Any:
    """A deep copy of a value already known to be plain JSON (no checks: the hot path)."""
    if isinstance(value, dict | list) and value:
        try:
            return _DECODER.decode(_ENCODER.encode(value))
        except (TypeError, ValueError, msgspec.MsgspecError):  # pragma: no cover - documents hold plain JSON
            pass
    return _python_copy(value)


def _python_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _python_copy(item) if isinstance(item, dict | list) else item for key, item in value.items()}
    if isinstance(value, list):
        return [_python_copy(item) if isinstance(item, dict | list) else item for item in value]
    return value


def is_empty(value: Any) -> bool:
    """Null, `""`, `{}` or `[]`: a value that says nothing, so writing it where nothing was changes nothing."""
    return value is None or (isinstance(value, str | dict | list) and len(value) == 0)


_MISSING = object()


def get_path(obj: Any, path: Path) -> Any:
    """The value at a concrete jq path, or None when any step is missing (like jq's `getpath`)."""
    current = obj
    for step in path:
        if isinstance(step, str):
            if not isinstance(current, dict):
                return None
            current = current.get(step)
        elif isinstance(step, int) and not isinstance(step, bool):
            if not isinstance(current, list):
                return None
            index = step + len(current) if step < 0 else step
            if not 0 <= index < len(current):
                return None
            current = current[index]
        else:  # a slice path such as {"start": 1, "end": 2}: read it through jq, not here
            return None
    return current


def merge_patch(original: Any, current: Any) -> Any:
    """The RFC 7386 JSON merge patch that turns `original` into `current` (`{}` when they are equal).

    Objects are diffed key by key (a removed key becomes null); arrays and scalars are replaced whole. A key whose
    new value is null cannot be told apart from a removal in a merge patch, so it is sent as a removal.
    """
    if not isinstance(original, dict) or not isinstance(current, dict):
        return fast_copy(current)
    patch: dict[str, Any] = {}
    for key in original:
        if key not in current:
            patch[key] = None
    for key, new in current.items():
        if key not in original:
            patch[key] = fast_copy(new)
            continue
        old = original[key]
        if old == new and type(old) is type(new):
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            sub = merge_patch(old, new)
            if sub:
                patch[key] = sub
        else:
            patch[key] = fast_copy(new)
    return patch


# --- gojq formatting -------------------------------------------------------------------------------------------


def jq_tostring(value: Any) -> str:
    """What gojq's `tostring` gives: a string unchanged, anything else as compact JSON with sorted keys.

    Numbers print like gojq's float64s: `3` not `3.0`, `1e+21` and `1e-7` in exponent form, `0.5` as is.
    """
    if isinstance(value, str):
        return value
    return jq_json(value)


def jq_json(value: Any) -> str:
    """Compact JSON the way gojq encodes it (sorted keys, gojq number format, DEL escaped)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return _format_int(value)
    if isinstance(value, float):
        return _format_float(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ",".join(jq_json(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{jq_json(str(key))}:{jq_json(value[key])}" for key in sorted(value)) + "}"
    return jq_json(str(value))


def _format_int(value: int) -> str:
    if -(2**53) <= value <= 2**53:
        return str(value)
    return _format_float(float(value))  # upstream holds every number as a float64


def _format_float(value: float) -> str:
    if math.isnan(value):
        return "null"
    if math.isinf(value):
        value = math.copysign(sys.float_info.max, value)
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        text = repr(value)  # shortest round-trip digits, exponent form in this range
        mantissa, _, exponent = text.partition("e")
        sign, digits = exponent[0], exponent[1:].lstrip("0") or "0"
        if sign not in "+-":
            sign, digits = "+", exponent.lstrip("0") or "0"
        if sign == "+" and len(digits) < 2:
            digits = digits.rjust(2, "0")
        if mantissa.endswith(".0"):
            mantissa = mantissa[:-2]
        return f"{mantissa}e{sign}{digits}"
    return format(Decimal(repr(value)).normalize(), "f")
