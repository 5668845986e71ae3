"""Input normalisation: what libjq and the fast path are given, made once per object.

gojq (upstream's engine) sees every object after a JSON round trip into Go maps, so it iterates object keys in
sorted order and every number is a float64 whose integral values print as integers. libjq keeps insertion order and
prints the literal it parsed (`3.0 | tostring` is `"3.0"` in jq 1.8). One pass here makes an object look to libjq as
it looks to gojq:

* object keys sorted recursively (byte order of their UTF-8 text, as Go sorts strings);
* integral floats whose magnitude is below 2**53 become ints (`3.0` -> `3`); other floats stay;
* YAML timestamps (`datetime`, `date`) become RFC 3339 strings, tuples and sets become arrays, bytes base64.

The pass is `msgspec`'s encoder with sorted keys (C speed). Integral floats are rare in Kubernetes objects, so they
are looked for in the encoded text and only fixed (by a decode with a float hook and a second encode) when one may
be present. Objects with non-string keys (possible from YAML) take a pure-Python walk that names keys as JSON does.

`prune(obj, roots)` keeps only the subtrees an expression can read (the static check's `referenced_roots`), so a
status matcher does not pay for converting pod templates.
"""

from __future__ import annotations

import base64
import datetime as _dt
import re
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

__all__ = ["encode", "normalize", "prune", "roots_key", "to_plain"]

_SAFE_INT = 2**53

# msgspec writes every float with |x| < 1e16 that is integral as `<digits>.0`; anything larger uses an exponent
# and stays a float (its magnitude is beyond 2**53). A match inside a string is a harmless false positive.
_INTEGRAL_FLOAT = re.compile(rb"\.0(?:[,\]}]|$)")

Roots = frozenset[tuple[str | int, ...]]


def _float_hook(text: str) -> Any:
    value = float(text)
    if value.is_integer() and -_SAFE_INT < value < _SAFE_INT:
        return int(value)
    return value


def _enc_hook(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return list(value)
    raise TypeError(f"a {type(value).__name__} value has no JSON form")


_SORTED = msgspec.json.Encoder(order="sorted", enc_hook=_enc_hook)
_PLAIN = msgspec.json.Encoder(enc_hook=_enc_hook)
_DECODE = msgspec.json.Decoder(float_hook=_float_hook)


def encode(obj: Any) -> str:
    """JSON text of `obj` with sorted keys and integral floats written as integers (libjq's input)."""
    return _encode_bytes(obj).decode()


def normalize(obj: Any) -> Any:
    """A fresh copy of `obj` as gojq sees it: sorted keys (dict order), integral floats as ints, plain JSON types."""
    return _DECODE.decode(_encode_bytes(obj))


def to_plain(value: Any) -> Any:
    """A fresh plain-JSON copy of a value to write into a document (key order kept, integral floats as ints).

    Typed values (msgspec Structs, dataclasses) become objects, as upstream re-encodes written values to JSON.
    """
    if value is None or isinstance(value, str | bool | int):
        return value
    try:
        data = _PLAIN.encode(value)
    except (TypeError, ValueError):
        data = _SORTED.encode(_walk(value))
    return _DECODE.decode(data)


def _encode_bytes(obj: Any) -> bytes:
    try:
        data = _SORTED.encode(obj)
    except TypeError as exc:
        # non-string keys (YAML `1: x`): name them as JSON does; anything else is not JSON at all
        if "str keys" not in str(exc):
            raise TypeError(f"the object is not JSON: {exc}") from None
        return _SORTED.encode(_walk(obj))
    if _INTEGRAL_FLOAT.search(data):
        data = _SORTED.encode(_DECODE.decode(data))
    return data


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return str(int(key)) if key.is_integer() and abs(key) < _SAFE_INT else repr(key)
    raise TypeError(f"the object is not JSON: a {type(key).__name__} key has no JSON form")


def _walk(value: Any) -> Any:
    """Pure-Python normalisation for values msgspec cannot sort (non-string keys)."""
    if isinstance(value, Mapping):
        return {_key(k): _walk(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_walk(v) for v in value]
    if isinstance(value, float) and value.is_integer() and -_SAFE_INT < value < _SAFE_INT:
        return int(value)
    if isinstance(value, _dt.datetime | _dt.date):
        return _SORTED.encode(value).decode()[1:-1]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    return value


def roots_key(roots: Iterable[tuple[str | int, ...]] | None) -> Roots | None:
    """A hashable form of a root set; None (the whole object) absorbs everything."""
    return None if roots is None else frozenset(roots)


def prune(obj: Any, roots: Roots | None) -> Any:
    """The part of `obj` holding every path in `roots` (None: all of it), sharing the kept subtrees.

    Each root is a key path from the top (`("spec", "replicatedJobs")`). A kept path keeps its whole subtree; the
    objects along it keep only the keys some root names. Anything that is not an object where a root descends (an
    array, a scalar), and the empty path `()`, is kept whole, so an expression reading only `roots` sees exactly
    what it would see in `obj`.
    """
    if roots is None or () in roots or not isinstance(obj, dict):
        return obj
    children: dict[str, set[tuple[str | int, ...]]] = {}
    for root in roots:
        head = root[0]
        if not isinstance(head, str):
            return obj  # an index into an object: jq errors the same way on the whole object
        children.setdefault(head, set()).add(root[1:])
    out: dict[str, Any] = {}
    for key, rest in children.items():
        if key in obj:
            out[key] = obj[key] if () in rest else prune(obj[key], frozenset(rest))
    return out
