"""`cli.manifests.jsonable` (its checks mapped in C, issue 19) against the generator form it replaced."""

from __future__ import annotations

import datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from workload_map.cli.manifests import _scalar_text, jsonable


def _reference(value: Any) -> Any:
    """The previous `jsonable`, the specification: the same result and the same objects kept or copied."""
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value) and not any(
            isinstance(item, (dict, list, datetime.date)) for item in value.values()
        ):
            return value
        return {key if isinstance(key, str) else _scalar_text(key): _reference(item) for key, item in value.items()}
    if isinstance(value, list):
        if not any(isinstance(item, (dict, list, datetime.date)) for item in value):
            return value
        return [_reference(item) for item in value]
    if isinstance(value, datetime.date):
        return _scalar_text(value)
    return value


class _Text(str):
    pass


_TIMES = st.one_of(
    st.dates(),
    st.datetimes(),
    st.datetimes(timezones=st.just(datetime.timezone.utc)),
    st.datetimes(timezones=st.just(datetime.timezone(datetime.timedelta(hours=2)))),
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5), _TIMES)
_KEYS = st.one_of(st.text(max_size=5), st.text(max_size=5).map(_Text), st.integers(), st.booleans(), st.none(), _TIMES)
_TREES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(_KEYS, children, max_size=4)),
    max_leaves=25,
)


def _shape(value: Any, original: Any) -> Any:
    """The value with, at each container, whether it is the original object (kept) or a copy. (Keys that become
    the same text leave fewer entries than the original has: not strict, the same pairing for both sides.)"""
    if isinstance(value, dict):
        pairs = zip(value.items(), original.values(), strict=False)
        return (value is original, [(key, _shape(item, original_item)) for (key, item), original_item in pairs])
    if isinstance(value, list):
        return (value is original, [_shape(item, other) for item, other in zip(value, original, strict=False)])
    return (type(value), value)


@given(_TREES)
def test_jsonable_is_the_generator_form(tree: Any) -> None:
    got, expected = jsonable(tree), _reference(tree)
    assert got == expected
    assert _shape(got, tree) == _shape(expected, tree)


def test_jsonable_converts_keys_and_timestamps_at_any_depth() -> None:
    moment = datetime.datetime(2026, 12, 2, 5, 0, tzinfo=datetime.timezone.utc)
    tree = {"a": [{"b": {1: moment, "c": [datetime.date(2026, 1, 2)]}}], "d": "x"}
    assert jsonable(tree) == {"a": [{"b": {"1": _scalar_text(moment), "c": ["2026-01-02"]}}], "d": "x"}
    plain = {"a": [{"b": 1}], "c": "x"}
    assert jsonable(plain) == plain
    leaf = {"b": 1}
    assert jsonable(leaf) is leaf
