"""The nesting check of a workload object read in place (`resolve._json._too_deep`), issue 19.

Past MAX_DEPTH containers the JSON text is split by msgspec (`_text_nests_deeper`) before any Python walk of the
value; what must hold: the answer is the walk's (`_walk_too_deep`, the check as it was) for every value, the text
never says "not too deep" of a value that is, and it says so exactly when no string holds a bracket.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.test_codegen import SETTINGS
from workload_map._limits import MAX_DEPTH
from workload_map.resolve import _json

_ENCODE = msgspec.json.Encoder().encode


def _depth(value: Any) -> int:
    """How many levels of containers lie below `value` (0: no container inside it, -1: not a container)."""
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=-1)
    if isinstance(value, list | tuple):
        return 1 + max((_depth(item) for item in value), default=-1)
    return -1


def _as_before(value: Any, data: bytes) -> bool:
    """The check before the text was split: two counts, then the level walk."""
    if data.count(b"[") + data.count(b"{") <= MAX_DEPTH:
        return False
    return _json._walk_too_deep(value)


_TEXT = st.sampled_from(["", "a", "[", "]", "{", "}", "[[{", "}]]", 'q"[', "\\[", "é{"])
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=40,
)


def _brackets_in_strings(value: Any) -> bool:
    if isinstance(value, str):
        return any(char in value for char in "[]{}")
    if isinstance(value, dict):
        return any(_brackets_in_strings(key) or _brackets_in_strings(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_brackets_in_strings(item) for item in value)
    return False


@SETTINGS
@given(st.lists(_VALUES, max_size=3) | st.dictionaries(_TEXT, _VALUES, max_size=3), st.integers(0, 6))
def test_the_text_never_says_no_of_a_value_that_nests_deeper(value: Any, allowed: int) -> None:
    deeper = _depth(value) > allowed
    said = _json._text_nests_deeper(_ENCODE(value), allowed)
    if deeper:
        assert said
    if not _brackets_in_strings(value):
        assert said == deeper


def _chain(depth: int, *, lists: bool = False, text: str = "x") -> Any:
    """A container nested `depth` levels below the top one, in which each level also holds a string."""
    inner: Any = {"leaf": text}
    for level in range(depth):
        inner = [text, inner] if lists and level % 2 else {"s": text, "next": inner}
    return inner


def _wide(depth: int, **chain: Any) -> dict[str, Any]:
    """`_chain` beside 600 small containers, so the count alone cannot answer."""
    return {"chain": _chain(depth, **chain), "wide": [{"n": index} for index in range(600)]}


@dataclasses.dataclass
class _Typed:
    """A typed value: encoded as an object, which the walk does not count as a container."""

    inner: Any


CASES: list[tuple[str, Any]] = []
for _depth_below in (MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 3):
    CASES += [
        (f"chain {_depth_below}", _chain(_depth_below)),
        (f"wide {_depth_below}", _wide(_depth_below)),
        (f"wide lists {_depth_below}", _wide(_depth_below, lists=True)),
        (f"wide brackets {_depth_below}", _wide(_depth_below, text="[[[{{")),
        (f"wide closing {_depth_below}", _wide(_depth_below, text="]]}}")),
    ]
CASES += [
    ("typed below the limit", {"wide": [{"n": index} for index in range(600)], "t": _Typed(_chain(MAX_DEPTH - 1))}),
    ("a tuple chain", _wide(MAX_DEPTH + 1) | {"tuple": (1, (2, (3,)))}),
]


@pytest.mark.parametrize(("name", "value"), CASES, ids=[name for name, _ in CASES])
def test_the_check_answers_as_the_walk_did(name: str, value: Any) -> None:
    data = _json._ENCODER.encode(value)
    assert _json._too_deep(value, data) == _as_before(value, data)


def test_the_cases_include_both_answers() -> None:
    answers = {_as_before(value, _json._ENCODER.encode(value)) for _, value in CASES}
    assert answers == {True, False}


def test_a_large_object_is_answered_by_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a vacuous pass: a wide object below the limit is answered without the walk."""
    value = _wide(40)

    def no_walk(_value: Any) -> bool:
        raise AssertionError("walked")

    monkeypatch.setattr(_json, "_walk_too_deep", no_walk)
    assert _json._too_deep(value, _json._ENCODER.encode(value)) is False
    assert _json.shareable(value)


# --- the levels read from the brackets (`_bracket_levels`, issue 19 second round) -------------------------------


def _strings_hold(value: Any, chars: str) -> bool:
    if isinstance(value, str):
        return any(char in value for char in chars)
    if isinstance(value, dict):
        return any(_strings_hold(key, chars) or _strings_hold(item, chars) for key, item in value.items())
    if isinstance(value, list):
        return any(_strings_hold(item, chars) for item in value)
    return False


@SETTINGS
@given(st.lists(_VALUES, max_size=3) | st.dictionaries(_TEXT, _VALUES, max_size=3))
def test_the_bracket_levels_are_the_levels_or_nothing(value: Any) -> None:
    data = _ENCODE(value)
    levels = _json._bracket_levels(data)
    if levels is not None:  # an answer is the levels: the containers open at once, the top one counted
        assert levels == _depth(value) + 1
    if not _strings_hold(value, '[]{}"\\'):
        assert levels == _depth(value) + 1  # no string holds a bracket, a quote or a backslash: always answered
    if _strings_hold(value, "\\"):
        assert levels is None  # a backslash (an escape): the quotes may not pair up in order


def test_a_bracket_in_a_string_is_told_apart_from_a_container() -> None:
    for text in ("[", "]", "{}", "][", "a[b"):
        assert _json._bracket_levels(_ENCODE({"a": [text, {"b": text}]})) is None
    assert _json._bracket_levels(_ENCODE({"a": ["", {"b": "x"}], "c": ""})) == 3
    assert _json._bracket_levels(_ENCODE([[], {}, [[{}]]])) == 4
    assert _json._bracket_levels(b'"x"') == 0


def test_a_wide_object_without_brackets_in_strings_is_answered_by_its_brackets(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_split(*_args: Any, **_kwargs: Any) -> bool:
        raise AssertionError("split")

    monkeypatch.setattr(_json, "_text_nests_deeper", no_split)
    for depth in (40, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 3):
        value = _wide(depth)
        data = _json._ENCODER.encode(value)
        assert _json._too_deep(value, data) == _as_before(value, data) == (depth > MAX_DEPTH - 1)
