"""`min`/`max` in generated code without the order key when every element is of one type (issue 19, session 19).

`runtime._extreme` compares the elements themselves when they are all safe ints or all strings (Python's order of
one such type is jq's, and equal keys are equal values); mixed scalars still go through `_key`. What must hold:
the same element (the same object) and the same bails as the form with the key on any list of scalars, and the
generated `[a, b] | min` still equal to the current path.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_codegen import SETTINGS
from workload_map.jq import Document, codegen, runtime
from workload_map.jq.finish import Bail


def _with_key(values: Any, is_min: bool) -> Any:
    """The form before: every element through `_key`."""
    if type(values) is not list:
        raise Bail
    for value in values:
        kind = type(value)
        if not (kind is str or value is None or kind is bool or (kind is int and -(2**53) < value < 2**53)):
            raise Bail
    if not values:
        return None
    return min(values, key=runtime._key) if is_min else max(values, key=runtime._key)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**54), max_value=2**54),
    st.integers(min_value=-3, max_value=3),
    st.text(max_size=3),
    st.floats(allow_nan=True),
)
_LISTS = st.one_of(
    st.lists(st.integers(min_value=-(2**54), max_value=2**54), max_size=6),
    st.lists(st.integers(min_value=-3, max_value=3), max_size=6),
    st.lists(st.text(max_size=3), max_size=6),
    st.lists(_SCALARS, max_size=6),
    st.lists(st.one_of(st.integers(), st.lists(st.integers(), max_size=2)), max_size=3),
)


def _outcome(function: Any, values: Any, is_min: bool) -> Any:
    try:
        return ("value", function(values, is_min))
    except Bail:
        return ("bail",)


@SETTINGS
@given(_LISTS, st.booleans())
def test_the_same_element_and_the_same_bails_as_the_key(values: list[Any], is_min: bool) -> None:
    expected = _outcome(_with_key, list(values), is_min)
    found = _outcome(runtime._extreme, list(values), is_min)
    assert found == expected
    if expected[0] == "value":
        assert found[1] is expected[1] or (type(found[1]) is type(expected[1]) and found[1] == expected[1])


@pytest.mark.parametrize(
    "values",
    [[], [1, 2], [2, 1], [5, 5], ["b", "a"], ["é", "z", "a"], [1, "a"], [None, 0], [True, False, 1], [2**53, 1]],
)
def test_generated_min_and_max_give_what_the_current_path_gives(values: list[Any]) -> None:
    exprs = (".v | min", ".v | max", "[.v[0], .v[-1]] | min", "[.v[0], .v[-1]] | max")
    obj = {"v": values}
    found = codegen.batch_program(exprs).run(obj)
    expected = Document(obj).evaluate_many(exprs)
    for got, want in zip(found, expected, strict=True):
        if got is not codegen.BAIL:
            assert got == want and [type(x) for x in got] == [type(x) for x in want]


_PAIR_EXPRS = (
    "[.a, .b] | min",
    "[.a, .b] | max",
    "[.a // 1, .b // .a // 1] | min",
    "[.a, 3] | max",
    "[2, .b] | min",
    "[.a, .b, .a] | min",
    "[.a, (.b | length)] | min",
    "[(.a, .b), .b] | min",
    "(.a // 1) * ([.a // 1, .b // 1] | min)",
)
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**54), max_value=2**54),
    st.integers(min_value=-3, max_value=3),
    st.floats(allow_nan=True),
    st.text(max_size=2),
    st.lists(st.integers(min_value=-3, max_value=3), max_size=2),
    st.dictionaries(st.text(max_size=1), st.integers(min_value=0, max_value=2), max_size=2),
)


@SETTINGS
@given(st.fixed_dictionaries({}, optional={"a": _VALUES, "b": _VALUES}))
def test_a_pair_min_and_max_give_what_the_current_path_gives(obj: dict[str, Any]) -> None:
    found = codegen.batch_program(_PAIR_EXPRS).run(obj)
    expected = Document(obj).evaluate_many(_PAIR_EXPRS)
    for expr, got, want in zip(_PAIR_EXPRS, found, expected, strict=True):
        if got is codegen.BAIL:
            continue
        assert not isinstance(want, Exception), (expr, got, want)
        assert got == want and [type(x) for x in got] == [type(x) for x in want], expr


def test_a_pair_min_is_generated_without_the_array() -> None:
    source = codegen.generated_source(("[.a // 1, .b // 1] | min", "[.a, .b] | max", "[.a, .b, .a] | min"))
    pair_min, pair_max, triple = source.split("    try:")[1:]
    assert "EXT([" in pair_min and ".append(" not in pair_min.split("EXT([")[0].split("s += 2")[-1]
    assert " < " in pair_min and " > " in pair_max
    assert "EXT(x" in triple  # three items: the array and EXT, as before
    assert codegen.batch_program(("[.a // 1, .b // 1] | min",)).run({"a": 4, "b": 2}) == [[2]]
    assert codegen.batch_program(("[.a, .b] | max",)).run({"a": 4, "b": 2}) == [[4]]
