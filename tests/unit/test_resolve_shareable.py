"""`resolve._json.shareable`, the plain-JSON check of a caller's object (issue 19, complete resolution, second round).

Its `null` search is a regular expression (twice as fast as `in` on a Kubernetes object's text); what must hold:
it finds `null` wherever `in` does, so a NaN or an infinity (which msgspec writes as `null`) is never let through,
next to nulls or alone, at the top, deep, in lists, as keys' values of every kind.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_codegen import SETTINGS
from workload_map.resolve import _json


@SETTINGS
@given(st.binary(max_size=64) | st.text(alphabet='nul"l{[ ', max_size=40).map(str.encode))
def test_the_null_search_finds_what_in_finds(data: bytes) -> None:
    assert (_json._NULL.search(data) is not None) == (b"null" in data)


def _places(value: Any) -> list[dict[str, Any]]:
    return [
        {"x": value},
        {"spec": {"template": {"metadata": {"creationTimestamp": None}}, "replicas": value}},
        {"a": None, "b": [1, "null", {"c": [value]}]},
        {"nullable": "null", "deep": [[[[{"v": value}]]]]},
    ]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_number_anywhere_is_not_shareable(bad: float) -> None:
    for obj in _places(bad):
        assert not _json.shareable(obj)
        with pytest.raises(_json.NotJSONError):  # the copy it sends the object to names the number
            _json.json_copy(obj)


@pytest.mark.parametrize("fine", [None, 1.5, 0, "null", [None]])
def test_plain_values_with_or_without_nulls_are_shareable(fine: Any) -> None:
    for obj in _places(fine):
        assert _json.shareable(obj)


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(item) for item in value)
    return False


_NUMBERS = st.recursive(
    st.floats() | st.integers(-(2**63), 2**64 - 1) | st.none() | st.text(alphabet="\u02c0\u02ff\xcb a", max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=20,
)


@SETTINGS
@given(_NUMBERS)
def test_the_non_finite_search_finds_every_nan_and_infinity(value: Any) -> None:
    """Its byte search first (no float64 marker: no float) answers as the pattern alone did. (An integer msgpack
    cannot hold answers True: "look closer", and the copy's walk does.)"""
    assert _json._non_finite(value) == _has_non_finite(value)
