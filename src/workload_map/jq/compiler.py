"""The jq compiler: our syntax tree to Python closures, for the jq that definitions use.

`compile_closure(expr)` returns `f(value, max_results) -> list of outputs` for an expression in the covered subset,
or None (the caller then uses the fast path or libjq). The decision is made once per expression, from the parse tree,
before any object is seen: a construct the compiler does not know, a recursive definition, a big integer literal or
a regular expression makes the whole expression fall back.

Semantics are the engine's (libjq 1.8 on input normalised as gojq sees it, see docs/jq.md): the input is the
Document's normalised tree (keys sorted, integral floats as ints), objects iterate in their dict order (sorted for
the input, construction order for objects the expression builds), integral numbers are ints, and errors carry
libjq's messages. Each node compiles to a generator function `gen(value, env)`; nodes that always give exactly one
output also compile to a plain function `one(value, env)`, which is what makes paths, comparisons and boolean logic
cheap. jq's own definitions of its builtins (`to_entries`, `from_entries`, `ltrimstr`, `join`, ...) are compiled from
their jq source (jq 1.8.2's `builtin.jq`), on top of the primitives written here.

Containment: the outputs are capped by the caller (`MAX_RESULTS`), and every evaluation has a step budget
(`STEP_BUDGET`): each element an iteration visits, each reduction step and the size of each string or array an
operator builds cost steps, so an expression that would run or allocate without bound stops with a `JqLimitError`.
An expression that can build nesting of its own (a `reduce`, `foreach` or `def` of its own: `reduce ... (null;
[.])`) has its outputs checked against `MAX_DEPTH` levels, so no output is too deep for the code that reads it.
Both stops are `InProcessStopError`s, which the Document records in its policy's `stops` (the CLI names the
definition and exits 1), unlike the output cap, an ordinary jq error.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

import msgspec

from workload_map._jsontype import json_type
from workload_map._limits import MAX_DEPTH
from workload_map.errors import WorkloadMapError
from workload_map.jq import ast as A  # noqa: N812 - the node types, read as A.Index, A.Pipe, ...
from workload_map.jq import facts
from workload_map.jq.errors import InProcessStopError, JqError, JqLimitError, JqRuntimeError
from workload_map.jq.fastpath import _dump_trunc
from workload_map.jq.parser import parse
from workload_map.jq.runtime import STEP_BUDGET, ascii_text

__all__ = ["STEP_BUDGET", "InProcessStopError", "compile_closure", "covered"]

if TYPE_CHECKING:  # annotations only: a `Callable[...]` alias is ~0.1 million instructions to make at import (issue 19)
    Closure = Callable[[Any, int], list[Any]]
    Env = dict[int, Any]
    Gen = Callable[[Any, Env], Iterator[Any]]
    One = Callable[[Any, Env], Any]
    Native = Callable[["_Compiler", list["_Code"]], "_Code"]

_SAFE: Final = 2**53
_DBL_MAX: Final = 1.7976931348623157e308
_NUM: Final = (int, float)
_STEPS: Final = 0  # env key of the step counter (a one-element list)
_MAX_NODES: Final = 20_000  # compiled nodes per expression (inlined definitions included)


class _DeclineError(WorkloadMapError):
    """The expression is outside what the compiler covers (it falls back to libjq)."""


class _JqFailure(WorkloadMapError):  # noqa: N818 - jq's own error value travelling up
    """A jq error: `value` is what `try ... catch .` sees (a message string, or the value given to `error`)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class _Break(WorkloadMapError):  # noqa: N818 - jq's `break $label`, not an error
    __slots__ = ("token",)

    def __init__(self, token: object) -> None:
        super().__init__()
        self.token = token


class _BudgetError(WorkloadMapError):
    """The evaluation used up its step budget."""


# --------------------------------------------------------------------------------------------------- values


def _desc(value: Any) -> str:
    return f"{json_type(value)} ({_dump_trunc(value)})"


def _fail(message: str) -> _JqFailure:
    return _JqFailure(message)


def _truthy(value: Any) -> bool:
    return value is not None and value is not False


def _charge(env: Env, steps: int) -> None:
    counter = env[_STEPS]
    counter[0] -= steps
    if counter[0] < 0:
        raise _BudgetError


def _fnum(value: float) -> int | float:
    """A computed double as the engine hands it back: integral values below 2^53 are ints."""
    if value.is_integer() and -_SAFE < value < _SAFE:
        return int(value)
    return value


def _float(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _rank(value: Any) -> int:
    if value is None:
        return 0
    if value is False:
        return 1
    if value is True:
        return 2
    kind = type(value)
    if kind is int or kind is float:
        return 3
    if kind is str:
        return 4
    if kind is list:
        return 5
    return 6


def _key(value: Any) -> Any:
    """A sort key giving jq's order: null < false < true < numbers < strings < arrays < objects; arrays
    element-wise, objects by their sorted keys and then their values in key order."""
    kind = type(value)
    if kind is str:
        return (4, value)
    if kind is int or kind is float:
        return (3, value)
    if value is None:
        return (0,)
    if kind is bool:
        return (2,) if value else (1,)
    if kind is list:
        return (5, tuple(_key(item) for item in value))
    keys = sorted(value)
    return (6, tuple(keys), tuple(_key(value[k]) for k in keys))


def _eq(a: Any, b: Any) -> bool:
    ta = type(a)
    tb = type(b)
    if ta is tb and ta is not list and ta is not dict:
        return bool(a == b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return bool(a == b)
    if ta is not tb:
        return False
    return bool(_key(a) == _key(b))


def _cmp(a: Any, b: Any) -> int:
    ta = type(a)
    tb = type(b)
    if ((ta is int or ta is float) and (tb is int or tb is float)) or (ta is str and tb is str):
        return -1 if a < b else (1 if a > b else 0)
    ka = _key(a)
    kb = _key(b)
    return -1 if ka < kb else (1 if ka > kb else 0)


# --- number and JSON text -------------------------------------------------------------------------------------


def _format_float(value: float) -> str:
    """libjq's `jvp_dtoa_fmt`: shortest digits; an exponent when the point is far from them."""
    if math.isnan(value):
        return "null"
    if math.isinf(value):
        value = _DBL_MAX if value > 0 else -_DBL_MAX
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0") or "0"
    decpt = len(digits) + exponent
    out = "-" if sign else ""
    if decpt <= -4 or decpt > len(text) + 15:
        exp = decpt - 1
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{out}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if decpt <= 0:
        return f"{out}0.{'0' * -decpt}{text}"
    if decpt >= len(text):
        return out + text + "0" * (decpt - len(text))
    return f"{out}{text[:decpt]}.{text[decpt:]}"


def _format_number(value: int | float) -> str:
    if type(value) is int:
        return str(value)
    return _format_float(value)


_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\r": "\\r", "\n": "\\n", "\f": "\\f"}


def _dump_string(text: str) -> str:
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = ['"']
    for ch in text:
        code = ord(ch)
        escaped = _ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _dump(value: Any) -> str:
    """`tojson`: compact JSON in the value's own key order, numbers and strings as libjq prints them."""
    kind = type(value)
    if kind is str:
        return _dump_string(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int or kind is float:
        return "null" if kind is float and math.isnan(value) else _format_number(value)  # libjq: NaN is null
    if kind is list:
        return "[" + ",".join(_dump(item) for item in value) + "]"
    return "{" + ",".join(f"{_dump_string(k)}:{_dump(v)}" for k, v in value.items()) + "}"


def _tostring(value: Any) -> str:
    return value if type(value) is str else _dump(value)


def _output(value: Any) -> Any:
    """An output as libjq's binding hands it back: NaN is null, infinities the largest doubles, integral
    doubles ints."""
    if type(value) is float:
        if math.isnan(value):
            return None
        if math.isinf(value):
            return _DBL_MAX if value > 0 else -_DBL_MAX
        if value.is_integer():
            return int(value)
    return value


# --- operators --------------------------------------------------------------------------------------------------


def _add(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        r = a + b
        return r if -_SAFE < r < _SAFE else _fnum(_float(a) + _float(b))
    if a is None:
        return b
    if b is None:
        return a
    if (ta is int or ta is float) and (tb is int or tb is float):
        return _fnum(_float(a) + _float(b))
    if ta is str and tb is str:
        return a + b
    if ta is list and tb is list:
        return a + b
    if ta is dict and tb is dict:
        merged = dict(a)
        merged.update(b)
        return merged
    raise _fail(f"{_desc(a)} and {_desc(b)} cannot be added")


def _plus(a: Any, b: Any, env: Env) -> Any:
    """`a + b`, charging concatenations to the budget (one step per 16 characters or elements)."""
    kind = type(a)
    if (kind is str or kind is list) and type(b) is kind:
        _charge(env, (len(a) + len(b)) >> 4)
    return _add(a, b)


def _sub(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        r = a - b
        return r if -_SAFE < r < _SAFE else _fnum(_float(a) - _float(b))
    if (ta is int or ta is float) and (tb is int or tb is float):
        return _fnum(_float(a) - _float(b))
    if ta is list and tb is list:
        return [x for x in a if not any(_eq(x, y) for y in b)]
    raise _fail(f"{_desc(a)} and {_desc(b)} cannot be subtracted")


def _repeat(text: str, times: Any, env: Env) -> Any:
    if math.isnan(times) or times < 0:
        return None
    count = int(min(times, 2**31 - 1))
    _charge(env, len(text) * count)
    return text * count


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    merged = dict(a)
    for k, v in b.items():
        old = merged.get(k)
        merged[k] = _deep_merge(old, v) if type(old) is dict and type(v) is dict else v
    return merged


def _mul(a: Any, b: Any, env: Env) -> Any:
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        r = a * b
        return r if -_SAFE < r < _SAFE else _fnum(_float(a) * _float(b))
    if (ta is int or ta is float) and (tb is int or tb is float):
        return _fnum(_float(a) * _float(b))
    if ta is str and (tb is int or tb is float):
        return _repeat(a, b, env)
    if tb is str and (ta is int or ta is float):
        return _repeat(b, a, env)
    if ta is dict and tb is dict:
        return _deep_merge(a, b)
    raise _fail(f"{_desc(a)} and {_desc(b)} cannot be multiplied")


def _div(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        if b == 0:
            raise _fail(f"{_desc(a)} and {_desc(b)} cannot be divided because the divisor is zero")
        return _fnum(_float(a) / _float(b))
    if ta is str and tb is str:
        return _split(a, b)
    raise _fail(f"{_desc(a)} and {_desc(b)} cannot be divided")


def _to_intmax(value: int | float) -> int:
    if type(value) is int:
        return value
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return 2**63 - 1 if value > 0 else -(2**63)
    return int(value)


def _mod(a: Any, b: Any) -> Any:
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        if (ta is float and math.isnan(a)) or (tb is float and math.isnan(b)):
            return math.nan
        x = _to_intmax(a)
        y = _to_intmax(b)
        if y == 0:
            raise _fail(f"{_desc(a)} and {_desc(b)} cannot be divided (remainder) because the divisor is zero")
        r = abs(x) % abs(y)
        return -r if x < 0 else r
    raise _fail(f"{_desc(a)} and {_desc(b)} cannot be divided (remainder)")


def _split(text: str, sep: str) -> list[str]:
    if not text:
        return []
    if not sep:
        return list(text)
    return text.split(sep)


# --- indexing -----------------------------------------------------------------------------------------------------


def _index_error(target: Any, key: Any) -> _JqFailure:
    return _fail(f"Cannot index {json_type(target)} with {json_type(key)} ({_dump_trunc(key)})")


def _slice_bounds(length: int, start: Any, end: Any) -> tuple[int, int]:
    def bound(value: Any, default: int, up: bool) -> int:
        if value is None:
            return default
        if type(value) not in _NUM:
            raise _fail("Array/string slice indices must be integers")
        number = float(value)
        if number < 0:
            number += length
        number = math.ceil(number) if up else math.floor(number)
        return max(0, min(length, int(number))) if math.isfinite(number) else (length if number > 0 else 0)

    lo = bound(start, 0, False)
    hi = bound(end, length, True)
    return lo, max(lo, hi)


def _slice(target: Any, start: Any, end: Any) -> Any:
    kind = type(target)
    if target is None:
        return None
    if kind is list or kind is str:
        lo, hi = _slice_bounds(len(target), start, end)
        return target[lo:hi]
    raise _fail(f"Cannot index {json_type(target)} with object ({_dump_trunc({'start': start, 'end': end})})")


def _indices(target: list[Any], sub: list[Any]) -> Any:
    if not sub:
        return []
    n = len(sub)
    return [i for i in range(len(target) - n + 1) if all(_eq(target[i + j], sub[j]) for j in range(n))]


def _index(target: Any, key: Any) -> Any:
    tt = type(target)
    tk = type(key)
    if tt is dict:
        if tk is str:
            return target.get(key)
    elif tt is list:
        if tk is int:
            n = len(target)
            i = key + n if key < 0 else key
            return target[i] if 0 <= i < n else None
        if tk is float:
            if math.isnan(key):
                return None
            n = len(target)
            i = int(key) if math.isfinite(key) else (2**63 if key > 0 else -(2**63))
            i = i + n if i < 0 else i
            return target[i] if 0 <= i < n else None
        if tk is list:
            return _indices(target, key)
        if tk is dict:
            return _slice_object(target, key)
    elif target is None:
        if tk is str or tk is int or tk is float or tk is dict:
            return None
    elif tt is str and tk is dict:
        return _slice_object(target, key)
    raise _index_error(target, key)


def _slice_object(target: Any, key: dict[str, Any]) -> Any:
    if set(key) != {"start", "end"}:
        raise _fail("Array/string slice indices must be integers")
    return _slice(target, key["start"], key["end"])


def _iterate_error(value: Any) -> _JqFailure:
    return _fail(f"Cannot iterate over {_desc(value)}")


def _values(value: Any, env: Env) -> Any:
    """The elements `.[]` visits (a list or a dict view), charged to the budget; raises for other values."""
    kind = type(value)
    if kind is list:
        if value:
            _charge(env, len(value))
        return value
    if kind is dict:
        if value:
            _charge(env, len(value))
        return value.values()
    raise _iterate_error(value)


# --------------------------------------------------------------------------------------------------- compiled nodes


class _Code(msgspec.Struct):
    """A compiled node: `gen` always; `one` when the node gives exactly one output (or raises)."""

    gen: Gen
    one: One | None = None


def _from_one(one: One) -> _Code:
    def gen(v: Any, env: Env) -> Iterator[Any]:
        yield one(v, env)

    return _Code(gen, one)


def _const(value: Any) -> _Code:
    if type(value) in (list, dict):
        raise _DeclineError  # constants are scalars; containers are built fresh

    def one(v: Any, env: Env) -> Any:
        return value

    return _from_one(one)


_EMPTY: Final = _Code(lambda v, env: iter(()))
_IDENTITY: Final = _from_one(lambda v, env: v)


class _Def(msgspec.Struct):
    definition: A.FuncDef
    scope: _Scope


class _Param(msgspec.Struct):
    node: A.Node
    scope: _Scope


class _Scope(msgspec.Struct):
    functions: dict[str, _Def | _Param] = msgspec.field(default_factory=dict)
    variables: dict[str, int] = msgspec.field(default_factory=dict)
    labels: dict[str, int] = msgspec.field(default_factory=dict)
    prelude: bool = False

    def child(self) -> _Scope:
        return _Scope(dict(self.functions), dict(self.variables), dict(self.labels), self.prelude)


class _Compiler:
    def __init__(self) -> None:
        self.next_key = 1
        self.nodes = 0
        self.expanding: list[int] = []

    def fresh(self) -> int:
        key = self.next_key
        self.next_key += 1
        return key

    # --- dispatch ----------------------------------------------------------------------------------------------

    def compile(self, node: A.Node, scope: _Scope) -> _Code:
        self.nodes += 1
        if self.nodes > _MAX_NODES:
            raise _DeclineError
        method = getattr(self, "c_" + type(node).__name__, None)
        if method is None:
            raise _DeclineError
        code: _Code = method(node, scope)
        return code

    def c_Identity(self, node: A.Identity, scope: _Scope) -> _Code:  # noqa: N802
        return _IDENTITY

    def c_RecurseAll(self, node: A.RecurseAll, scope: _Scope) -> _Code:  # noqa: N802
        def walk(v: Any, env: Env) -> Iterator[Any]:
            yield v
            kind = type(v)
            if kind is list or kind is dict:
                for item in _values(v, env):
                    yield from walk(item, env)

        return _Code(walk)

    def c_Literal(self, node: A.Literal, scope: _Scope) -> _Code:  # noqa: N802
        return _const(node.value)

    def c_Number(self, node: A.Number, scope: _Scope) -> _Code:  # noqa: N802
        value = node.value
        if isinstance(value, int):
            if abs(value) >= _SAFE:
                raise _DeclineError  # libjq keeps a big literal's digits; leave it to libjq
            return _const(value)
        if math.isinf(value) or (value.is_integer() and abs(value) >= _SAFE):
            raise _DeclineError
        return _const(_fnum(value))

    def c_String(self, node: A.String, scope: _Scope) -> _Code:  # noqa: N802
        constant = node.constant
        if constant is not None:
            return _const(constant)
        fmt = _FORMATS.get(node.format or "text")
        if fmt is None:
            raise _DeclineError
        parts: list[str | _Code] = [p if isinstance(p, str) else self.compile(p, scope) for p in node.parts]
        ones = [p.one if isinstance(p, _Code) else None for p in parts]
        if all(o is not None for p, o in zip(parts, ones, strict=True) if isinstance(p, _Code)):
            pieces: list[str | One] = [p if isinstance(p, str) else o for p, o in zip(parts, ones, strict=True)]  # type: ignore[misc]

            def one(v: Any, env: Env) -> Any:
                # jq evaluates the interpolations right to left
                texts = [p if isinstance(p, str) else fmt(p(v, env)) for p in reversed(pieces)]
                texts.reverse()
                return "".join(texts)

            return _from_one(one)
        codes = [p for p in parts if isinstance(p, _Code)]

        def gen(v: Any, env: Env) -> Iterator[Any]:
            # the last interpolation varies slowest (jq evaluates them right to left)
            for values in _product_last_outer([c.gen for c in codes], v, env):
                it = iter(values)
                yield "".join(p if isinstance(p, str) else fmt(next(it)) for p in parts)

        return _Code(gen)

    def c_Format(self, node: A.Format, scope: _Scope) -> _Code:  # noqa: N802
        fmt = _FORMATS.get(node.name)
        if fmt is None:
            raise _DeclineError
        return _from_one(lambda v, env: fmt(v))

    def c_Var(self, node: A.Var, scope: _Scope) -> _Code:  # noqa: N802
        key = scope.variables.get(node.name)
        if key is None:
            raise _DeclineError  # $ENV, $__prog_args, unbound: libjq reports or answers them
        return _from_one(lambda v, env: env[key])

    def c_Index(self, node: A.Index, scope: _Scope) -> _Code:  # noqa: N802
        target = self.compile(node.target, scope)
        optional = node.optional
        key_node = node.key
        if isinstance(key_node, A.String) and key_node.constant is not None:
            name = key_node.constant
            if target.one is not None and not optional:
                t_first: One = target.one

                def field_one(v: Any, env: Env) -> Any:
                    t = t_first(v, env)
                    if type(t) is dict:
                        return t.get(name)
                    if t is None:
                        return None
                    raise _index_error(t, name)

                return _from_one(field_one)
            t_gen = target.gen

            def field_gen(v: Any, env: Env) -> Iterator[Any]:
                for t in t_gen(v, env):
                    if type(t) is dict:
                        yield t.get(name)
                    elif t is None:
                        yield None
                    elif not optional:
                        raise _index_error(t, name)

            return _Code(field_gen)
        key = self.compile(key_node, scope)
        t_one = target.one
        k_one = key.one
        if t_one is not None and k_one is not None and not optional:

            def index_one(v: Any, env: Env) -> Any:
                k = k_one(v, env)  # the key first, as jq
                return _index(t_one(v, env), k)

            return _from_one(index_one)
        t_gen = target.gen
        k_gen = key.gen

        def index_gen(v: Any, env: Env) -> Iterator[Any]:
            for k in k_gen(v, env):
                for t in t_gen(v, env):
                    try:
                        out = _index(t, k)
                    except _JqFailure:
                        if optional:
                            continue
                        raise
                    yield out

        return _Code(index_gen)

    def c_Slice(self, node: A.Slice, scope: _Scope) -> _Code:  # noqa: N802
        target = self.compile(node.target, scope)
        start = self.compile(node.start, scope) if node.start is not None else _const(None)
        end = self.compile(node.end, scope) if node.end is not None else _const(None)
        optional = node.optional
        t_gen, s_gen, e_gen = target.gen, start.gen, end.gen

        def gen(v: Any, env: Env) -> Iterator[Any]:
            for e in e_gen(v, env):
                for s in s_gen(v, env):
                    for t in t_gen(v, env):
                        try:
                            out = _slice(t, s, e)
                        except _JqFailure:
                            if optional:
                                continue
                            raise
                        yield out

        if target.one is not None and start.one is not None and end.one is not None and not optional:
            t1, s1, e1 = target.one, start.one, end.one

            def slice_one(v: Any, env: Env) -> Any:
                e = e1(v, env)
                s = s1(v, env)
                return _slice(t1(v, env), s, e)

            return _Code(gen, slice_one)
        return _Code(gen)

    def c_Iterate(self, node: A.Iterate, scope: _Scope) -> _Code:  # noqa: N802
        target = self.compile(node.target, scope)
        optional = node.optional
        t_one = target.one
        if t_one is not None:

            def iterate_one(v: Any, env: Env) -> Iterator[Any]:
                t = t_one(v, env)
                kind = type(t)
                if kind is list or kind is dict:
                    return iter(_values(t, env))
                if optional:
                    return iter(())
                raise _iterate_error(t)

            return _Code(iterate_one)
        t_gen = target.gen

        def iterate(v: Any, env: Env) -> Iterator[Any]:
            for t in t_gen(v, env):
                kind = type(t)
                if kind is list or kind is dict:
                    yield from _values(t, env)
                elif not optional:
                    raise _iterate_error(t)

        return _Code(iterate)

    def c_Try(self, node: A.Try, scope: _Scope) -> _Code:  # noqa: N802
        body = self.compile(node.body, scope).gen
        handler = self.compile(node.handler, scope).gen if node.handler is not None else None

        def gen(v: Any, env: Env) -> Iterator[Any]:
            try:
                yield from body(v, env)
            except _JqFailure as exc:
                if handler is not None:
                    yield from handler(exc.value, env)

        return _Code(gen)

    def c_Neg(self, node: A.Neg, scope: _Scope) -> _Code:  # noqa: N802
        if isinstance(node.operand, A.Number):
            return self.c_Number(A.Number("-" + node.operand.text, -node.operand.value), scope)
        operand = self.compile(node.operand, scope)
        return self._map1(operand, _negate)

    def c_Collect(self, node: A.Collect, scope: _Scope) -> _Code:  # noqa: N802
        if node.body is None:
            return _from_one(lambda v, env: [])
        body = self.compile(node.body, scope)
        b_one = body.one
        if b_one is not None:
            return _from_one(lambda v, env: [b_one(v, env)])
        b_gen = body.gen
        return _from_one(lambda v, env: list(b_gen(v, env)))

    def c_ObjectCons(self, node: A.ObjectCons, scope: _Scope) -> _Code:  # noqa: N802
        entries: list[tuple[_Code, _Code]] = []
        for entry in node.entries:
            key = self.compile(entry.key, scope)
            if entry.value is None:
                k_gen = key.gen

                def shorthand(v: Any, env: Env, k_gen: Gen = k_gen) -> Iterator[Any]:
                    for k in k_gen(v, env):
                        yield _index(v, k)

                value = _Code(shorthand)
                if key.one is not None:
                    k_one = key.one
                    value = _from_one(functools.partial(_shorthand_one, k_one))
            else:
                value = self.compile(entry.value, scope)
            entries.append((key, value))
        if all(k.one is not None and v.one is not None for k, v in entries):
            pairs = [(k.one, v.one) for k, v in entries]

            def one(v: Any, env: Env) -> Any:
                out: dict[str, Any] = {}
                for k_one, v_one in pairs:
                    k = k_one(v, env)  # type: ignore[misc]
                    if type(k) is not str:
                        raise _object_key_error(k)
                    out[k] = v_one(v, env)  # type: ignore[misc]
                return out

            return _from_one(one)

        def gen(v: Any, env: Env) -> Iterator[Any]:
            yield from _build_object(entries, 0, {}, v, env)

        return _Code(gen)

    def c_Pipe(self, node: A.Pipe, scope: _Scope) -> _Code:  # noqa: N802
        left = self.compile(node.left, scope)
        right = self.compile(node.right, scope)
        l_one, r_one = left.one, right.one
        if l_one is not None and r_one is not None:
            return _from_one(lambda v, env: r_one(l_one(v, env), env))
        r_gen = right.gen
        if l_one is not None:
            return _Code(lambda v, env: r_gen(l_one(v, env), env))
        l_gen = left.gen
        if r_one is not None:

            def pipe_one(v: Any, env: Env) -> Iterator[Any]:
                for mid in l_gen(v, env):
                    yield r_one(mid, env)

            return _Code(pipe_one)

        def pipe(v: Any, env: Env) -> Iterator[Any]:
            for mid in l_gen(v, env):
                yield from r_gen(mid, env)

        return _Code(pipe)

    def c_Comma(self, node: A.Comma, scope: _Scope) -> _Code:  # noqa: N802
        left = self.compile(node.left, scope).gen
        right = self.compile(node.right, scope).gen

        def comma(v: Any, env: Env) -> Iterator[Any]:
            yield from left(v, env)
            yield from right(v, env)

        return _Code(comma)

    def c_Binary(self, node: A.Binary, scope: _Scope) -> _Code:  # noqa: N802
        op = node.op
        if op == "//":
            return self._alternative(node, scope)
        if op in ("and", "or"):
            return self._logic(node, scope)
        function = _BINARY.get(op)
        if function is None:
            raise _DeclineError  # assignments: libjq
        left = self.compile(node.left, scope)
        right = self.compile(node.right, scope)
        l_one, r_one = left.one, right.one
        with_env: Callable[[Any, Any, Env], Any] | None = {"*": _mul, "+": _plus}.get(op)
        if l_one is not None and r_one is not None:
            if with_env is not None:
                f3 = with_env

                def binary_env(v: Any, env: Env) -> Any:
                    b = r_one(v, env)  # jq evaluates the right operand first
                    return f3(l_one(v, env), b, env)

                return _from_one(binary_env)
            f2: Callable[[Any, Any], Any] = function

            def binary(v: Any, env: Env) -> Any:
                b = r_one(v, env)
                return f2(l_one(v, env), b)

            return _from_one(binary)
        l_gen, r_gen = left.gen, right.gen

        def gen(v: Any, env: Env) -> Iterator[Any]:
            for b in r_gen(v, env):
                for a in l_gen(v, env):
                    yield with_env(a, b, env) if with_env is not None else function(a, b)

        return _Code(gen)

    def _alternative(self, node: A.Binary, scope: _Scope) -> _Code:
        left = self.compile(node.left, scope)
        right = self.compile(node.right, scope)
        l_one, r_one = left.one, right.one
        if l_one is not None and r_one is not None:

            def alt_one(v: Any, env: Env) -> Any:
                out = l_one(v, env)
                return out if out is not None and out is not False else r_one(v, env)

            return _from_one(alt_one)
        l_gen, r_gen = left.gen, right.gen

        def alt(v: Any, env: Env) -> Iterator[Any]:
            found = False
            for out in l_gen(v, env):
                if out is not None and out is not False:
                    found = True
                    yield out
            if not found:
                yield from r_gen(v, env)

        return _Code(alt)

    def _logic(self, node: A.Binary, scope: _Scope) -> _Code:
        left = self.compile(node.left, scope)
        right = self.compile(node.right, scope)
        is_and = node.op == "and"
        l_one, r_one = left.one, right.one
        if l_one is not None and r_one is not None:
            if is_and:
                return _from_one(lambda v, env: _truthy(l_one(v, env)) and _truthy(r_one(v, env)))
            return _from_one(lambda v, env: _truthy(l_one(v, env)) or _truthy(r_one(v, env)))
        l_gen, r_gen = left.gen, right.gen

        def gen(v: Any, env: Env) -> Iterator[Any]:
            for a in l_gen(v, env):
                if _truthy(a) != is_and:
                    yield not is_and
                else:
                    for b in r_gen(v, env):
                        yield _truthy(b)

        return _Code(gen)

    def c_If(self, node: A.If, scope: _Scope) -> _Code:  # noqa: N802
        branches = [(node.cond, node.then), *node.elifs]
        otherwise = self.compile(node.otherwise, scope) if node.otherwise is not None else _IDENTITY
        code = otherwise
        for cond_node, then_node in reversed(branches):
            code = self._if(self.compile(cond_node, scope), self.compile(then_node, scope), code)
        return code

    @staticmethod
    def _if(cond: _Code, then: _Code, otherwise: _Code) -> _Code:
        c_one, t_one, o_one = cond.one, then.one, otherwise.one
        if c_one is not None and t_one is not None and o_one is not None:
            return _from_one(lambda v, env: t_one(v, env) if _truthy(c_one(v, env)) else o_one(v, env))
        c_gen, t_gen, o_gen = cond.gen, then.gen, otherwise.gen
        if c_one is not None:
            return _Code(lambda v, env: t_gen(v, env) if _truthy(c_one(v, env)) else o_gen(v, env))

        def gen(v: Any, env: Env) -> Iterator[Any]:
            for c in c_gen(v, env):
                yield from (t_gen if _truthy(c) else o_gen)(v, env)

        return _Code(gen)

    # --- bindings ----------------------------------------------------------------------------------------------

    def _pattern(self, pattern: A.Pattern, scope: _Scope) -> Callable[[Any, Env], Iterator[Env]]:
        """A destructuring pattern as `bind(value, env) -> envs` (several for `{(a, b): $x}` keys); new names
        are added to `scope` in jq's order."""
        if isinstance(pattern, A.VarPattern):
            key = self.fresh()
            scope.variables[pattern.name] = key

            def bind_var(value: Any, env: Env) -> Iterator[Env]:
                new = dict(env)
                new[key] = value
                yield new

            return bind_var
        if isinstance(pattern, A.ArrayPattern):
            parts = [self._pattern(p, scope) for p in pattern.elements]

            def bind_array(value: Any, env: Env) -> Iterator[Env]:
                # jq binds the last element first
                steps: list[tuple[Callable[[Any], Any], Callable[[Any, Env], Iterator[Env]]]] = [
                    (functools.partial(_index_at, i), p) for i, p in enumerate(parts)
                ]
                yield from _bind_all(steps[::-1], value, env)

            return bind_array
        if isinstance(pattern, A.ObjectPattern):
            steps: list[
                tuple[Callable[[Any, Env], Iterator[Any]], Callable[[Any, Env], Iterator[Env]] | None, int | None]
            ] = []
            for entry in pattern.entries:
                var_key = None
                if entry.var is not None:
                    var_key = self.fresh()
                    scope.variables[entry.var] = var_key
                key_code = self.compile(entry.key, scope)
                sub = self._pattern(entry.pattern, scope) if entry.pattern is not None else None
                steps.append((key_code.gen, sub, var_key))

            def bind_object(value: Any, env: Env) -> Iterator[Env]:
                yield from _bind_object(steps, 0, value, env)

            return bind_object
        raise _DeclineError

    def c_Bind(self, node: A.Bind, scope: _Scope) -> _Code:  # noqa: N802
        if len(node.patterns) != 1:
            raise _DeclineError  # `?//` alternatives: libjq
        source = self.compile(node.source, scope)
        inner = scope.child()
        pattern = node.patterns[0]
        if isinstance(pattern, A.VarPattern):
            key = self.fresh()
            inner.variables[pattern.name] = key
            body = self.compile(node.body, inner)
            s_one, b_one, s_gen, b_gen = source.one, body.one, source.gen, body.gen
            if s_one is not None and b_one is not None:

                def bind_one(v: Any, env: Env) -> Any:
                    new = dict(env)
                    new[key] = s_one(v, env)
                    return b_one(v, new)

                return _from_one(bind_one)

            def bind_gen(v: Any, env: Env) -> Iterator[Any]:
                for value in s_gen(v, env):
                    new = dict(env)
                    new[key] = value
                    yield from b_gen(v, new)

            return _Code(bind_gen)
        bind = self._pattern(pattern, inner)
        body_gen = self.compile(node.body, inner).gen
        s_gen = source.gen

        def destructure(v: Any, env: Env) -> Iterator[Any]:
            for value in s_gen(v, env):
                for new in bind(value, env):
                    yield from body_gen(v, new)

        return _Code(destructure)

    def c_Reduce(self, node: A.Reduce, scope: _Scope) -> _Code:  # noqa: N802
        if len(node.patterns) != 1:
            raise _DeclineError
        source = self.compile(node.source, scope).gen
        init = self.compile(node.init, scope).gen
        inner = scope.child()
        bind = self._pattern(node.patterns[0], inner)
        update = self.compile(node.update, inner).gen

        def gen(v: Any, env: Env) -> Iterator[Any]:
            for initial in init(v, env):
                state = initial
                for item in source(v, env):
                    for new in bind(item, env):
                        _charge(env, 1)
                        last = None
                        for last in update(state, new):  # noqa: B007 - the last output is the new state
                            pass
                        state = last
                yield state

        return _Code(gen)

    def c_Foreach(self, node: A.Foreach, scope: _Scope) -> _Code:  # noqa: N802
        if len(node.patterns) != 1:
            raise _DeclineError
        source = self.compile(node.source, scope).gen
        init = self.compile(node.init, scope).gen
        inner = scope.child()
        bind = self._pattern(node.patterns[0], inner)
        update = self.compile(node.update, inner).gen
        extract = self.compile(node.extract, inner).gen if node.extract is not None else None

        def gen(v: Any, env: Env) -> Iterator[Any]:
            for initial in init(v, env):
                state = initial
                for item in source(v, env):
                    for new in bind(item, env):
                        _charge(env, 1)
                        produced = False
                        for out in update(state, new):
                            produced = True
                            state = out
                            if extract is None:
                                yield out
                            else:
                                yield from extract(out, new)
                        if not produced:
                            state = None

        return _Code(gen)

    def c_Label(self, node: A.Label, scope: _Scope) -> _Code:  # noqa: N802
        inner = scope.child()
        key = self.fresh()
        inner.labels[node.name] = key
        body = self.compile(node.body, inner).gen

        def gen(v: Any, env: Env) -> Iterator[Any]:
            token = object()
            new = dict(env)
            new[key] = token
            try:
                yield from body(v, new)
            except _Break as exc:
                if exc.token is not token:
                    raise

        return _Code(gen)

    def c_Break(self, node: A.Break, scope: _Scope) -> _Code:  # noqa: N802
        key = scope.labels.get(node.name)
        if key is None:
            raise _DeclineError

        def gen(v: Any, env: Env) -> Iterator[Any]:
            raise _Break(env[key])

        return _Code(gen)

    def c_FuncDefine(self, node: A.FuncDefine, scope: _Scope) -> _Code:  # noqa: N802
        inner = scope.child()
        definition = node.definition
        if definition.name.startswith("_") and not scope.prelude:
            raise _DeclineError
        entry = _Def(definition, inner)  # the body sees itself (recursion is caught when it is expanded)
        inner.functions[definition.signature] = entry
        return self.compile(node.rest, inner)

    # --- calls -------------------------------------------------------------------------------------------------

    def c_Call(self, node: A.Call, scope: _Scope) -> _Code:  # noqa: N802
        signature = node.signature
        entry = scope.functions.get(signature)
        if entry is not None:
            return self._call_local(entry, node, scope)
        if node.name.startswith("_") and not scope.prelude:
            raise _DeclineError
        native = _NATIVES.get(signature)
        if native is not None:
            return native(self, [self.compile(arg, scope) for arg in node.args])
        prelude = _prelude().get(signature)
        if prelude is not None:
            return self._expand(prelude, node.args, scope, _Scope(prelude=True))
        raise _DeclineError

    def _call_local(self, entry: _Def | _Param, node: A.Call, scope: _Scope) -> _Code:
        if isinstance(entry, _Param):
            return self.compile(entry.node, entry.scope)
        return self._expand(entry.definition, node.args, scope, entry.scope)

    def _expand(self, definition: A.FuncDef, args: tuple[A.Node, ...], caller: _Scope, home: _Scope) -> _Code:
        """Inline a definition at its call: filter parameters are the caller's expressions, compiled in the
        caller's scope where the body uses them; value parameters bind each output (first parameter outermost)."""
        ident = id(definition)
        if ident in self.expanding:
            raise _DeclineError  # recursive: unbounded, leave it to libjq (the safety check rejects it anyway)
        self.expanding.append(ident)
        try:
            inner = home.child()
            inner.functions[definition.signature] = _Def(definition, home)
            value_params: list[tuple[str, A.Node]] = []
            for param, arg in zip(definition.params, args, strict=True):
                name = param.lstrip("$")
                inner.functions[f"{name}/0"] = _Param(arg, caller)
                if param.startswith("$"):
                    value_params.append((name, arg))
            body: A.Node = definition.body
            if not value_params:
                return self.compile(body, inner)
            # `def f($a; $b): body` is `def f(a; b): a as $a | b as $b | body`, the arguments run on the caller's input
            sources = [self.compile(arg, caller) for _, arg in value_params]
            keys = []
            for name, _ in value_params:
                key = self.fresh()
                inner.variables[name] = key
                keys.append(key)
            code = self.compile(body, inner)
            return _bind_values(sources, keys, code)
        finally:
            self.expanding.pop()

    def _map1(self, operand: _Code, function: Callable[[Any], Any]) -> _Code:
        o_one = operand.one
        if o_one is not None:
            return _from_one(lambda v, env: function(o_one(v, env)))
        o_gen = operand.gen

        def gen(v: Any, env: Env) -> Iterator[Any]:
            for x in o_gen(v, env):
                yield function(x)

        return _Code(gen)


def _bind_values(sources: list[_Code], keys: list[int], body: _Code) -> _Code:
    if all(s.one is not None for s in sources) and body.one is not None:
        ones = [s.one for s in sources]
        b_one = body.one

        def one(v: Any, env: Env) -> Any:
            new = dict(env)
            for key, s_one in zip(keys, ones, strict=True):
                new[key] = s_one(v, env)  # type: ignore[misc]
            return b_one(v, new)

        return _from_one(one)
    b_gen = body.gen

    def gen(v: Any, env: Env, depth: int = 0) -> Iterator[Any]:
        if depth == len(sources):
            yield from b_gen(v, env)
            return
        for value in sources[depth].gen(v, env):
            new = dict(env)
            new[keys[depth]] = value
            yield from gen(v, new, depth + 1)

    return _Code(gen)


def _index_at(i: int, value: Any) -> Any:
    return _index(value, i)


def _bind_all(
    parts: list[tuple[Callable[[Any], Any], Callable[[Any, Env], Iterator[Env]]]], value: Any, env: Env
) -> Iterator[Env]:
    if not parts:
        yield env
        return
    (get, bind), rest = parts[0], parts[1:]
    for new in bind(get(value), env):
        yield from _bind_all(rest, value, new)


def _bind_object(
    steps: list[tuple[Gen, Callable[[Any, Env], Iterator[Env]] | None, int | None]], i: int, value: Any, env: Env
) -> Iterator[Env]:
    if i == len(steps):
        yield env
        return
    key_gen, sub, var_key = steps[i]
    for k in key_gen(value, env):
        if type(k) is not str:
            raise _fail(f"Cannot index {json_type(value)} with {json_type(k)}")
        if type(value) is not dict and value is not None:
            raise _index_error(value, k)
        item = _index(value, k)
        new = env
        if var_key is not None:
            new = dict(env)
            new[var_key] = item
        if sub is None:
            yield from _bind_object(steps, i + 1, value, new)
        else:
            for bound in sub(item, new):
                yield from _bind_object(steps, i + 1, value, bound)


def _shorthand_one(key: One, v: Any, env: Env) -> Any:
    return _index(v, key(v, env))


def _object_key_error(key: Any) -> _JqFailure:
    return _fail(f"Cannot use {_desc(key)} as object key")


def _build_object(entries: list[tuple[_Code, _Code]], i: int, built: dict[str, Any], v: Any, env: Env) -> Iterator[Any]:
    if i == len(entries):
        yield dict(built)
        return
    key, value = entries[i]
    for k in key.gen(v, env):
        if type(k) is not str:
            raise _object_key_error(k)
        for x in value.gen(v, env):
            new = dict(built)
            new[k] = x
            yield from _build_object(entries, i + 1, new, v, env)


def _product_last_outer(gens: list[Gen], v: Any, env: Env) -> Iterator[list[Any]]:
    """Every combination of the generators' outputs, the first varying fastest (C builtins' argument order)."""
    if not gens:
        yield []
        return
    for last in gens[-1](v, env):
        for rest in _product_last_outer(gens[:-1], v, env):
            yield [*rest, last]


def _negate(value: Any) -> Any:
    kind = type(value)
    if kind is int:
        return -value
    if kind is float:
        return _fnum(-value)
    raise _fail(f"{_desc(value)} cannot be negated")


def _compare(op: str) -> Callable[[Any, Any], bool]:
    def lt(a: Any, b: Any) -> bool:
        return _cmp(a, b) < 0

    def le(a: Any, b: Any) -> bool:
        return _cmp(a, b) <= 0

    def gt(a: Any, b: Any) -> bool:
        return _cmp(a, b) > 0

    def ge(a: Any, b: Any) -> bool:
        return _cmp(a, b) >= 0

    def ne(a: Any, b: Any) -> bool:
        return not _eq(a, b)

    return {"<": lt, "<=": le, ">": gt, ">=": ge, "==": _eq, "!=": ne}[op]


_BINARY: Final[dict[str, Callable[..., Any]]] = {
    "+": _add,
    "-": _sub,
    "*": _mul,
    "/": _div,
    "%": _mod,
    **{op: _compare(op) for op in ("<", "<=", ">", ">=", "==", "!=")},
}


# --------------------------------------------------------------------------------------------------- formats


def _csv_tsv(value: Any, name: str) -> str:
    if type(value) is not list:
        raise _fail(f"{_desc(value)} cannot be {name}-formatted, only array")
    out = []
    for item in value:
        kind = type(item)
        if kind is int or kind is float:
            out.append("" if kind is float and math.isnan(item) else _format_number(item))
        elif kind is bool:
            out.append("true" if item else "false")
        elif item is None:
            out.append("")
        elif kind is str:
            if name == "csv":
                out.append('"' + item.replace('"', '""').replace("\0", "\\0") + '"')
            else:
                out.append(
                    item.replace("\\", "\\\\")
                    .replace("\t", "\\t")
                    .replace("\n", "\\n")
                    .replace("\r", "\\r")
                    .replace("\0", "\\0")
                )
        else:
            raise _fail(f"{_desc(item)} is not valid in a csv row")  # libjq says csv for @tsv too
    return ("," if name == "csv" else "\t").join(out)


def _sh(value: Any) -> str:
    items = value if type(value) is list else [value]
    out = []
    for item in items:
        kind = type(item)
        if kind is list or kind is dict:
            raise _fail(f"{_desc(item)} can not be escaped for shell")
        if kind is str:
            out.append("'" + item.replace("'", "'\\''").replace("\0", "\\0") + "'")
        else:
            out.append(_dump(item))
    return " ".join(out)


_URI_SAFE: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")


def _uri(value: Any) -> str:
    text = _tostring(value)
    return "".join(ch if ch in _URI_SAFE else "".join(f"%{b:02X}" for b in ch.encode()) for ch in text)


def _html(value: Any) -> str:
    text = _tostring(value)
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("'", "&apos;")
        .replace('"', "&quot;")
    )


def _base64(value: Any) -> str:
    import base64  # only for @base64: with struct and binascii, ~0.5 ms a start need not pay (issue 19)

    return base64.b64encode(_tostring(value).encode()).decode()


def _csv(value: Any) -> str:
    return _csv_tsv(value, "csv")


def _tsv(value: Any) -> str:
    return _csv_tsv(value, "tsv")


_FORMATS: Final[dict[str, Callable[[Any], str]]] = {
    "text": _tostring,
    "json": _dump,
    "csv": _csv,
    "tsv": _tsv,
    "sh": _sh,
    "base64": _base64,
    "uri": _uri,
}


# --------------------------------------------------------------------------------------------------- natives

_NATIVES: dict[str, Native] = {}


def _native(signature: str) -> Callable[[Native], Native]:
    def register(function: Native) -> Native:
        _NATIVES[signature] = function
        return function

    return register


def _simple(signature: str, function: Callable[..., Any], *, with_env: bool = False) -> None:
    """A C builtin of the input and value arguments: one output per combination of the arguments' outputs
    (the first argument varying fastest, as libjq runs C builtins)."""

    def build(compiler: _Compiler, args: list[_Code]) -> _Code:
        if all(a.one is not None for a in args):
            ones = [a.one for a in args]
            if with_env:
                if not ones:
                    return _from_one(function)
                if len(ones) == 1:
                    a0 = ones[0]
                    return _from_one(lambda v, env: function(v, a0(v, env), env))  # type: ignore[misc]
            elif not ones:
                return _from_one(lambda v, env: function(v))
            elif len(ones) == 1:
                a0 = ones[0]
                return _from_one(lambda v, env: function(v, a0(v, env)))  # type: ignore[misc]
            return _from_one(
                lambda v, env: function(v, *[o(v, env) for o in ones], *((env,) if with_env else ()))  # type: ignore[misc]
            )
        gens = [a.gen for a in args]

        def gen(v: Any, env: Env) -> Iterator[Any]:
            for values in _product_last_outer(gens, v, env):
                yield function(v, *values, *((env,) if with_env else ()))

        return _Code(gen)

    _NATIVES[signature] = build


def _length(v: Any) -> Any:
    kind = type(v)
    if kind is str or kind is list or kind is dict:
        return len(v)
    if v is None:
        return 0
    if kind is int:
        return abs(v)
    if kind is float:
        return _fnum(abs(v))
    raise _fail(f"{_desc(v)} has no length")


def _utf8bytelength(v: Any) -> Any:
    if type(v) is not str:
        raise _fail(f"{_desc(v)} only strings have UTF-8 byte length")
    return len(v.encode("utf-8", "surrogatepass"))


def _keys(v: Any, env: Env) -> Any:
    kind = type(v)
    if kind is dict:
        _charge(env, len(v))
        return sorted(v)
    if kind is list:
        _charge(env, len(v))
        return list(range(len(v)))
    raise _fail(f"{_desc(v)} has no keys")


def _keys_unsorted(v: Any, env: Env) -> Any:
    if type(v) is dict:
        _charge(env, len(v))
        return list(v)
    return _keys(v, env)


def _has(v: Any, k: Any) -> Any:
    if v is None:
        return False
    tv = type(v)
    tk = type(k)
    if tv is dict and tk is str:
        return k in v
    if tv is list and (tk is int or tk is float):
        return 0 <= k < len(v)
    raise _fail(f"Cannot check whether {json_type(v)} has a {json_type(k)} key")


def _contains_inner(a: Any, b: Any) -> bool:
    ta = type(a)
    if ta is not type(b):
        return _eq(a, b)
    if ta is dict:
        return all(k in a and _contains_inner(a[k], bv) for k, bv in b.items())
    if ta is list:
        return all(any(_contains_inner(x, y) for x in a) for y in b)
    if ta is str:
        return b in a
    return _eq(a, b)


def _contains(a: Any, b: Any) -> Any:
    if _rank(a) == _rank(b) and (type(a) is type(b) or (type(a) in _NUM and type(b) in _NUM)):
        return _contains_inner(a, b)
    raise _fail(f"{_desc(a)} and {_desc(b)} cannot have their containment checked")


def _tonumber(v: Any) -> Any:
    kind = type(v)
    if kind is int or kind is float:
        return v
    if kind is str:
        number = _parse_number(v)
        if number is not None:
            return number
    raise _fail(f"{_desc(v)} cannot be parsed as a number")


def _parse_number(text: str) -> int | float | None:
    body = text[1:] if text[:1] in "+-" else text
    lower = body.lower()
    if lower == "nan":
        return math.nan
    if lower in ("infinity",):
        return -_DBL_MAX if text.startswith("-") else _DBL_MAX
    if not body or not all(c in "0123456789.eE+-" for c in body) or not (body[0].isdigit() or body[0] == "."):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    if math.isinf(value):
        return _DBL_MAX if value > 0 else -_DBL_MAX
    return _fnum(value)


def _type(v: Any) -> str:
    return json_type(v)


def _startswith(v: Any, prefix: Any) -> Any:
    if type(v) is not str or type(prefix) is not str:
        raise _fail("startswith() requires string inputs")
    return v.startswith(prefix)


def _endswith(v: Any, suffix: Any) -> Any:
    if type(v) is not str or type(suffix) is not str:
        raise _fail("endswith() requires string inputs")
    return v.endswith(suffix)


def _split1(v: Any, sep: Any, env: Env) -> Any:
    if type(v) is not str or type(sep) is not str:
        raise _fail("split input and separator must be strings")
    _charge(env, len(v))
    return _split(v, sep)


def _explode(v: Any) -> Any:
    if type(v) is not str:
        raise _fail("explode input must be a string")
    return [ord(c) for c in v]


def _implode(v: Any) -> Any:
    if type(v) is not list:
        raise _fail("implode input must be an array")
    out = []
    for code in v:
        if type(code) not in _NUM:
            raise _fail(f"{_desc(code)} can't be imploded, unicode codepoint needs to be numeric")
        number = int(code) if math.isfinite(code) else -1
        if number < 0 or number > 0x10FFFF or 0xD800 <= number <= 0xDFFF:
            number = 0xFFFD
        out.append(chr(number))
    return "".join(out)


def _ascii(v: Any, upper: bool) -> Any:
    if type(v) is not str:
        raise _fail("explode input must be a string")
    return ascii_text(v, upper)


def _trim(name: str, strip: Callable[[str], str]) -> Callable[[Any], Any]:
    def trim(v: Any) -> Any:
        if type(v) is not str:
            raise _fail(f"{name} input must be a string")
        return strip(v)

    return trim


# Unicode White_Space, what jq 1.8's trim functions strip
_WHITESPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def _tojson(v: Any, env: Env) -> str:
    text = _dump(v)
    _charge(env, len(text) // 16)
    return text


def _fromjson(v: Any) -> Any:
    if type(v) is not str:
        raise _fail(f"{_desc(v)} only strings can be parsed")
    if v.strip() in ("nan", "-nan", "NaN", "-NaN"):
        return math.nan
    try:
        value = json.loads(v, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise _fail(f"{v!r} is not valid JSON (while parsing '{v}')") from None
    return _normalize_parsed(value)


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _normalize_parsed(value: Any) -> Any:
    kind = type(value)
    if kind is float:
        return _fnum(value) if math.isfinite(value) else value
    if kind is list:
        return [_normalize_parsed(x) for x in value]
    if kind is dict:
        return {k: _normalize_parsed(x) for k, x in value.items()}
    return value


def _error0(v: Any) -> Any:
    raise _JqFailure(v)


def _sort(v: Any, env: Env) -> Any:
    if type(v) is not list:
        raise _fail(f"{_desc(v)} cannot be sorted, as it is not an array")
    _charge(env, len(v))
    return sorted(v, key=_key)


def _unique(v: Any, env: Env) -> Any:
    if type(v) is not list:
        raise _fail(f"{_desc(v)} cannot be sorted, as it is not an array")
    _charge(env, len(v))
    out: list[Any] = []
    last: Any = None
    for item in sorted(v, key=_key):
        k = _key(item)
        if not out or k != last:
            out.append(item)
            last = k
    return out


def _check_by(values: Any, keys: Any, what: str) -> None:
    if type(values) is not list or type(keys) is not list:
        raise _fail(f"{_desc(values)} and {_desc(keys)} cannot be sorted, as they are not both arrays")
    if len(values) != len(keys):
        raise _fail(f"{_desc(values)} and {_desc(keys)} have wrong length")


def _sort_by_impl(v: Any, keys: Any, env: Env) -> Any:
    _check_by(v, keys, "sorted")
    _charge(env, len(v))
    order = sorted(range(len(v)), key=lambda i: _key(keys[i]))
    return [v[i] for i in order]


def _groups(v: list[Any], keys: list[Any]) -> list[list[Any]]:
    order = sorted(range(len(v)), key=lambda i: _key(keys[i]))
    groups: list[list[Any]] = []
    last: Any = None
    for i in order:
        k = _key(keys[i])
        if not groups or k != last:
            groups.append([])
            last = k
        groups[-1].append(v[i])
    return groups


def _group_by_impl(v: Any, keys: Any, env: Env) -> Any:
    _check_by(v, keys, "grouped")
    _charge(env, len(v))
    return _groups(v, keys)


def _unique_by_impl(v: Any, keys: Any, env: Env) -> Any:
    _check_by(v, keys, "grouped")
    _charge(env, len(v))
    return [group[0] for group in _groups(v, keys)]


def _minmax_by(values: Any, keys: Any, is_min: bool, env: Env) -> Any:
    if type(values) is not list or type(keys) is not list:
        raise _fail(f"{_desc(values)} and {_desc(keys)} cannot be iterated over")
    if len(values) != len(keys):
        raise _fail(f"{_desc(values)} and {_desc(keys)} have wrong length")
    if not values:
        return None
    _charge(env, len(values))
    best = 0
    best_key = _key(keys[0])
    for i in range(1, len(values)):
        k = _key(keys[i])
        if (k < best_key) == is_min:
            best, best_key = i, k
    return values[best]


def _math(name: str, function: Callable[[float], float]) -> Callable[[Any], Any]:
    def apply(v: Any) -> Any:
        if type(v) not in _NUM:
            raise _fail(f"{_desc(v)} number required")
        try:
            return _fnum(float(function(_float(v))))
        except (ValueError, OverflowError):
            return math.nan

    return apply


def _round(x: float) -> float:
    if not math.isfinite(x):
        return x
    return float(math.copysign(math.floor(abs(x) + 0.5), x))


def _getpath(v: Any, path: Any) -> Any:
    if type(path) is not list:
        raise _fail("Path must be specified as an array")
    for key in path:
        v = _index(v, key)  # null indexes to null, but libjq still refuses a key of the wrong type (null, objects)
    return v


def _splits_decline(compiler: _Compiler, args: list[_Code]) -> _Code:
    raise _DeclineError


_PLAIN_BUILTINS: dict[str, Callable[..., Any]] = {
    "length/0": _length,
    "utf8bytelength/0": _utf8bytelength,
    "not/0": lambda v: not _truthy(v),
    "has/1": _has,
    "contains/1": _contains,
    "tostring/0": _tostring,
    "tonumber/0": _tonumber,
    "type/0": _type,
    "startswith/1": _startswith,
    "endswith/1": _endswith,
    "explode/0": _explode,
    "implode/0": _implode,
    "ascii_downcase/0": lambda v: _ascii(v, False),
    "ascii_upcase/0": lambda v: _ascii(v, True),
    "trim/0": _trim("trim", lambda s: s.strip(_WHITESPACE)),
    "ltrim/0": _trim("trim", lambda s: s.lstrip(_WHITESPACE)),
    "rtrim/0": _trim("trim", lambda s: s.rstrip(_WHITESPACE)),
    "fromjson/0": _fromjson,
    "error/0": _error0,
    "getpath/1": _getpath,
    "infinite/0": lambda v: math.inf,
    "nan/0": lambda v: math.nan,
    "isinfinite/0": lambda v: _number_arg(v) and math.isinf(v),
    "isnan/0": lambda v: _number_arg(v) and math.isnan(v),
    "isnormal/0": lambda v: _number_arg(v) and math.isfinite(v) and v != 0 and abs(v) >= 2.2250738585072014e-308,
    "floor/0": _math("floor", math.floor),
    "ceil/0": _math("ceil", math.ceil),
    "round/0": _math("round", _round),
    "fabs/0": _math("fabs", math.fabs),
    "sqrt/0": _math("sqrt", math.sqrt),
    "trunc/0": _math("trunc", math.trunc),
}
for _signature, _function in _PLAIN_BUILTINS.items():
    _simple(_signature, _function)

_ENV_BUILTINS: dict[str, Callable[..., Any]] = {
    "keys/0": _keys,
    "keys_unsorted/0": _keys_unsorted,
    "split/1": _split1,
    "tojson/0": _tojson,
    "sort/0": _sort,
    "unique/0": _unique,
    "_sort_by_impl/1": _sort_by_impl,
    "_group_by_impl/1": _group_by_impl,
    "_unique_by_impl/1": _unique_by_impl,
    "_min_by_impl/1": lambda v, keys, env: _minmax_by(v, keys, True, env),
    "_max_by_impl/1": lambda v, keys, env: _minmax_by(v, keys, False, env),
    "min/0": lambda v, env: _minmax_by(v, v, True, env),
    "max/0": lambda v, env: _minmax_by(v, v, False, env),
}
for _signature, _function in _ENV_BUILTINS.items():
    _simple(_signature, _function, with_env=True)


def _number_arg(v: Any) -> bool:
    if type(v) not in _NUM:
        raise _fail(f"{_desc(v)} number required")
    return True


@_native("empty/0")
def _n_empty(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _EMPTY


@_native("error/1")
def _n_error(compiler: _Compiler, args: list[_Code]) -> _Code:
    message = args[0].gen

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for m in message(v, env):
            raise _JqFailure(m)
        yield from ()

    return _Code(gen)


@_native("select/1")
def _n_select(compiler: _Compiler, args: list[_Code]) -> _Code:
    cond = args[0]
    c_one = cond.one
    if c_one is not None:

        def select_one(v: Any, env: Env) -> Iterator[Any]:
            c = c_one(v, env)
            return iter((v,)) if c is not None and c is not False else iter(())

        return _Code(select_one)
    c_gen = cond.gen

    def select(v: Any, env: Env) -> Iterator[Any]:
        for c in c_gen(v, env):
            if c is not None and c is not False:
                yield v

    return _Code(select)


@_native("map/1")
def _n_map(compiler: _Compiler, args: list[_Code]) -> _Code:
    f = args[0]
    f_one = f.one
    if f_one is not None:
        return _from_one(lambda v, env: [f_one(x, env) for x in _values(v, env)])
    f_gen = f.gen
    return _from_one(lambda v, env: [y for x in _values(v, env) for y in f_gen(x, env)])


@_native("map_values/1")
def _n_map_values(compiler: _Compiler, args: list[_Code]) -> _Code:
    f_gen = args[0].gen

    def one(v: Any, env: Env) -> Any:
        kind = type(v)
        if kind is dict:
            _charge(env, len(v))
            out: dict[str, Any] = {}
            for k, x in v.items():
                for y in f_gen(x, env):
                    out[k] = y
                    break
            return out
        if kind is list:
            _charge(env, len(v))
            return [y for x in v for y in itertools.islice(f_gen(x, env), 1)]
        raise _iterate_error(v)

    return _from_one(one)


def _truthy_any(outputs: Iterator[Any]) -> bool:
    return any(x is not None and x is not False for x in outputs)


@_native("any/0")
def _n_any0(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _from_one(lambda v, env: any(x is not None and x is not False for x in _values(v, env)))


@_native("all/0")
def _n_all0(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _from_one(lambda v, env: all(x is not None and x is not False for x in _values(v, env)))


def _any_gen(source: Gen, cond: _Code, want: bool) -> One:
    c_one = cond.one
    if c_one is not None:
        if want:
            return lambda v, env: any(_truthy(c_one(x, env)) for x in source(v, env))
        return lambda v, env: all(_truthy(c_one(x, env)) for x in source(v, env))
    c_gen = cond.gen
    if want:
        return lambda v, env: any(_truthy(c) for x in source(v, env) for c in c_gen(x, env))
    return lambda v, env: all(_truthy(c) for x in source(v, env) for c in c_gen(x, env))


def _iterate_gen(v: Any, env: Env) -> Iterator[Any]:
    return iter(_values(v, env))


@_native("any/1")
def _n_any1(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _from_one(_any_gen(_iterate_gen, args[0], True))


@_native("all/1")
def _n_all1(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _from_one(_any_gen(_iterate_gen, args[0], False))


@_native("any/2")
def _n_any2(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _from_one(_any_gen(args[0].gen, args[1], True))


@_native("all/2")
def _n_all2(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _from_one(_any_gen(args[0].gen, args[1], False))


@_native("isempty/1")
def _n_isempty(compiler: _Compiler, args: list[_Code]) -> _Code:
    g = args[0].gen

    def one(v: Any, env: Env) -> Any:
        for _ in g(v, env):
            return False
        return True

    return _from_one(one)


@_native("first/1")
def _n_first(compiler: _Compiler, args: list[_Code]) -> _Code:
    g = args[0].gen

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for out in g(v, env):
            yield out
            return

    return _Code(gen)


@_native("last/1")
def _n_last(compiler: _Compiler, args: list[_Code]) -> _Code:
    g = args[0].gen

    def gen(v: Any, env: Env) -> Iterator[Any]:
        missing = last = object()
        for last in g(v, env):  # noqa: B007
            pass
        if last is not missing:
            yield last

    return _Code(gen)


@_native("limit/2")
def _n_limit(compiler: _Compiler, args: list[_Code]) -> _Code:
    counts, g = args[0].gen, args[1].gen

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for n in counts(v, env):
            if (
                _cmp(n, 0) > 0
            ):  # jq 1.8: foreach g as $item ($n; . - 1; $item, if . <= 0 then break $out else empty end)
                left = n
                for out in g(v, env):
                    left = _sub(left, 1)
                    yield out
                    if _cmp(left, 0) <= 0:
                        break
            elif not _eq(n, 0):
                raise _fail("limit doesn't support negative count")

    return _Code(gen)


@_native("add/0")
def _n_add(compiler: _Compiler, args: list[_Code]) -> _Code:
    def one(v: Any, env: Env) -> Any:
        values = _values(v, env)
        total: Any = None
        for x in values:
            total = _plus(total, x, env)
        return total

    return _from_one(one)


@_native("range/1")
def _n_range1(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _range_code(_const(0), args[0], None)


@_native("range/2")
def _n_range2(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _range_code(args[0], args[1], None)


def _range_code(start: _Code, stop: _Code, by: _Code | None) -> _Code:
    s_gen, e_gen = start.gen, stop.gen

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for lo in s_gen(v, env):
            for hi in e_gen(v, env):
                if type(lo) not in _NUM or type(hi) not in _NUM:
                    raise _fail("Range bounds must be numeric")
                x = lo
                while x < hi:
                    _charge(env, 1)
                    yield x
                    x = _add(x, 1)

    return _Code(gen)


def _n_decline(compiler: _Compiler, args: list[_Code]) -> _Code:
    raise _DeclineError


@_native("in/1")
def _n_in(compiler: _Compiler, args: list[_Code]) -> _Code:
    xs = args[0].gen

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for container in xs(v, env):
            yield _has(container, v)

    return _Code(gen)


@_native("inside/1")
def _n_inside(compiler: _Compiler, args: list[_Code]) -> _Code:
    xs = args[0]
    if xs.one is not None:
        x1 = xs.one
        return _from_one(lambda v, env: _contains(x1(v, env), v))
    x_gen = xs.gen

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for container in x_gen(v, env):
            yield _contains(container, v)

    return _Code(gen)


@_native("IN/1")
def _n_in1(compiler: _Compiler, args: list[_Code]) -> _Code:
    s = args[0].gen
    return _from_one(lambda v, env: any(_eq(x, v) for x in s(v, env)))


@_native("IN/2")
def _n_in2(compiler: _Compiler, args: list[_Code]) -> _Code:
    src, s = args[0].gen, args[1].gen
    return _from_one(lambda v, env: any(_eq(a, b) for b in s(v, env) for a in src(v, env)))


@_native("to_entries/0")
def _n_to_entries(compiler: _Compiler, args: list[_Code]) -> _Code:
    def one(v: Any, env: Env) -> Any:
        if type(v) is dict:
            _charge(env, len(v))
            return [{"key": k, "value": x} for k, x in v.items()]
        if type(v) is list:
            _charge(env, len(v))
            return [{"key": i, "value": x} for i, x in enumerate(v)]
        raise _fail(f"{_desc(v)} has no keys")

    return _from_one(one)


@_native("first/0")
def _n_first0(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _from_one(lambda v, env: _index(v, 0))


@_native("last/0")
def _n_last0(compiler: _Compiler, args: list[_Code]) -> _Code:
    return _from_one(lambda v, env: _index(v, -1))


for _name in (
    # regular expressions (Oniguruma's syntax is not Python's), paths, the environment, time, streams: libjq
    "test/1",
    "test/2",
    "match/1",
    "match/2",
    "capture/1",
    "capture/2",
    "scan/1",
    "scan/2",
    "splits/1",
    "splits/2",
    "split/2",
    "sub/2",
    "sub/3",
    "gsub/2",
    "gsub/3",
    "path/1",
    "paths/0",
    "paths/1",
    "pick/1",
    "setpath/2",
    "delpaths/1",
    "del/1",
    "env/0",
    "builtins/0",
    "input/0",
    "inputs/0",
    "debug/0",
    "debug/1",
    "stderr/0",
    "input_filename/0",
    "input_line_number/0",
    "halt/0",
    "halt_error/0",
    "halt_error/1",
    "now/0",
    "mktime/0",
    "gmtime/0",
    "localtime/0",
    "strftime/1",
    "strptime/1",
    "strflocaltime/1",
    "todate/0",
    "fromdate/0",
    "todateiso8601/0",
    "fromdateiso8601/0",
    "dateadd/2",
    "datesub/2",
    "date/0",
    "format/1",
    "bsearch/1",
    "get_search_list/0",
    "get_jq_origin/0",
    "get_prog_origin/0",
    "modulemeta/0",
    "have_decnum/0",
    "have_literal_numbers/0",
    "significand/0",
    "gamma/0",
    "lgamma/0",
    "tgamma/0",
    "lgamma_r/0",
    "frexp/0",
    "modf/0",
    "toboolean/0",
    "tostream/0",
    "fromstream/1",
    "truncate_stream/1",
    "getpath/2",
    "walk/1",
    "recurse/0",
    "recurse/1",
    "recurse/2",
    "combinations/0",
    "combinations/1",
    "repeat/1",
    "while/2",
    "until/2",
    "leaf_paths/0",
    "splits/0",
    "ascii/0",
    "implode/1",
):
    _NATIVES[_name] = _n_decline


_FORMATS["html"] = _html


# --------------------------------------------------------------------------------------------------- the prelude

# jq 1.8.2's own definitions (src/builtin.jq), for the builtins written in jq; compiled with the primitives above.
_PRELUDE_SOURCE: Final = r"""
def sort_by(f): _sort_by_impl(map([f]));
def group_by(f): _group_by_impl(map([f]));
def unique_by(f): _unique_by_impl(map([f]));
def max_by(f): _max_by_impl(map([f]));
def min_by(f): _min_by_impl(map([f]));
def from_entries: map({ (.key // .Key // .name // .Name):
  if has("value") then .value else .Value end }) | add // {};
def with_entries(f): to_entries | map(f) | from_entries;
def reverse: [.[length - 1 - range(0;length)]];
def indices($i): if type == "array" and ($i|type) == "array" then .[$i]
  elif type == "array" then .[[$i]]
  elif type == "string" and ($i|type) == "string" then _strindices($i)
  else .[$i] end;
def index($i):   indices($i) | .[0];
def rindex($i):  indices($i) | .[-1:][0];
def isfinite: type == "number" and (isinfinite | not);
def arrays: select(type == "array");
def objects: select(type == "object");
def iterables: select(type|. == "array" or . == "object");
def booleans: select(type == "boolean");
def numbers: select(type == "number");
def normals: select(isnormal);
def finites: select(isfinite);
def strings: select(type == "string");
def nulls: select(. == null);
def values: select(. != null);
def scalars: select(type|. != "array" and . != "object");
def join($x): reduce .[] as $i (null;
            (if .==null then "" else .+$x end) +
            ($i | if type=="boolean" or type=="number" then tostring else .//"" end)
        ) // "";
def flatten($x): if $x < 0 then error("flatten depth must not be negative") else _flatten($x) end;
def flatten: _flatten(-1);
def ltrimstr($left): if startswith($left) then .[$left | length:] end;
def rtrimstr($right): if endswith($right) then .[:length - ($right | length)] end;
def nth($n): .[$n];
def nth($n; g): if $n < 0 then error("nth doesn't support negative indices") else first(skip($n; g)) end;
def skip($n; expr):
  if $n > 0 then foreach expr as $item ($n; . - 1; if . < 0 then $item else empty end)
  elif $n == 0 then expr
  else error("skip doesn't support negative count") end;
def range($init; $upto; $by):
  if $by > 0 then $init|_while(. < $upto; . + $by)
  elif $by < 0 then $init|_while(. > $upto; . + $by)
  else empty end;
def transpose: [range(0; map(length)|max // 0) as $i | [.[][$i]]];
def add(f): reduce f as $x (null; . + $x);
def INDEX(stream; idx_expr): reduce stream as $row ({}; _setkey($row|idx_expr|tostring; $row));
def INDEX(idx_expr): INDEX(.[]; idx_expr);
def JOIN($idx; idx_expr): [.[] | [., $idx[idx_expr]]];
def JOIN($idx; stream; idx_expr): stream | [., $idx[idx_expr]];
def JOIN($idx; stream; idx_expr; join_expr): stream | [., $idx[idx_expr]] | join_expr;
def abs: if . < 0 then - . else . end;
def toarray: if type == "array" then . else [.] end;
def trimstr($val): ltrimstr($val) | rtrimstr($val);
"""


@functools.cache
def _prelude() -> dict[str, A.FuncDef]:
    tree = parse(_PRELUDE_SOURCE + ".")
    out: dict[str, A.FuncDef] = {}
    while isinstance(tree, A.FuncDefine):
        out[tree.definition.signature] = tree.definition
        tree = tree.rest
    return out


@_native("_strindices/1")
def _n_strindices(compiler: _Compiler, args: list[_Code]) -> _Code:
    def strindices(v: Any, sub: Any) -> Any:
        if not sub:
            return []
        raw = v.encode()
        needle = sub.encode()
        out: list[int] = []
        start = 0
        while True:
            found = raw.find(needle, start)
            if found < 0:
                return out
            out.append(len(raw[:found].decode(errors="ignore")))
            start = found + 1

    return _simple_code(args, strindices)


def _simple_code(args: list[_Code], function: Callable[..., Any]) -> _Code:
    gens = [a.gen for a in args]

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for values in _product_last_outer(gens, v, env):
            yield function(v, *values)

    return _Code(gen)


@_native("_flatten/1")
def _n_flatten(compiler: _Compiler, args: list[_Code]) -> _Code:
    def flatten(v: Any, depth: Any, env: Env) -> Any:
        out: list[Any] = []
        for item in _values(v, env):
            if type(item) is list and not _eq(depth, 0):
                out.extend(flatten(item, _sub(depth, 1), env))
            else:
                out.append(item)
        return out

    gens = [a.gen for a in args]

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for (depth,) in _product_last_outer(gens, v, env):
            yield flatten(v, depth, env)

    return _Code(gen)


@_native("_while/2")
def _n_while(compiler: _Compiler, args: list[_Code]) -> _Code:
    cond, update = args[0].gen, args[1].gen

    def gen(v: Any, env: Env) -> Iterator[Any]:
        while True:
            ok = False
            for c in cond(v, env):
                ok = _truthy(c)
                break
            if not ok:
                return
            _charge(env, 1)
            yield v
            nxt = list(itertools.islice(update(v, env), 1))
            if not nxt:
                return
            v = nxt[0]

    return _Code(gen)


@_native("_setkey/2")
def _n_setkey(compiler: _Compiler, args: list[_Code]) -> _Code:
    keys, values = args[0].gen, args[1].gen

    def gen(v: Any, env: Env) -> Iterator[Any]:
        for x in values(v, env):
            for k in keys(v, env):
                out = dict(v) if type(v) is dict else {}
                out[k] = x
                yield out

    return _Code(gen)


# --------------------------------------------------------------------------------------------------- entry points


def _compile_tree(tree: A.Node) -> _Code:
    return _Compiler().compile(tree, _Scope())


@functools.lru_cache(maxsize=4096)
def compile_closure(expr: str) -> Closure | None:
    """`f(value, max_results) -> outputs` for `expr`, or None when the compiler does not cover it (or it does not
    parse: libjq reports that). `f` raises `JqRuntimeError` with the engine's message, `JqLimitError` at
    `max_results` outputs (the engine's message) or past the step budget. `value` must be normalised
    (`convert.normalize`): plain JSON, keys sorted, integral floats as ints."""
    try:
        tree = parse(expr)
    except (JqError, RecursionError):
        return None
    try:
        code = _compile_tree(tree)
        known = facts.nests(expr)  # worked out when the catalog's blob was built (jq.facts)
        nests = builds_nesting(tree) if known is None else known
    except (_DeclineError, RecursionError):
        return None
    one, gen = code.one, code.gen
    non_finite: bool | None = None  # `_may_make_non_finite`, worked out at the first container output (start-up)

    def run(value: Any, max_results: int) -> list[Any]:
        nonlocal non_finite
        env: Env = {_STEPS: [STEP_BUDGET]}
        try:
            if one is not None:
                outputs = [one(value, env)]
            else:
                outputs = []
                for out in gen(value, env):
                    outputs.append(out)
                    if len(outputs) >= max_results:
                        break
        except _JqFailure as exc:
            message = exc.value
            raise JqRuntimeError(expr, message if type(message) is str else json.dumps(message)) from None
        except _BudgetError:
            raise InProcessStopError(expr, f"evaluation exceeded the step budget ({STEP_BUDGET} steps)") from None
        except _Break:
            raise JqRuntimeError(expr, "break") from None
        except RecursionError:
            raise InProcessStopError(expr, "evaluation nested too deeply") from None
        if len(outputs) >= max_results:
            raise JqLimitError(expr, f"query results exceed the allowed number {max_results}")
        if nests and any(_nested_past(out, MAX_DEPTH) for out in outputs):
            raise InProcessStopError(expr, f"an output is nested more than {MAX_DEPTH} levels deep")
        if non_finite is None and any(type(out) is list or type(out) is dict for out in outputs):
            non_finite = _may_make_non_finite(tree)
        if non_finite:
            return [_output(_finite_inside(out)) for out in outputs]
        return [_output(out) for out in outputs]

    return run


# what can make NaN or an infinity from an input that holds neither (normalised JSON): arithmetic (an overflow,
# `infinite - infinite`), a literal past the doubles' range, and these builtins; `add/1` of the prelude is `+`
_ARITHMETIC_OPS: Final = frozenset({"+", "-", "*", "/", "%", "+=", "-=", "*=", "/=", "%="})
_NON_FINITE_CALLS: Final = frozenset({"add", "infinite", "nan", "sqrt", "tonumber", "fromjson"})


def _may_make_non_finite(node: Any) -> bool:
    """True when the expression may put NaN or an infinity inside an array or object it outputs, which libjq's
    JSON output writes as null and the largest double, as at the top (`_output`): `[-1 | sqrt]` is `[null]`."""
    if isinstance(node, A.Binary) and node.op in _ARITHMETIC_OPS:
        return True
    if isinstance(node, A.Call) and node.name in _NON_FINITE_CALLS:
        return True
    if isinstance(node, A.Number) and not math.isfinite(node.value):
        return True
    if isinstance(node, tuple):
        return any(_may_make_non_finite(item) for item in node)
    return any(_may_make_non_finite(item) for item in A.fields_of(node))


def _finite_inside(value: Any) -> Any:
    """`value` with NaN and infinities inside its arrays and objects as `_output` gives them at the top (the
    containers on the way to one copied; the same object when there is none)."""
    if type(value) is list:
        items = [_finite_inside(item) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if type(value) is dict:
        entries = {key: _finite_inside(item) for key, item in value.items()}
        return entries if any(entries[key] is not item for key, item in value.items()) else value
    if type(value) is float and not math.isfinite(value):
        return _output(value)
    return value


_NESTING_NODES: Final = (A.Reduce, A.Foreach, A.FuncDefine)


def builds_nesting(node: Any) -> bool:
    """True when the expression has a loop or a definition of its own, the only ways it can nest its outputs
    deeper than the input plus its own (parser-bounded) constructors: `reduce ... (null; [.])`, a chain of
    definitions each doubling the last. jq's own builtins never deepen their input by more than a level."""
    if isinstance(node, _NESTING_NODES):
        return True
    if isinstance(node, tuple):
        return any(builds_nesting(item) for item in node)
    return any(builds_nesting(item) for item in A.fields_of(node))


def _nested_past(value: Any, limit: int) -> bool:
    """True when `value` has containers nested more than `limit` levels deep (iterative: it is itself deep)."""
    if type(value) is not list and type(value) is not dict:
        return False
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return True
        children = current.values() if type(current) is dict else current
        stack.extend((child, depth + 1) for child in children if type(child) is list or type(child) is dict)
    return False


def covered(expr: str) -> bool:
    """True when `compile_closure(expr)` compiles `expr` (for tests and docs)."""
    return compile_closure(expr) is not None
