"""A pure-Python evaluator for plain paths, chosen automatically from the parse tree.

Most expressions in a definition are plain paths (`.spec.replicas`, `.spec.replicatedJobs[].name`,
`.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]`, `.status.conditions[]? | .type`,
`.spec.replicas // 1`). Handing the object to libjq costs a conversion per call; walking the dict in Python costs
a microsecond or two. `compile_fast(expr)` returns such a walker when the expression is in the subset below, and
None otherwise (libjq then runs it).

The subset: `.`; field and index access `.a`, `."a"`, `.["a"]`, `.a[0]`, `.a[-1]` (integer indexes only); iteration
`.[]`; each with an optional `?`; pipes of these; and the alternative operator `a // b` where each side is in the
subset or is a literal (string, number, true, false, null, `[]`, `{}`).

Semantics are libjq 1.8's, and tests/unit/test_jq_fastpath.py proves them equal on generated objects and paths:
a missing field is null; indexing null gives null; `.a` on a number, string, boolean or array and `.[0]` on an
object or string are errors (`Cannot index number with string ("a")`); `.[]` on null is an error; `?` drops the
error of its own step only; `//` yields the left side's truthy outputs, or the right side when there are none, and
does not hide the left side's errors (jq 1.8 and gojq agree). Objects iterate in sorted key order (gojq's order;
see docs/compatibility.md). Outputs are the input's own sub-objects, not copies: treat them as read-only.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from workload_map._jsontype import json_type
from workload_map.errors import WorkloadMapError
from workload_map.jq.ast import (
    Binary,
    Collect,
    Identity,
    Index,
    Iterate,
    Literal,
    Neg,
    Node,
    Number,
    ObjectCons,
    Pipe,
    String,
)
from workload_map.jq.errors import JqError, JqRuntimeError, NotPlainError
from workload_map.jq.parser import parse

__all__ = ["NotPlainError", "compile_fast", "compile_fast_paths", "compile_fast_raw"]

if TYPE_CHECKING:  # annotations only: a `Callable[...]` alias is ~0.1 million instructions to make at import (issue 19)
    FastEvaluator = Callable[[Any], list[Any]]
    PathFinder = Callable[[Any], list[list[Any]]]
    _Gen = Callable[[Any], Iterator[Any]]
    _PathGen = Callable[[Any, tuple[Any, ...]], Iterator[tuple[tuple[Any, ...], Any]]]

_SAFE_INT: Final = 2**53


class _UnsupportedError(WorkloadMapError):
    """The tree is outside the fast-path subset."""


_PLAIN_TYPES: Final = frozenset({str, int, bool, type(None), dict, list, float})


def _plain_scalar(value: Any) -> bool:
    """A value that reads in place as it reads normalised, and is not a container: a string, an int, a bool or a
    finite float (normalising keeps it, or makes an integral float an int, which no path step tells apart)."""
    kind = type(value)
    return kind is str or kind is int or kind is bool or (kind is float and math.isfinite(value))


def _str_keyed(obj: dict[Any, Any]) -> bool:
    return all(type(key) is str for key in obj)


def _dump_number(value: int | float) -> str:
    """libjq 1.8 prints a number from its input literal in decNumber's scientific-string form, which is what
    Python's Decimal prints for the same shortest-repr literal (`1e+100` -> `1E+100`, `1.5e-05` -> `0.000015`)."""
    if isinstance(value, int):
        return str(value)
    return str(Decimal(repr(value)))


def _dump_string(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= code <= 0x7E or code > 0x7F:
            out.append(ch)
        else:
            out.append({"\b": "\\b", "\t": "\\t", "\r": "\\r", "\n": "\\n", "\f": "\\f"}.get(ch, f"\\u{code:04x}"))
    out.append('"')
    return "".join(out)


def _dump_value(value: Any) -> str:
    """Compact JSON as libjq dumps a value into a message: NaN is null, an infinity the largest double."""
    if isinstance(value, str):
        return _dump_string(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "null" if math.isnan(value) else ("-" if value < 0 else "") + "1.7976931348623157e+308"
    if isinstance(value, int | float):
        return _dump_number(value)
    if isinstance(value, list):
        return "[" + ",".join(_dump_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_dump_string(str(k))}:{_dump_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _dump_trunc(value: Any) -> str:
    """jq's `jv_dump_string_trunc(value, buf, 30)`: the value's JSON, cut to 29 bytes with `...`."""
    if isinstance(value, str):
        if len(value.encode("utf-8")) > 30:
            value = value[:30]
        text = _dump_string(value)
    elif value is None or isinstance(value, bool):
        text = json.dumps(value)
    elif isinstance(value, float) and not math.isfinite(value):
        # a computed NaN or infinity (`sqrt` of a negative, `infinite`): libjq and gojq alike print NaN as null
        # and an infinity as the largest double, so `"a" + (-1 | sqrt)` says `number (null)`
        text = "null" if math.isnan(value) else ("-" if value < 0 else "") + "1.7976931348623157e+308"
    elif isinstance(value, int | float):
        text = _dump_number(value)
    else:
        text = _dump_value(value)
    raw = text.encode("utf-8")
    if len(raw) <= 29:
        return text
    delim = {'"': '"', "[": "]", "{": "}"}.get(text[0], "")
    cut = 30 - (5 if delim else 4)
    while cut > 0 and (raw[cut] & 0xC0) == 0x80:  # back to the start of the code point
        cut -= 1
    return raw[:cut].decode("utf-8") + "..." + delim


def _index_error(expr: str, target: Any, key: str | int) -> JqRuntimeError:
    key_kind = "string" if isinstance(key, str) else "number"
    return JqRuntimeError(expr, f"Cannot index {json_type(target)} with {key_kind} ({_dump_trunc(key)})")


def _iterate_error(expr: str, target: Any) -> JqRuntimeError:
    return JqRuntimeError(expr, f"Cannot iterate over {json_type(target)} ({_dump_trunc(target)})")


def _literal(node: Node) -> Any:
    """The value of a literal node, or raise _UnsupportedError."""
    if isinstance(node, Literal):
        return node.value
    if isinstance(node, String) and node.format is None and node.constant is not None:
        return node.constant
    if isinstance(node, Number | Neg):
        value = _number(node)
        if value is None:
            raise _UnsupportedError
        return value
    if isinstance(node, Collect) and node.body is None:
        return []
    if isinstance(node, ObjectCons) and not node.entries:
        return {}
    raise _UnsupportedError


def _number(node: Node) -> int | float | None:
    if isinstance(node, Neg):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if not isinstance(node, Number):
        return None
    value = node.value
    if isinstance(value, float) and value.is_integer() and abs(value) < _SAFE_INT:
        return int(value)
    if isinstance(value, int) and abs(value) >= _SAFE_INT:
        return None  # libjq keeps big literals' text; leave them to libjq
    return value


def _key(node: Node) -> str | int:
    if isinstance(node, String) and node.format is None and node.constant is not None:
        return node.constant
    value = _number(node)
    if isinstance(value, int):
        return value
    raise _UnsupportedError


def _index(expr: str, target: Any, key: str | int, optional: bool) -> tuple[bool, Any]:
    """(True, value) or (False, None) for a suppressed error; raises the jq error otherwise."""
    if isinstance(key, str):
        if isinstance(target, dict):
            return True, target.get(key)
    elif isinstance(target, list):
        n = len(target)
        i = key + n if key < 0 else key
        return True, target[i] if 0 <= i < n else None
    if target is None:
        return True, None
    if optional:
        return False, None
    raise _index_error(expr, target, key)


def _index_raw(expr: str, target: Any, key: str | int, optional: bool) -> tuple[bool, Any]:
    """`_index` on the caller's own object: the same answer as on its normalised form, or NotPlainError."""
    if isinstance(key, str):
        if type(target) is dict:
            found = target.get(key)
            if found is None and not _str_keyed(target):  # a key normalised to `key` (YAML `1:`) may be there
                raise NotPlainError
            return True, found
    elif type(target) is list:
        n = len(target)
        i = key + n if key < 0 else key
        return True, target[i] if 0 <= i < n else None
    if target is None:
        return True, None
    if type(target) is dict or type(target) is list or _plain_scalar(target):
        if optional:
            return False, None
        raise _index_error(expr, target, key)
    raise NotPlainError  # normalised, it may be a container (a tuple, a Struct) or null (NaN)


def _index_steps(node: Node) -> tuple[list[tuple[str | int, bool]], Node]:
    """The index steps ending at `node` (each key with whether it is optional, first step first) and the node
    they start from."""
    steps: list[tuple[str | int, bool]] = []
    while isinstance(node, Index):
        steps.append((_key(node.key), node.optional))
        node = node.target
    steps.reverse()
    return steps, node


def _simple_chain(node: Node) -> list[tuple[str | int, bool]] | None:
    """The steps of `.a.b[0]?...` (indexes only, from `.`), or None."""
    steps, start = _index_steps(node)
    return steps if isinstance(start, Identity) else None


def _iterated_chain(
    node: Node,
) -> tuple[list[tuple[str | int, bool]], bool, list[tuple[str | int, bool]]] | None:
    """The steps before and after the one iteration of `.a.b[]?.c...` or `.a.b[]? | .c...` (a pod template's
    path: `.spec.replicatedJobs[]? | .template`), with whether the iteration is optional; None for any other
    shape."""
    after: list[tuple[str | int, bool]] = []
    if isinstance(node, Pipe):
        right = _simple_chain(node.right)
        if right is None:
            return None
        after = right
        node = node.left
    suffix, start = _index_steps(node)
    if not isinstance(start, Iterate):
        return None
    prefix = _simple_chain(start.target)
    if prefix is None:
        return None
    return prefix, start.optional, suffix + after


def _compile_iterated(
    expr: str,
    prefix: list[tuple[str | int, bool]],
    optional: bool,
    suffix: list[tuple[str | int, bool]],
    raw: bool,
) -> FastEvaluator:
    """What `_gen`'s generators give for `_iterated_chain`'s shape, as loops rather than a generator per step and
    element (issue 19: a complete JobSet resolution, which reads its pod templates so, 1.296 M -> 1.268 M
    instructions): the same outputs in the same order, the same errors (`NotPlainError` where the generators
    raise it)."""
    step = _index_raw if raw else _index

    def run(value: Any) -> list[Any]:
        for key, opt in prefix:
            ok, value = step(expr, value, key, opt)
            if not ok:
                return []
        if raw:
            kind = type(value)
            if kind is list:
                items = value
            elif kind is dict:
                if not _str_keyed(value):
                    raise NotPlainError
                items = [value[k] for k in sorted(value)]
            elif value is not None and not _plain_scalar(value):
                raise NotPlainError
            elif optional:
                return []
            else:
                raise _iterate_error(expr, value)
        elif isinstance(value, list):
            items = value
        elif isinstance(value, dict):
            items = [value[k] for k in sorted(value)]
        elif optional:
            return []
        else:
            raise _iterate_error(expr, value)
        found: list[Any] = []
        for item in items:
            for key, opt in suffix:
                ok, item = step(expr, item, key, opt)  # noqa: PLW2901 - each step reads the one before
                if not ok:
                    break
            else:
                found.append(item)
        return found

    return run


def _compile_chain(expr: str, steps: list[tuple[str | int, bool]], raw: bool) -> FastEvaluator:
    if raw:
        return _compile_chain_raw(expr, steps)
    if all(isinstance(k, str) and not opt for k, opt in steps):
        keys = [k for k, _ in steps]

        def run_fields(value: Any) -> list[Any]:
            for k in keys:
                if isinstance(value, dict):
                    value = value.get(k)
                elif value is not None:
                    raise _index_error(expr, value, k)
            return [value]

        return run_fields

    def run(value: Any) -> list[Any]:
        for k, opt in steps:
            ok, value = _index(expr, value, k, opt)
            if not ok:
                return []
        return [value]

    return run


def _compile_chain_raw(expr: str, steps: list[tuple[str | int, bool]]) -> FastEvaluator:
    if all(isinstance(k, str) and not opt for k, opt in steps):
        keys = [k for k, _ in steps]

        def run_fields(value: Any) -> list[Any]:
            for k in keys:
                if type(value) is dict:
                    found = value.get(k)
                    if found is None and not _str_keyed(value):
                        raise NotPlainError
                    value = found
                elif value is not None:
                    if type(value) is list or _plain_scalar(value):
                        raise _index_error(expr, value, k)
                    raise NotPlainError
            return [value]

        return run_fields

    def run(value: Any) -> list[Any]:
        for k, opt in steps:
            ok, value = _index_raw(expr, value, k, opt)
            if not ok:
                return []
        return [value]

    return run


def _gen(expr: str, node: Node, raw: bool = False) -> _Gen:
    """A generator function for node (depth-first, in jq's output order)."""
    if isinstance(node, Identity):

        def identity(value: Any) -> Iterator[Any]:
            yield value

        return identity
    if isinstance(node, Index):
        key = _key(node.key)
        optional = node.optional
        inner = _gen(expr, node.target, raw)
        step = _index_raw if raw else _index

        def index(value: Any) -> Iterator[Any]:
            for target in inner(value):
                ok, out = step(expr, target, key, optional)
                if ok:
                    yield out

        return index
    if isinstance(node, Iterate):
        optional = node.optional
        inner = _gen(expr, node.target, raw)
        if raw:

            def iterate_raw(value: Any) -> Iterator[Any]:
                for target in inner(value):
                    kind = type(target)
                    if kind is list:
                        yield from target
                    elif kind is dict:
                        if not _str_keyed(target):
                            raise NotPlainError
                        for k in sorted(target):
                            yield target[k]
                    elif target is not None and not _plain_scalar(target):
                        raise NotPlainError
                    elif not optional:
                        raise _iterate_error(expr, target)

            return iterate_raw

        def iterate(value: Any) -> Iterator[Any]:
            for target in inner(value):
                if isinstance(target, list):
                    yield from target
                elif isinstance(target, dict):
                    for k in sorted(target):
                        yield target[k]
                elif not optional:
                    raise _iterate_error(expr, target)

        return iterate
    if isinstance(node, Pipe):
        left = _gen(expr, node.left, raw)
        right = _gen(expr, node.right, raw)

        def pipe(value: Any) -> Iterator[Any]:
            for mid in left(value):
                yield from right(mid)

        return pipe
    if isinstance(node, Binary) and node.op == "//":
        left = _gen(expr, node.left, raw)
        right = _gen(expr, node.right, raw)
        if raw:

            def alternative_raw(value: Any) -> Iterator[Any]:
                found = False
                for out in left(value):
                    kind = type(out)
                    if kind not in _PLAIN_TYPES or (kind is float and not math.isfinite(out)):
                        raise NotPlainError  # normalised, it may be null (NaN) or read as another truth value
                    if out is not None and out is not False:
                        found = True
                        yield out
                if not found:
                    yield from right(value)

            return alternative_raw

        def alternative(value: Any) -> Iterator[Any]:
            found = False
            for out in left(value):
                if out is not None and out is not False:
                    found = True
                    yield out
            if not found:
                yield from right(value)

        return alternative
    constant = _literal(node)
    if isinstance(constant, list | dict):

        def fresh(value: Any) -> Iterator[Any]:
            yield type(constant)()

        return fresh

    def literal(value: Any) -> Iterator[Any]:
        yield constant

    return literal


@functools.lru_cache(maxsize=4096)
def compile_fast(expr: str) -> FastEvaluator | None:
    """A pure-Python evaluator `f(obj) -> list of outputs` for a plain-path expression, or None when the
    expression is outside the subset (or does not parse: libjq reports that). `obj` is normalised
    (`convert.normalize`). Errors raise JqRuntimeError with libjq's message."""
    return _build(expr, raw=False)


@functools.lru_cache(maxsize=4096)
def compile_fast_raw(expr: str) -> FastEvaluator | None:
    """`compile_fast` for the caller's own object, not normalised: objects iterate in sorted key order all the
    same, and where the object could read differently normalised (a key that is not a string, NaN, a tuple, a
    timestamp, any value of no JSON type where the path looks at it), `f` raises `NotPlainError` instead of
    answering. Outputs are the object's own values as they stand (normalise them before handing them out); an
    error is libjq's only when the object is plain JSON, so on an error evaluate the normalised tree again."""
    return _build(expr, raw=True)


def _build(expr: str, *, raw: bool) -> FastEvaluator | None:
    try:
        tree = parse(expr)
    except JqError:
        return None
    try:
        steps = _simple_chain(tree)
        if steps is not None:
            return _compile_chain(expr, steps, raw)
        iterated = _iterated_chain(tree)
        if iterated is not None:
            return _compile_iterated(expr, *iterated, raw)
        gen = _gen(expr, tree, raw)
    except _UnsupportedError:
        return None

    def run(value: Any) -> list[Any]:
        return list(gen(value))

    return run


# --------------------------------------------------------------------------------------------- paths (write-back)


def _path_gen(expr: str, node: Node) -> _PathGen:
    """A generator of (path, value) pairs for node, as libjq's `path(node)` (the paths of the same outputs, in
    order). Only selecting nodes: `.`, `.key`, `.[n]` (n >= 0: libjq keeps a negative index as it is written),
    `.[]`, `?`, `|` and `a // b` of these; a literal anywhere is not a path and is left to libjq."""
    if isinstance(node, Identity):

        def identity(value: Any, at: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
            yield at, value

        return identity
    if isinstance(node, Index):
        key = _key(node.key)
        if isinstance(key, int) and key < 0:
            raise _UnsupportedError
        optional = node.optional
        inner = _path_gen(expr, node.target)

        def index(value: Any, at: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
            for where, target in inner(value, at):
                ok, out = _index(expr, target, key, optional)
                if ok:
                    yield (*where, key), out

        return index
    if isinstance(node, Iterate):
        optional = node.optional
        inner = _path_gen(expr, node.target)

        def iterate(value: Any, at: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
            for where, target in inner(value, at):
                if isinstance(target, list):
                    for i, item in enumerate(target):
                        yield (*where, i), item
                elif isinstance(target, dict):
                    for k in sorted(target):
                        yield (*where, k), target[k]
                elif not optional:
                    raise _iterate_error(expr, target)

        return iterate
    if isinstance(node, Pipe):
        left = _path_gen(expr, node.left)
        right = _path_gen(expr, node.right)

        def pipe(value: Any, at: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
            for where, mid in left(value, at):
                yield from right(mid, where)

        return pipe
    if isinstance(node, Binary) and node.op == "//":
        left = _path_gen(expr, node.left)
        right = _path_gen(expr, node.right)

        def alternative(value: Any, at: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
            found = False
            for where, out in left(value, at):
                if out is not None and out is not False:
                    found = True
                    yield where, out
            if not found:
                yield from right(value, at)

        return alternative
    raise _UnsupportedError


@functools.lru_cache(maxsize=4096)
def compile_fast_paths(expr: str) -> PathFinder | None:
    """`f(obj) -> [path(expr)]` in pure Python for a plain-path expression (see `_path_gen`), or None (libjq, in the
    worker, answers the rest). `obj` must be normalised (`convert.normalize`): objects iterate in sorted key order,
    as the text libjq is given. Errors raise JqRuntimeError with libjq's message."""
    try:
        gen = _path_gen(expr, parse(expr))
    except (JqError, _UnsupportedError):
        return None

    def run(value: Any) -> list[list[Any]]:
        return [list(where) for where, _ in gen(value, ())]

    return run
