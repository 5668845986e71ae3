"""The definition annotations' JSON (`model.extensions._json_loads`) reads every text as `json.loads` does: the same
value, or a ValueError, with msgspec's decoder tried first (issue 19: start-up) and json deciding whenever msgspec
refuses a text."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_map.model.extensions import _json_loads, copies_expressions, copies_problems


def _outcome(read: Any, text: str) -> tuple[Any, ...]:
    try:
        value = read(text)
    except ValueError as exc:
        return ("error", str(exc))
    return ("value", json.dumps(value, sort_keys=True, allow_nan=True), _types(value))


def _types(value: Any) -> Any:
    # json.dumps alone would not tell 1 from 1.0 or True from 1
    if isinstance(value, dict):
        return {key: _types(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_types(item) for item in value]
    return type(value).__name__


EDGE_CASES = [
    '{"replicatedjob": ".spec.replicatedJobs[]? | .replicas"}',
    '{"a": "x", "a": "y"}',
    '{"a": NaN}',
    '{"a": Infinity, "b": -Infinity}',
    '{"a": 1e999}',
    '{"a": 123456789012345678901234567890}',
    '{"a": -0, "b": 0.0, "c": 5e-324, "d": 1.7976931348623157e308}',
    '{"a": "\\ud800"}',
    '{"a": "\\u00e9", "é": "\\n"}',
    '{"a": "x\ty"}',
    '{"a": "x\u0001"}',
    ' {"a": "x"} \n',
    '\ufeff{"a": "x"}',
    "\x0c{}",
    '{"a": "x"} x',
    "[1,]",
    '{"a": 1,}',
    "{'a': 'x'}",
    "",
    "   ",
    "null",
    '"x"',
    "[" * 50 + "]" * 50,
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_an_annotation_text_reads_as_json_loads_reads_it(text: str) -> None:
    assert _outcome(_json_loads, text) == _outcome(json.loads, text)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_JSON, st.booleans())
def test_any_json_text_reads_as_json_loads_reads_it(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=True)
    ours, theirs = _outcome(_json_loads, text), _outcome(json.loads, text)
    assert ours == theirs
    if isinstance(value, float) and math.isnan(value):
        assert ours[0] == "value"  # json's NaN, which msgspec refuses


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]":,.0123456789-+eE \t\nabntrufl\\u', max_size=24))
def test_any_text_is_read_or_refused_as_json_loads_does(text: str) -> None:
    assert _outcome(_json_loads, text)[0] == _outcome(json.loads, text)[0]
    if _outcome(json.loads, text)[0] == "value":
        assert _outcome(_json_loads, text) == _outcome(json.loads, text)


def test_the_annotation_readers_keep_their_messages() -> None:
    assert copies_expressions({"workloadmap.io/copies": '{"workers": " .spec.n "}'}) == {"workers": ".spec.n"}
    assert copies_problems({"workloadmap.io/copies": "{not json"}) == [
        "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    ]
