"""The plain-JSON helpers under the resolve layer: gojq `tostring` formatting, path reads, merge patches.

These decide what `byExpression` compares and what `merge_patch()` sends, so each case is one a user could hit.
"""

from __future__ import annotations

import pytest

from workload_map.resolve._json import get_path, jq_tostring, merge_patch


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("running", "running"),
        (None, "null"),
        (True, "true"),
        (3, "3"),
        (3.0, "3"),
        (-0.5, "-0.5"),
        (0.1, "0.1"),
        (100.0, "100"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e300, "1.5e+300"),
        (1e-7, "1e-7"),
        (1.25e-10, "1.25e-10"),
        (0.000001, "0.000001"),
        (2**60, "1152921504606847000"),
        ([1, "a", None], '[1,"a",null]'),
        ({"b": {"d": 1, "c": 2}, "a": "x"}, '{"a":"x","b":{"c":2,"d":1}}'),
        ({"q": 'say "hi"\n'}, '{"q":"say \\"hi\\"\\n"}'),
        ({"u": "é"}, '{"u":"é"}'),
    ],
)
def test_tostring_matches_gojq(value, text) -> None:
    assert jq_tostring(value) == text


def test_get_path_missing_is_none() -> None:
    assert get_path({"a": {"b": [1]}}, ["a", "b", 0]) == 1
    assert get_path({"a": {"b": [1]}}, ["a", "b", 5]) is None
    assert get_path({"a": 1}, ["a", "b"]) is None


def test_merge_patch() -> None:
    original = {"spec": {"suspend": False, "keep": 1, "gone": 2, "list": [1, 2]}, "status": {"x": 1}}
    current = {"spec": {"suspend": True, "keep": 1, "list": [1], "new": {"a": 1}}, "status": {"x": 1}}
    assert merge_patch(original, current) == {"spec": {"suspend": True, "gone": None, "list": [1], "new": {"a": 1}}}
    assert merge_patch(original, original) == {}


def test_merge_patch_tells_one_from_true_and_int_from_float() -> None:
    assert merge_patch({"a": 1}, {"a": True}) == {"a": True}
    assert merge_patch({"a": 1}, {"a": 1.0}) == {"a": 1.0}
