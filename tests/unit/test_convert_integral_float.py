"""`jq.convert._may_hold_integral_float` answers what a search of the `_INTEGRAL_FLOAT` pattern answers, without
compiling it (issue 19)."""

from __future__ import annotations

import re

import msgspec
from hypothesis import example, given
from hypothesis import strategies as st

from workload_map.jq import convert

_PATTERN = re.compile(convert._INTEGRAL_FLOAT)

_PIECES = st.sampled_from([b".0", b".", b"0", b"1", b",", b"]", b"}", b"{", b"[", b'"', b"\n", b" ", b"a", b".00"])
_BYTES = st.lists(_PIECES, max_size=14).map(b"".join)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@given(_BYTES)
@example(b"")
@example(b".0")
@example(b".0\n")
@example(b".0\n\n")
@example(b"1.0.0]")
@example(b"[1.00]")
@example(b"[1.0 ]")
def test_the_check_is_the_pattern_search(data: bytes) -> None:
    assert convert._may_hold_integral_float(data) is (_PATTERN.search(data) is not None)


@given(st.binary(max_size=16))
def test_the_check_is_the_pattern_search_on_any_bytes(data: bytes) -> None:
    assert convert._may_hold_integral_float(data) is (_PATTERN.search(data) is not None)


@given(_JSON)
def test_the_check_is_the_pattern_search_on_encoded_json(value: object) -> None:
    data = msgspec.json.encode(value, order="sorted")
    assert convert._may_hold_integral_float(data) is (_PATTERN.search(data) is not None)


def test_integral_floats_are_still_written_as_integers() -> None:
    assert convert.encode({"b": [1.0, 2.5], "a": 3.0}) == '{"a":3,"b":[1,2.5]}'
