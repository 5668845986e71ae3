"""Plain-JSON helpers of the resolve layer: copying, emptiness, concrete paths, merge patches, gojq `tostring`.

Everything here works on plain JSON values (dict, list, str, int, float, bool, None) and knows nothing of
definitions.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from itertools import chain, compress
from operator import not_
from typing import Any, Final

import msgspec

from workload_map._limits import MAX_DEPTH, MAX_INT_DIGITS
from workload_map._regex import LazyPattern
from workload_map._unicode import replace_lone_surrogates
from workload_map.errors import WorkloadMapError

Path = Sequence[str | int]


class NotJSONError(WorkloadMapError, ValueError):
    """A value that has no JSON form (an object of no JSON type, NaN, an integer over 4300 digits, a cycle, nesting
    over 500 levels, a non-string key that cannot be named); `where` is its place (`spec.replicas`)."""

    def __init__(self, where: str, value: Any, reason: str | None = None) -> None:
        self.where = where
        place = (where if len(where) <= 120 else f"{where[:60]}...{where[-40:]}") or "the object"
        if reason is None:
            reason = f"holds a {type(value).__name__} value, which has no JSON form"
        super().__init__(f"{place} {reason}")


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value, normalised the way the API server would hand it over.

    Tuples become lists and YAML timestamps (`datetime`/`date`, which PyYAML makes of unquoted timestamps) become
    RFC 3339 strings; typed values (msgspec Structs, dataclasses) become objects; a lone surrogate (`json.loads` of
    an unpaired `"\\ud800"` escape) becomes U+FFFD, as the API server's decoder reads it. What JSON cannot carry raises
    `NotJSONError` naming where it is: a value of no JSON type, NaN or an infinity (the API server has no such
    number; they are not read as null), an integer of more than 4300 digits, a cycle, nesting over 500 levels.
    """
    try:  # a JSON round trip in C: several times faster than walking the value in Python
        data = _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError, msgspec.MsgspecError):
        return _checked_copy(value)  # names the problem and its place
    # msgspec writes NaN and infinities as null, and nests as deep as the stack allows: look closer when it may have
    if (b"null" in data and _non_finite(value)) or _too_deep(value, data):
        return _checked_copy(value)
    try:
        return _DECODER.decode(data)
    except (ValueError, msgspec.MsgspecError):  # an integer msgspec will not read back (a 4300-digit negative one)
        return _checked_copy(value)


def shareable(value: Any) -> bool:
    """Whether `value` can be read in place instead of through `json_copy`: a dict that msgspec encodes as it
    stands (only JSON-encodable types, string keys), with no NaN or infinity and no nesting over MAX_DEPTH, so
    `json_copy` would be a plain decode of its encoding. Costs one encode (a third of a copy). False sends the
    value to `json_copy`, which copies it or names what JSON cannot carry."""
    if type(value) is not dict:
        return False
    return _subtree_shareable(value, MAX_DEPTH)


def _subtree_shareable(value: Any, limit: int) -> bool:
    """`shareable`'s check of any value whose containers may nest `limit` levels below it: the sorted encoder
    refuses a key that is not a string (the plain one writes `{1: 2}` as `{"1":2}`, so a read in place of `.["1"]`
    would differ from the copy's), a lone surrogate and a value of no JSON type."""
    try:
        data = _STR_KEYED.encode(value)
    except (TypeError, ValueError, RecursionError, msgspec.MsgspecError):
        return False
    return not ((_NULL.search(data) is not None and _non_finite(value)) or _too_deep(value, data, limit))


# the encoder of the checks: with sorted keys, msgspec takes only string keys (as fast as the plain one: the keys
# of a Kubernetes object are few per object)
_STR_KEYED: Final = msgspec.json.Encoder(order="sorted")


class ReadPart:
    """Read patterns (`jq.reads`: steps from the top, a key, an index or None for every element or value; a
    pattern's end keeps its whole subtree) compiled for `part_shareable`, as `jq.convert.prune` compiles them:
    `whole` where a pattern ends, the part below each named key or index (with every's patterns too) and below
    every element. `dict_whole`/`list_whole`: an index into an object or a key into an array, which jq refuses
    whatever the contents, so the value is kept whole (its message may show it)."""

    __slots__ = ("dict_whole", "every", "list_whole", "named", "whole")

    def __init__(self, patterns: frozenset[tuple[str | int | None, ...]]) -> None:
        self.whole = () in patterns
        every: set[tuple[str | int | None, ...]] = set()
        named: dict[str | int, set[tuple[str | int | None, ...]]] = {}
        for pattern in patterns:
            if pattern:
                head = pattern[0]
                if head is None:
                    every.add(pattern[1:])
                else:
                    named.setdefault(head, set()).add(pattern[1:])
        self.every = ReadPart(frozenset(every)) if every and not self.whole else None
        self.named = {} if self.whole else {key: ReadPart(frozenset(rest | every)) for key, rest in named.items()}
        self.dict_whole = any(type(key) is not str for key in named)
        self.list_whole = any(type(key) is not int for key in named)


def read_part(patterns: Iterable[Sequence[str | int | None]] | None) -> ReadPart | None:
    """`patterns` compiled for `part_shareable`, or None when they cannot scope a check (None: the whole input; a
    step that is not a string, an int or None; a key JSON text cannot hold, a lone surrogate; a pattern deeper
    than MAX_DEPTH)."""
    if patterns is None:
        return None
    kept: set[tuple[str | int | None, ...]] = set()
    for pattern in patterns:
        steps = tuple(pattern)
        if len(steps) > MAX_DEPTH:
            return None
        for step in steps:
            if step is not None and type(step) is not int and type(step) is not str:
                return None
            if type(step) is str and not step.isascii():
                try:
                    step.encode()
                except UnicodeEncodeError:
                    return None
        kept.add(steps)
    return ReadPart(frozenset(kept))


def part_shareable(value: dict[str, Any], part: ReadPart) -> bool:
    """Whether reading only `part` of `value` in place gives what reading it in `json_copy(value)` gives: along
    each pattern every container an exact dict (string keys JSON can hold) or list, and each pattern's end (and
    each scalar a pattern stops at) passing `shareable`'s checks, its nesting counted from the top. False: check
    the whole object (`shareable`, else `json_copy`). What lies outside the patterns is not looked at, so an
    expression whose reads are `part` (`jq.reads`: it reads nothing else) may run on `value` in place."""
    return type(value) is dict and _part_ok(value, part, 0)


def _part_ok(value: Any, part: ReadPart, depth: int) -> bool:
    if part.whole:
        return _end_ok(value, depth)
    kind = type(value)
    if kind is dict:
        if part.dict_whole:
            return _end_ok(value, depth)
        if not _plain_keys(value):
            return False  # the copy names such a key as JSON does: which entry a step finds can differ
        named, every = part.named, part.every
        depth += 1
        # loops rather than all() over a generator: a generator frame per container (a status read: 300K -> 259K
        # instructions with the loops)
        if every is not None:
            get = named.get
            for key, item in value.items():  # noqa: SIM110 - a loop: no generator frame
                if not _part_ok(item, get(key, every), depth):
                    return False
            return True
        for key, below in named.items():  # noqa: SIM110 - a loop: no generator frame
            if key in value and not _part_ok(value[key], below, depth):
                return False
        return True
    if kind is list:
        if part.list_whole:
            return _end_ok(value, depth)
        depth += 1
        every = part.every
        if not part.named:  # every element alike (`[]`): no positions to work out
            if every is not None:
                for item in value:
                    if not _part_ok(item, every, depth):
                        return False
            return True
        length = len(value)
        at: dict[int, list[ReadPart]] = {}
        for index, below in part.named.items():
            assert type(index) is int  # `list_whole` otherwise
            position = index + length if index < 0 else index
            if 0 <= position < length:
                at.setdefault(position, []).append(below)
        if every is not None:
            alone = [every]
            for position, item in enumerate(value):
                for below in at.get(position, alone):
                    if not _part_ok(item, below, depth):
                        return False
            return True
        for position, parts in at.items():
            for below in parts:
                if not _part_ok(value[position], below, depth):
                    return False
        return True
    if kind in _SCALAR_KINDS:
        return _end_ok(value, depth)  # a step into a scalar fails; the value is kept whole for the message
    return False  # a tuple, another mapping, a typed value: the copy changes it (the whole object decides)


def _end_ok(value: Any, depth: int) -> bool:
    kind = type(value)
    if kind is str:
        return value.isascii() or _encodes(value)
    if kind is bool or value is None or (kind is int and -_SMALL_INT < value < _SMALL_INT):
        return True
    if kind is float:
        return math.isfinite(value)
    return _subtree_shareable(value, MAX_DEPTH - depth)


_SMALL_INT: Final = 2**63
_SCALAR_KINDS: Final = frozenset({str, int, float, bool, type(None)})
_STR_KIND: Final = frozenset({str})


def _plain_keys(value: dict[Any, Any]) -> bool:
    """Whether every key of `value` is a string JSON text can hold (no lone surrogate)."""
    if not _STR_KIND.issuperset(map(type, value)):
        return False
    return all(map(str.isascii, value)) or all(map(_encodes, value))


def _encodes(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate: the copy makes it U+FFFD
        return False
    return True


# `b"null" in data`, twice as fast on a Kubernetes object's text: 5 against 10 us over 18 KB (Python's substring
# search checks each `l`; the regular expression engine looks for the `n`s)
_NULL: Final = LazyPattern(rb"null")


_IDENTITY_FIELDS: Final = ("name", "generateName", "namespace", "uid", "creationTimestamp")
_PLAIN_SCALARS: Final = (str, int, float, bool, type(None), dict, list)
_PLAIN_TYPES: Final = frozenset(_PLAIN_SCALARS)


def plain_identity(obj: Mapping[str, Any]) -> bool:
    """Whether the identity fields of `obj` (apiVersion, kind and metadata's names, uid and creation time) read
    the same in place as in its `json_copy`: plain JSON types, metadata a dict. A `datetime` (PyYAML's reading of
    an unquoted timestamp) or another typed value is not: the copy turns it into a string."""
    plain = _PLAIN_TYPES
    if type(obj.get("apiVersion")) not in plain or type(obj.get("kind")) not in plain:
        return False
    metadata = obj.get("metadata")
    if type(metadata) is not dict:
        return not isinstance(metadata, Mapping)  # a scalar or a list reads as "no metadata" both ways
    get = metadata.get  # the five _IDENTITY_FIELDS, written out: this runs once per workload `wmap get` lists
    return (
        type(get("name")) in plain
        and type(get("generateName")) in plain
        and type(get("namespace")) in plain
        and type(get("uid")) in plain
        and type(get("creationTimestamp")) in plain
    )


_MSGPACK = msgspec.msgpack.Encoder()
# a msgpack float64 (0xcb) whose exponent bits are all set: NaN or an infinity (a match inside a string only
# costs the closer look)
_NON_FINITE = LazyPattern(rb"\xcb[\x7f\xff][\xf0-\xff]")


def _non_finite(value: Any) -> bool:
    try:
        packed = _MSGPACK.encode(value)
        # no float64 marker, no float: one byte search (0.3 us over 14 KB) instead of the pattern's (3.8 us)
        return b"\xcb" in packed and _NON_FINITE.search(packed) is not None
    except (TypeError, ValueError, OverflowError, RecursionError, msgspec.MsgspecError):
        return True


def nested_too_deep(value: Any, data: bytes) -> bool:
    """Whether `value`, a plain-JSON value whose JSON text is `data`, nests more than MAX_DEPTH levels deep
    (`workload_map.cluster` checks each listed object with it)."""
    return _too_deep(value, data)


def _too_deep(value: Any, data: bytes, limit: int | None = None) -> bool:
    """Whether `value` (encoded as `data`) nests arrays and objects more than `limit` levels deep.

    A count answers most objects (too few containers to nest that deep); past MAX_DEPTH containers the JSON
    text answers (`_text_nests_deeper`), when it nests no deeper than allowed; only text that does is walked
    (`_walk_too_deep`), since the text may hold containers the value does not (a typed value encoded as an
    object)."""
    if limit is None:  # read at the call: tests lower the module's MAX_DEPTH
        limit = MAX_DEPTH
    if len(data.translate(None, _OTHER_BYTES)) <= limit:  # the `[` and `{` are what is left
        return False  # too few containers to nest that deep: the common case costs one pass
    levels = _bracket_levels(data, limit)
    if levels is not None:
        return levels > limit + 1 and _walk_too_deep(value, limit)  # the top container is level 0
    try:
        if not _text_nests_deeper(data, limit, counted=True):
            return False
    except (ValueError, msgspec.MsgspecError):  # pragma: no cover - the text is an encoding of `value`
        pass
    return _walk_too_deep(value, limit)


def _bracket_levels(data: bytes, limit: int | None = None) -> int | None:
    """How many containers the JSON text `data` has open at once at most (past `limit` + 1: some number
    above it), read from its brackets alone; None when a string may hold one (the caller splits the text then).

    Without a backslash in the text no string holds a quote, so the quotes pair up in order: with the brackets
    and quotes alone kept, a string without brackets is an adjacent pair `""`, and a quote left once those are
    gone (counted, not removed) means a bracket inside a string. What is left is the containers' brackets; each
    pass of removing `[]` removes the containers that hold none, so the passes it takes to empty are the levels. A
    Kubernetes object nests some 10-20 levels: the 38 KB JobSet (978 containers) costs ~45 us with this, ~62 us
    split by msgspec (`_text_nests_deeper`, which answers a text with a backslash or a bracket in a string)."""
    if limit is None:  # read at the call: tests lower the module's MAX_DEPTH
        limit = MAX_DEPTH
    if b"\\" in data:
        return None
    kept = data.translate(None, _NOT_BRACKET_OR_QUOTE)
    if kept.count(b'""') * 2 != kept.count(b'"'):  # what removing the pairs `""` would leave: a quote, or none
        return None
    brackets = kept.translate(_SQUARE, b'"')
    levels = 0
    while brackets:
        levels += 1
        if levels > limit + 1:
            return levels
        fewer = brackets.replace(b"[]", b"")
        if len(fewer) == len(brackets):  # pragma: no cover - the text is JSON: its brackets balance
            return None
        brackets = fewer
    return levels


_NOT_BRACKET_OR_QUOTE: Final = bytes(sorted(set(range(256)) - set(b'[]{}"')))
_SQUARE: Final = bytes.maketrans(b"{}", b"[]")  # what is kept of an object's braces: the levels are the same


_OTHER_BYTES: Final = bytes(sorted(set(range(256)) - set(b"[{")))
_OPENING: Final = frozenset(b"[{")
# a text longer than this many bytes per allowed level is split without counting its brackets first: a Kubernetes
# object spends some 30-40 bytes of text per container, so the count would not stop it (speed only: both are exact)
_SPLIT_UNCOUNTED: Final = 64
# made on first use (only objects of many containers need them): a container with its entries as text
# (`msgspec.Raw`, a view of it), and one with its entries decoded one level (their own entries as text)
_SPLITTERS: list[msgspec.json.Decoder[Any]] = []
_SplitEntry = dict[str, msgspec.Raw] | list[msgspec.Raw] | str | int | float | bool | None


def _split(data: bytes, levels: int) -> Any:
    if not _SPLITTERS:
        _SPLITTERS.append(msgspec.json.Decoder(dict[str, msgspec.Raw] | list[msgspec.Raw]))
        _SPLITTERS.append(msgspec.json.Decoder(dict[str, _SplitEntry] | list[_SplitEntry]))
    return _SPLITTERS[levels - 1].decode(data)


def _text_nests_deeper(data: bytes, allowed: int, *, counted: bool = False) -> bool:
    """Whether the JSON container `data` holds has a container more than `allowed` levels below it.

    A subtree whose text is short, or holds few `[` and `{`, cannot nest deeper than it has containers (a count
    that also takes brackets inside strings: it only ever says "maybe"); any other container is split by msgspec
    (in C), two levels at a time, and each long entry two levels down looked at in turn. So a JobSet of a thousand
    containers costs a few splits of its larger subtrees instead of a Python step per value. `counted`: the caller
    has counted the `[` and `{` already (more than `allowed`), so the text is split at once."""
    if len(data) <= 2 * (allowed + 1):  # each container takes two bytes: too short to hold allowed + 2 nested
        return False
    # too few containers, counted as the `[` and `{` a translate leaves (anywhere, so at least the containers);
    # a text so long it surely holds more than that is split without counting them first
    counting = not counted and (allowed == 0 or len(data) <= _SPLIT_UNCOUNTED * (allowed + 1))
    if counting and len(data.translate(None, _OTHER_BYTES)) <= allowed + 1:
        return False
    if allowed == 0:
        return True  # a second container in the text, so one below this one
    if allowed == 1:
        node = _split(data, 1)
        for entry in node.values() if type(node) is dict else node:
            if len(entry) > 2:
                text = bytes(entry)
                if text[0] in _OPENING and _text_nests_deeper(text, 0):
                    return True
        return False
    node = _split(data, 2)
    for entry in node.values() if type(node) is dict else node:
        kind = type(entry)
        if kind is dict or kind is list:  # a container one level down: its entries, two down, are text
            for sub in entry.values() if kind is dict else entry:
                if len(sub) > 2 * (allowed - 1):
                    text = bytes(sub)
                    if text[0] in _OPENING and _text_nests_deeper(text, allowed - 2):
                        return True
    return False


def _walk_too_deep(value: Any, limit: int | None = None) -> bool:
    """Whether `value` nests arrays and objects (mappings, lists, tuples) more than `limit` levels deep.

    Level by level, with C iterators (`map`, `chain`, `compress`) doing the walk while every value is a plain
    JSON type (dict, list, tuple and scalars), so a large object (a JobSet of a thousand containers) costs a few
    C passes per level instead of Python calls per value; a level holding any other type is walked with
    isinstance."""
    if limit is None:  # read at the call: tests lower the module's MAX_DEPTH
        limit = MAX_DEPTH
    level: list[Any] = [value]
    for _ in range(limit + 1):  # the top is level 0: a container below level `limit` is too deep
        if set(map(type, level)) <= _CONTAINER_KINDS:
            dicts = list(map(_DICT_KIND.__contains__, map(type, level)))
            children = list(
                chain(
                    chain.from_iterable(map(dict.values, compress(level, dicts))),
                    chain.from_iterable(compress(level, map(not_, dicts))),
                )
            )
        else:
            children = [child for node in level for child in (node.values() if isinstance(node, Mapping) else node)]
        if set(map(type, children)) <= _KNOWN_KINDS:
            level = list(compress(children, map(_CONTAINER_KINDS.__contains__, map(type, children))))
        else:
            level = [child for child in children if isinstance(child, Mapping | list | tuple)]
        if not level:
            return False
    return True


_DICT_KIND: Final = frozenset({dict})
_CONTAINER_KINDS: Final = frozenset({dict, list, tuple})
_KNOWN_KINDS: Final = _CONTAINER_KINDS | {str, int, float, bool, type(None)}


def _builtin(value: Any) -> Any:
    """What msgspec makes of a typed value (Struct, dataclass, datetime, set, ...); TypeError for the rest."""
    converted = msgspec.to_builtins(value)
    if type(converted) is type(value):
        raise TypeError(f"a {type(value).__name__} value has no JSON form")
    return converted


# Below this many bits an integer has fewer than MAX_INT_DIGITS + 1 digits (10**4300 is a 14,285-bit number):
# only a longer one is compared with the power, made on first need (~0.5 M instructions at import otherwise,
# for a check that almost never runs; issue 19: start-up)
_FEWER_BITS: Final = int(MAX_INT_DIGITS * 3.321928094887362)  # log2(10), rounded down


@functools.cache
def _too_many_digits() -> int:
    limit: int = 10**MAX_INT_DIGITS
    return limit


def _checked_copy(root: Any) -> Any:
    """`json_copy` by a walk (no recursion) that names the place of the first value JSON cannot carry."""
    holder: list[Any] = [None]
    on_path: set[int] = set()
    # tasks: (value, target container, key or index in it, where, depth); ("exit", id) leaves a container
    stack: list[tuple[Any, ...]] = [(root, holder, 0, "", 0)]
    while stack:
        task = stack.pop()
        if task[0] is _EXIT:
            on_path.discard(task[1])
            continue
        value, target, slot, where, depth = task
        if isinstance(value, str):
            target[slot] = replace_lone_surrogates(value)
            continue
        if value is None or isinstance(value, bool):
            target[slot] = value
            continue
        if isinstance(value, int):
            if value.bit_length() >= _FEWER_BITS and abs(value) >= _too_many_digits():
                raise NotJSONError(where, value, f"holds an integer of more than {MAX_INT_DIGITS} digits")
            target[slot] = int(value)
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                what = "NaN" if math.isnan(value) else "an infinite number"
                raise NotJSONError(where, value, f"holds {what}, which JSON cannot carry")
            target[slot] = value
            continue
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None and value.utcoffset() == _dt.timedelta(0):
                target[slot] = value.replace(tzinfo=None).isoformat() + "Z"
            else:
                target[slot] = value.isoformat()
            continue
        if isinstance(value, _dt.date):
            target[slot] = value.isoformat()
            continue
        if not isinstance(value, Mapping | list | tuple):
            try:
                value = _builtin(value)
            except (TypeError, ValueError, RecursionError):
                raise NotJSONError(where, value) from None
            if not isinstance(value, Mapping | list | tuple):
                stack.append((value, target, slot, where, depth))
                continue
        if id(value) in on_path:
            raise NotJSONError(where, value, "refers to itself (a cycle): JSON cannot hold it")
        if depth > MAX_DEPTH:  # as the YAML loader counts: the top is level 0
            raise NotJSONError(where, value, f"is nested more than {MAX_DEPTH} levels deep")
        on_path.add(id(value))
        stack.append((_EXIT, id(value)))
        children: list[tuple[Any, ...]] = []
        if isinstance(value, Mapping):
            copied: dict[str, Any] = {}
            for key, item in value.items():
                name = key
                if isinstance(name, str):
                    name = replace_lone_surrogates(name)
                else:
                    if not (isinstance(name, bool | int | float) or name is None):
                        raise NotJSONError(where, name)
                    try:
                        name = json.dumps(name)
                    except ValueError:
                        raise NotJSONError(where, name, f"has a key JSON cannot name ({type(key).__name__})") from None
                copied[name] = None
                children.append((item, copied, name, f"{where}.{name}" if where else name, depth + 1))
        else:
            copied_list: list[Any] = [None] * len(value)
            children = [(item, copied_list, index, f"{where}[{index}]", depth + 1) for index, item in enumerate(value)]
            copied = copied_list  # type: ignore[assignment]
        target[slot] = copied
        stack.extend(reversed(children))
    return holder[0]


_EXIT: Final = object()


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


def in_document_form(value: Any, old: Any) -> Any:
    """`value` (a fresh copy, changed in place) in the form of `old`, the value it replaces: each object's keys in
    `old`'s order (keys `old` lacks after them, as given), array elements paired by position, and a number equal to
    `old`'s kept as `old` writes it (`3.0` stays `3.0`). So writing back an unchanged value, which the getters hand
    out with jq's sorted keys and integral floats as ints, leaves the document byte for byte as it was."""
    if _same_number(value, old):
        return old
    stack: list[tuple[Any, Any]] = [(value, old)]
    while stack:
        new, before = stack.pop()
        if isinstance(new, dict) and isinstance(before, dict):
            if list(new) != [key for key in before if key in new][: len(new)]:
                ordered = [key for key in before if key in new] + [key for key in new if key not in before]
                items = [(key, new[key]) for key in ordered]
                new.clear()
                new.update(items)
            pairs: Any = ((key, before[key]) for key in new if key in before)
        elif isinstance(new, list) and isinstance(before, list):
            pairs = zip(range(len(new)), before, strict=False)
        else:
            continue
        for key, was in pairs:
            item = new[key]
            if _same_number(item, was):
                new[key] = was
            elif isinstance(item, dict | list):
                stack.append((item, was))
    return value


def _same_number(value: Any, old: Any) -> bool:
    """An int standing for the integral float `old` (jq's view of `3.0` is `3`)."""
    return type(value) is int and type(old) is float and value == old


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
    try:
        return _format_float(float(value))  # upstream holds every number as a float64
    except OverflowError:  # beyond a double: gojq's float64 is infinite, printed as the largest double
        return _format_float(math.inf if value > 0 else -math.inf)  # copysign would convert value too


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
