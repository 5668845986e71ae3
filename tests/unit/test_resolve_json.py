"""The plain-JSON helpers under the resolve layer: gojq `tostring` formatting, path reads, merge patches.

These decide what `byExpression` compares and what `merge_patch()` sends, so each case is one a user could hit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_map._limits import MAX_DEPTH
from workload_map.resolve._json import _ENCODER, _too_deep, _walk_too_deep, get_path, jq_tostring, merge_patch


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


# --- the depth check of objects read in place ------------------------------------------------------------------


def _reference_depth_over(value: Any, limit: int) -> bool:
    """The plain walk `_too_deep` replaces: any Mapping, list or tuple below level `limit` (the top is level 0)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, Mapping) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, Mapping | list | tuple))
    return False


class _Frozen(Mapping[str, Any]):
    """A Mapping that is not a dict (the walk must still descend into it)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _nested(depth: int, wrap: Callable[[Any, int], Any]) -> Any:
    value: Any = "leaf"
    for level in range(depth):
        value = wrap(value, level)
    return value


_WRAPS: list[Callable[[Any, int], Any]] = [
    lambda inner, _: [inner],
    lambda inner, level: {"k": inner, "pad": [1, "x", None]} if level % 2 else (inner, 2.5),
    lambda inner, level: _Frozen({"a": inner}) if level % 3 == 0 else [True, inner, {"z": 1}],
]


@pytest.mark.parametrize("wrap", _WRAPS)
@pytest.mark.parametrize("depth", [0, 1, 498, 499, 500, 501, 502, 700])
def test_the_depth_check_answers_as_the_plain_walk(wrap: Callable[[Any, int], Any], depth: int) -> None:
    value = {"spec": _nested(depth, wrap), "wide": [{"env": [{"name": str(i)} for i in range(300)]}]}
    assert _walk_too_deep(value) == _reference_depth_over(value, MAX_DEPTH)
    assert _walk_too_deep(value) == (depth > MAX_DEPTH)  # the innermost container is at level `depth`
    try:
        data = _ENCODER.encode(value)
    except TypeError:
        return  # a Mapping that is not a dict: msgspec refuses it, so the check never sees it
    assert _too_deep(value, data) == (depth > MAX_DEPTH)  # through the text (past 500 containers), then the walk


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3)),
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.lists(children, max_size=3).map(tuple),
            st.dictionaries(st.text(max_size=2), children, max_size=3),
            st.dictionaries(st.text(max_size=2), children, max_size=2).map(_Frozen),
        ),
        max_leaves=30,
    ),
    st.integers(min_value=0, max_value=6),
)
def test_the_depth_check_answers_as_the_plain_walk_at_any_limit(value: Any, limit: int) -> None:
    import workload_map.resolve._json as module

    original = getattr(module, "MAX_DEPTH")  # noqa: B009 - the module does not export it
    setattr(module, "MAX_DEPTH", limit)  # noqa: B010 - a small limit, so generated values cross it
    try:
        assert _walk_too_deep([value]) == _reference_depth_over([value], limit)
        padded = [value, [{}] * 600]  # past 600 containers: the text is split first
        try:
            data = _ENCODER.encode(padded)
        except TypeError:
            return  # a Mapping that is not a dict: msgspec refuses it, so the check never sees it
        assert _too_deep(padded, data) == _reference_depth_over(padded, limit)
    finally:
        setattr(module, "MAX_DEPTH", original)  # noqa: B010
