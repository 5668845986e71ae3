"""Input normalisation: what libjq and the fast path are given, made once per object.

gojq (upstream's engine) sees every object after a JSON round trip into Go maps, so it iterates object keys in
sorted order and every number is a float64 whose integral values print as integers. libjq keeps insertion order and
prints the literal it parsed (`3.0 | tostring` is `"3.0"` in jq 1.8). One pass here makes an object look to libjq as
it looks to gojq:

* object keys sorted recursively (byte order of their UTF-8 text, as Go sorts strings);
* integral floats whose magnitude is below 2**53 become ints (`3.0` -> `3`); other floats stay;
* YAML timestamps (`datetime`, `date`) become RFC 3339 strings, tuples and sets become arrays, bytes base64;
* a lone surrogate (what `json.loads` makes of an unpaired `"\\ud800"` escape) becomes U+FFFD, as gojq reads it.

The pass is `msgspec`'s encoder with sorted keys (C speed). Integral floats are rare in Kubernetes objects, so they
are looked for in the encoded text and only fixed (by a decode with a float hook and a second encode) when one may
be present. Objects with non-string keys (possible from YAML) take a pure-Python walk that names keys as JSON does.

`prune(obj, roots)` keeps only the subtrees an expression can read (the read patterns of `jq.reads.reads`), so a
status matcher does not pay for converting pod templates.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from workload_map._unicode import replace_lone_surrogates
from workload_map.errors import WorkloadMapError

__all__ = ["InputNotJSONError", "encode", "encodes", "normalize", "prune", "roots_key", "to_plain"]


class InputNotJSONError(WorkloadMapError, TypeError):
    """An object jq cannot be given: a value of no JSON type, a cycle, nesting deeper than the encoder can follow,
    an integer of more than 4300 digits (a `TypeError`, as it always was: "the object is not JSON")."""


_SAFE_INT = 2**53

# msgspec writes every float with |x| < 1e16 that is integral as `<digits>.0`; anything larger uses an exponent
# and stays a float (its magnitude is beyond 2**53). A match inside a string is a harmless false positive.
# `_may_hold_integral_float` answers what a search of `_INTEGRAL_FLOAT` answers, without compiling it (issue 19:
# the search ran on every describe; tests/unit/test_convert_integral_float.py holds the two equal).
_INTEGRAL_FLOAT = rb"\.0(?:[,\]}]|$)"
_FLOAT_ENDS = frozenset(b",]}")
_NEWLINE = ord("\n")


def _may_hold_integral_float(data: bytes) -> bool:
    """Whether `data` holds `.0` followed by `,`, `]`, `}`, the end, or a newline that ends it (`$`'s match)."""
    index = data.find(b".0")
    end = len(data)
    while index >= 0:
        after = index + 2
        if after == end or data[after] in _FLOAT_ENDS or (after == end - 1 and data[after] == _NEWLINE):
            return True
        index = data.find(b".0", index + 1)
    return False


Roots = frozenset[tuple[str | int | None, ...]]


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
    return _decode(_encode_bytes(obj))


def encodes(obj: Any) -> bool:
    """Whether the sorted encoder `normalize` starts with takes `obj` as it is: then `normalize(obj)` succeeds
    (what it writes it reads back), so a reader that only needs to know the copy could be made skips making it."""
    try:
        _SORTED.encode(obj)
    except Exception:  # any refusal: `normalize` decides (a walk, or its error)
        return False
    return True


def _decode(data: bytes) -> Any:
    try:
        return _DECODE.decode(data)
    except msgspec.MsgspecError:  # an integer msgspec will not read back (4300 digits and a sign): Python reads it
        return json.loads(data, parse_float=_float_hook)


def to_plain(value: Any) -> Any:
    """A fresh plain-JSON copy of a value to write into a document (key order kept, integral floats as ints).

    Typed values (msgspec Structs, dataclasses) become objects, as upstream re-encodes written values to JSON.
    """
    if value is None or isinstance(value, str | bool) or (isinstance(value, int) and abs(value) < _SAFE_INT):
        return value
    try:
        data = _PLAIN.encode(value)
    except (TypeError, ValueError, RecursionError):
        data = _encode_walked(value)
    return _decode(data)


def _encode_bytes(obj: Any) -> bytes:
    try:
        data = _SORTED.encode(obj)
    except TypeError as exc:
        # non-string keys (YAML `1: x`): name them as JSON does; anything else is not JSON at all
        if "str keys" not in str(exc):
            raise InputNotJSONError(f"the object is not JSON: {exc}") from None
        return _encode_walked(obj)
    except UnicodeEncodeError:  # a lone surrogate (json.loads of a `"\\ud800"` escape): U+FFFD, as gojq reads it
        return _encode_walked(obj)
    except (ValueError, RecursionError) as exc:
        raise _not_json(exc) from None
    if _may_hold_integral_float(data):
        data = _SORTED.encode(_decode(data))
    return data


def _encode_walked(obj: Any) -> bytes:
    try:
        return _SORTED.encode(_walk(obj))
    except (ValueError, RecursionError) as exc:
        raise _not_json(exc) from None
    except TypeError as exc:
        raise InputNotJSONError(f"the object is not JSON: {exc}") from None


def _not_json(exc: BaseException) -> InputNotJSONError:
    if isinstance(exc, RecursionError):
        return InputNotJSONError("the object is not JSON: it refers to itself or is nested too deeply")
    if "integer string conversion" in str(exc):
        return InputNotJSONError("the object is not JSON: it holds an integer of more than 4300 digits")
    return InputNotJSONError(f"the object is not JSON: {exc}")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return replace_lone_surrogates(key)
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return str(int(key)) if key.is_integer() and abs(key) < _SAFE_INT else repr(key)
    raise InputNotJSONError(f"the object is not JSON: a {type(key).__name__} key has no JSON form")


def _walk(value: Any) -> Any:
    """Pure-Python normalisation for values msgspec cannot sort (non-string keys) or encode (lone surrogates)."""
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    if isinstance(value, Mapping):
        return {_key(k): _walk(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_walk(v) for v in value]
    if isinstance(value, float) and value.is_integer() and -_SAFE_INT < value < _SAFE_INT:
        return int(value)
    if isinstance(value, _dt.datetime | _dt.date):
        return _SORTED.encode(value).decode()[1:-1]
    if isinstance(value, bytes | bytearray):
        import base64  # only for bytes (a YAML !!binary): with struct and binascii, ~0.5 ms of a start (issue 19)

        return base64.b64encode(value).decode()
    return value


def roots_key(roots: Iterable[tuple[str | int | None, ...]] | None) -> Roots | None:
    """A hashable form of a root set; None (the whole object) absorbs everything."""
    return None if roots is None else frozenset(roots)


def prune(obj: Any, roots: Roots | None) -> Any:
    """The part of `obj` holding every path in `roots` (None: all of it), sharing the kept subtrees.

    Each root is a path from the top: object keys (str), array indexes (int), and None for "every element or
    value" (jq's `.[]`), e.g. `("spec", "replicatedJobs", None, "replicas")`. A root keeps its whole subtree;
    the containers along it keep their type, and only the entries some root names (all of them under None, so
    iteration sees every element, in order; unnamed array elements become null so indexes and the length stay).
    Anything a root cannot descend into as written (an index into an object, a key into an array, a scalar) and
    the empty path `()` are kept whole. So an expression that reads only inside `roots` sees exactly what it
    would see in `obj`: same types, same truthiness, same iteration, same errors.
    """
    if roots is None:
        return obj
    return _prune(obj, _trie(roots))


class _Trie:
    """`roots` compiled for pruning: per step, the sub-trie of each named key or index and of "every"."""

    __slots__ = ("dict_whole", "every", "list_whole", "mixed", "named", "roots", "whole")

    def __init__(self, roots: Roots) -> None:
        self.roots = roots
        self.whole = () in roots
        every: set[tuple[str | int | None, ...]] = set()
        named: dict[str | int, set[tuple[str | int | None, ...]]] = {}
        kinds: set[bool] = set()
        for root in roots:
            if not root:
                continue
            head = root[0]
            if head is None:
                every.add(root[1:])
            else:
                kinds.add(isinstance(head, str) and not isinstance(head, bool))
                named.setdefault(head, set()).add(root[1:])
        self.mixed = len(kinds) > 1 or any(isinstance(k, bool) for k in named)
        self.every = _trie(frozenset(every)) if every else None
        self.named = {key: _trie(frozenset(rest | every)) for key, rest in named.items()}
        # an index into an object, or a key into an array: jq fails whatever the contents, so the value is kept
        # whole for the message (told once per trie, not per object pruned)
        self.dict_whole = self.mixed or any(not isinstance(key, str) for key in named)
        self.list_whole = self.mixed or any(isinstance(key, str) for key in named)


@functools.lru_cache(maxsize=1024)
def _trie(roots: Roots) -> _Trie:
    return _Trie(roots)


def _str_keys(obj: dict[Any, Any]) -> bool:
    return all(type(key) is str for key in obj)


def _prune(obj: Any, trie: _Trie) -> Any:
    if trie.whole:
        return obj
    named = trie.named
    if isinstance(obj, dict):
        if trie.dict_whole:
            return obj
        # a named key the object lacks may be there under a key that is not a string (YAML `1:`, which normalising
        # names "1"): then which entries a root keeps is told after normalising, so the object is kept whole
        every = trie.every
        if every is not None:
            if named and not obj.keys() >= named.keys() and not _str_keys(obj):
                return obj
            return {key: _prune(value, named.get(key, every)) for key, value in obj.items()}
        kept = {key: _prune(obj[key], child) for key, child in named.items() if key in obj}
        if len(kept) < len(named) and not _str_keys(obj):
            return obj
        return kept
    if isinstance(obj, list):
        if trie.list_whole:
            return obj
        length = len(obj)
        by_position: dict[int, _Trie] = {}
        for key, child in named.items():
            assert isinstance(key, int)
            position = key + length if key < 0 else key
            if 0 <= position < length:
                other = by_position.get(position)
                by_position[position] = child if other is None else _trie(child.roots | other.roots)
        every = trie.every
        if every is not None:
            return [_prune(item, by_position.get(i, every)) for i, item in enumerate(obj)]
        return [_prune(item, by_position[i]) if i in by_position else None for i, item in enumerate(obj)]
    return obj
