"""Plain paths on the caller's own object give what they give on its normalised form.

`Document.evaluate_many` runs a plain path (`fastpath.compile_fast_raw`) on the object as the caller gave it,
without `convert.normalize`: keys in any order, integral floats, and values of no JSON type (tuples, sets,
timestamps, non-string keys, NaN, infinities, msgspec Structs). Where such a value could read differently
normalised, the raw walker raises `NotPlainError` and the Document evaluates the normalised tree instead; on an
error it does the same, so the message is the normalised one.

Test design: hypothesis generates objects that mix plain JSON with those values, in shuffled key order, and
plain-path expressions from the fast-path grammar (the generator of tests/unit/test_jq_fastpath.py). For each,
`Document(obj).evaluate_many` must equal `compile_fast` on `convert.normalize(obj)` (the path it replaces, itself
proven equal to libjq there): the same outputs, with the same types and key order, or the same error message.
Fixed cases pin each non-plain value and the outputs' independence from the caller's object. The Document's hint
(a path seen to give containers goes to the normalised tree first) is cleared before each case, so every case is
walked in place.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.test_jq_fastpath import RECORDED_PATHS, _expression, _keys, _path, _recorded_objects
from workload_map.jq import Document, JqError, convert, document, fastpath
from workload_map.jq.fastpath import NotPlainError, compile_fast, compile_fast_raw


class _Point(msgspec.Struct):
    x: int
    y: float


_odd_scalars = st.one_of(
    st.sampled_from(
        [
            float("nan"),
            float("inf"),
            -float("inf"),
            3.0,
            -0.0,
            2.0**60,
            dt.datetime(2026, 1, 10, 10, 0, tzinfo=dt.timezone.utc),
            dt.date(2026, 1, 10),
            b"bytes",
            _Point(1, 2.0),
        ]
    ),
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
_mixed_keys = st.one_of(_keys, st.integers(min_value=-2, max_value=3), st.sampled_from([True, None, 1.0]))
_mixed = st.recursive(
    _odd_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(_keys, children, max_size=5),
        st.dictionaries(_mixed_keys, children, max_size=4),
    ),
    max_leaves=20,
)


def _shuffled(value: Any, rng: random.Random) -> Any:
    """The same value with every object's keys in a random order."""
    if type(value) is dict:
        items = [(key, _shuffled(item, rng)) for key, item in value.items()]
        rng.shuffle(items)
        return dict(items)
    if type(value) is list:
        return [_shuffled(item, rng) for item in value]
    return value


def _dump(value: Any) -> str:
    """Outputs compared with their types and key order (3 is not 3.0; {a, b} is not {b, a})."""
    return repr(value)


def _reference(expr: str, obj: Any) -> tuple[str, str]:
    run = compile_fast(expr)
    assert run is not None, expr
    try:
        tree = convert.normalize(obj)
    except TypeError as exc:
        return "not json", type(exc).__name__
    try:
        return "ok", _dump(run(tree))
    except JqError as exc:
        return "error", exc.message


def _in_place(expr: str, obj: Any) -> tuple[str, str]:
    document._GIVES_CONTAINERS.clear()  # a path seen to give containers skips the in-place walk: not here
    try:
        result = Document(obj).evaluate_many([expr])[0]
    except TypeError as exc:
        return "not json", type(exc).__name__
    if isinstance(result, JqError):
        return "error", result.message
    return "ok", _dump(result)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expression(), st.dictionaries(_keys, _mixed, max_size=6), st.randoms(use_true_random=False))
def test_plain_paths_in_place_equal_the_normalised_tree(expr: str, obj: dict[str, Any], rng: random.Random) -> None:
    obj = _shuffled(obj, rng)
    before = repr(obj)
    assert _in_place(expr, obj) == _reference(expr, obj), expr
    assert repr(obj) == before  # the caller's object is not changed


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_path(), _mixed)
def test_plain_paths_in_place_equal_the_normalised_tree_on_any_value(expr: str, value: Any) -> None:
    assert _in_place(expr, value) == _reference(expr, value), expr


def test_recorded_objects_in_shuffled_order() -> None:
    objects = _recorded_objects()
    if not objects:
        pytest.skip("shared/conformance recordings not available")
    rng = random.Random(19)
    for obj in objects:
        shuffled = _shuffled(obj, rng)
        for expr in RECORDED_PATHS:
            assert _in_place(expr, shuffled) == _reference(expr, obj), (expr, obj.get("kind"))


@pytest.mark.parametrize(
    ("expr", "obj"),
    [
        ('.["1"]', {1: "int key"}),  # normalised, the key is "1"
        (".a[]?", {"a": (1, 2)}),  # a tuple is an array normalised
        (".a[]", {"a": {2: "x", 1: "y"}}),  # keys named as JSON names them, then sorted
        (".a // 1", {"a": float("nan")}),  # NaN is null normalised
        (".a.b?", {"a": float("inf")}),
        (".a.x", {"a": _Point(1, 2.0)}),  # a Struct is an object
        (".a[0]", {"a": (5,)}),
        (".a // 1", {"a": dt.date(2026, 1, 1)}),
    ],
)
def test_values_that_read_differently_normalised_are_left_to_the_normalised_tree(expr: str, obj: Any) -> None:
    raw = compile_fast_raw(expr)
    assert raw is not None
    with pytest.raises(NotPlainError):
        raw(obj)
    assert _in_place(expr, obj) == _reference(expr, obj)


def test_outputs_are_normalised_copies() -> None:
    obj = {"spec": {"template": {"b": 2.0, "a": [1.0, {"z": 1, "y": dt.date(2026, 1, 2)}]}}}
    found = Document(obj).evaluate(".spec.template")
    assert json.dumps(found) == '[{"a": [1, {"y": "2026-01-02", "z": 1}], "b": 2}]'
    found[0]["a"].append("changed")
    assert obj["spec"]["template"]["a"] == [1.0, {"z": 1, "y": dt.date(2026, 1, 2)}]


def test_an_error_carries_the_normalised_message() -> None:
    # in place, 2.0 would print as 2.0; the error comes from the normalised tree, where it is the integer 2
    result = Document({"a": {"b": 2.0}}).evaluate_many([".a.b[]"])[0]
    assert isinstance(result, JqError)
    assert result.message == "Cannot iterate over number (2)"


def test_a_path_seen_to_give_containers_goes_to_the_tree_first(raw_reads: list[str]) -> None:
    document._GIVES_CONTAINERS.clear()
    obj = {"spec": {"template": {"b": 1.0, "a": 2}, "name": "x"}}
    for _ in range(3):
        assert Document(obj).evaluate_many([".spec.template", ".spec.name"]) == [[{"a": 2, "b": 1}], ["x"]]
        assert Document(obj).evaluate(".spec.template") == [{"a": 2, "b": 1}]
    # walked in place once (it gave a container), then answered from the tree; the scalar path every time
    assert raw_reads == [".spec.template", ".spec.name", ".spec.name", ".spec.name"]


@st.composite
def _iterated(draw: st.DrawFn) -> str:
    """`.a.b[]?.c`, `.a[] | .b.c`, `.[]`: the one-iteration shapes `fastpath._compile_iterated` answers."""

    def chain(first: bool, most: int) -> str:
        steps = []
        for index in range(draw(st.integers(min_value=0, max_value=most))):
            if draw(st.booleans()):
                key = draw(_keys)
                plain = key.isidentifier() and key.isascii()
                step = f".{key}" if plain else f"[{json.dumps(key)}]"
                step = "." + step if first and index == 0 and not plain else step
            else:
                step = f"[{draw(st.integers(min_value=-2, max_value=2))}]"
                step = "." + step if first and index == 0 else step
            steps.append(step + draw(st.sampled_from(["", "", "?"])))
        return "".join(steps)

    head = chain(True, 3)
    expr = (head or ".") + "[]" + draw(st.sampled_from(["", "?"]))
    expr = expr.replace("..[]", ".[]")
    tail = chain(False, 3)
    if draw(st.booleans()):
        after = chain(True, 3)
        return f"{expr}{tail} | {after or '.'}"
    return expr + tail


def _outcome(run: Any, value: Any) -> tuple[str, str]:
    try:
        return "ok", _dump(run(value))
    except NotPlainError:
        return "not plain", ""
    except JqError as exc:
        return "error", exc.message
    except TypeError as exc:  # sorting an object's keys of two kinds (not JSON), the same in both
        return "raised", type(exc).__name__


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_iterated(), st.one_of(_mixed, st.dictionaries(_keys, _mixed, max_size=6)))
def test_one_iteration_as_loops_is_the_generators_answer(expr: str, value: Any) -> None:
    # the loops of `_compile_iterated` against the general generators of `_gen`, on the normalised-form reader and
    # on the in-place one, over values with keys and scalars that read differently normalised
    from workload_map.jq.parser import parse

    tree = parse(expr)
    shape = fastpath._iterated_chain(tree)
    assert shape is not None, expr
    try:
        normalised = convert.normalize(value)  # what the reader of the normalised form is given
    except TypeError:
        normalised = None
    for raw, given_value in ((False, normalised), (True, value)):
        generators = fastpath._gen(expr, tree, raw)
        assert _outcome(fastpath._compile_iterated(expr, *shape, raw), given_value) == _outcome(
            lambda v, generators=generators: list(generators(v)), given_value
        ), (expr, raw)
