"""The formula in place remembers pod specs by their resource lists (issue 19, complete resolution, second round).

`resources.pod_requests_in_place` keeps, per content of a plain pod spec's containers' requests and limits (plain
strings only), the answer it gave. What must hold: an answer from the memo is the answer of reading the spec (and of
the formula on the normalised spec), in values, types and name order; a declined spec stays declined; only string
keys and amounts are kept (an int would match True and 1.0); each answer is a fresh dict; the memo stays bounded.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given

from tests.unit.test_codegen import SETTINGS
from tests.unit.test_resolve_objects_in_place import _SPECS, _outcome
from workload_map.jq import convert
from workload_map.resources import QuantityError, ResourceSpecError, formula
from workload_map.resources.formula import pod_requests_in_place


@pytest.fixture(autouse=True)
def _empty_memo() -> Iterator[None]:
    formula._IN_PLACE_MEMO.clear()
    yield
    formula._IN_PLACE_MEMO.clear()


def _listed(found: dict[str, Fraction] | None) -> Any:
    return None if found is None else [(name, type(amount), amount) for name, amount in found.items()]


def _read(spec: dict[str, Any]) -> Any:
    """The reading without the memo."""
    try:
        return _listed(formula._fractions(formula._pod_nanos(spec, None, in_place=True)))
    except (formula._NotInPlaceError, QuantityError, ResourceSpecError):
        return None


@SETTINGS
@given(_SPECS)
def test_an_answer_from_the_memo_is_the_answer_of_reading_the_spec(spec: dict[str, Any]) -> None:
    expected = _read(spec)
    first = pod_requests_in_place(spec)
    second = pod_requests_in_place(copy.deepcopy(spec))  # an equal spec: from the memo where it was kept
    assert _listed(first) == _listed(second) == expected
    if second is not None:
        assert [(name, amount) for name, amount in second.items()] == _outcome(convert.normalize(spec))


def test_common_pod_specs_are_kept_and_answered_again() -> None:
    spec = {
        "containers": [
            {"name": "a", "resources": {"requests": {"memory": "1Gi", "cpu": "1"}, "limits": {"nvidia.com/gpu": "2"}}},
            {"name": "b"},
            {"name": "c", "resources": {"limits": {"cpu": "500m"}}},
        ]
    }
    first = pod_requests_in_place(spec)
    assert len(formula._IN_PLACE_MEMO) == 1
    assert first == {"cpu": Fraction(3, 2), "memory": Fraction(2**30), "nvidia.com/gpu": Fraction(2)}
    assert list(first) == ["cpu", "memory", "nvidia.com/gpu"]  # names as the normalised spec gives them
    first["cpu"] = Fraction(0)  # each answer is the caller's own dict
    again = pod_requests_in_place(copy.deepcopy(spec))
    assert again == {"cpu": Fraction(3, 2), "memory": Fraction(2**30), "nvidia.com/gpu": Fraction(2)}
    assert len(formula._IN_PLACE_MEMO) == 1
    bad = {"containers": [{"resources": {"requests": {"cpu": "two"}}}]}
    assert pod_requests_in_place(bad) is None and pod_requests_in_place(copy.deepcopy(bad)) is None  # kept: declined


def test_only_plain_strings_are_kept() -> None:
    def spec(amount: Any) -> dict[str, Any]:
        return {"containers": [{"resources": {"requests": {"cpu": amount}}}]}

    assert pod_requests_in_place(spec(1)) == {"cpu": Fraction(1)}
    assert formula._IN_PLACE_MEMO == {}  # an int is equal to True and 1.0: never a key
    assert pod_requests_in_place(spec(True)) is None  # read (and refused) as before
    assert pod_requests_in_place(spec(1.0)) is None  # a float may read otherwise once normalised
    assert pod_requests_in_place(spec(None)) == {"cpu": Fraction(0)}
    assert pod_requests_in_place(spec(["1"])) is None  # unhashable: read, and refused
    assert pod_requests_in_place({"containers": [{"resources": {"requests": {1: "1"}}}]}) is None
    assert formula._IN_PLACE_MEMO == {}


def test_a_string_enum_amount_reads_as_its_value() -> None:
    class Amount(str, enum.Enum):
        ONE = "1"

    plain = {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}
    typed = {"containers": [{"resources": {"requests": {"cpu": Amount.ONE}}}]}
    expected = _outcome(convert.normalize(typed))
    assert pod_requests_in_place(plain) is not None
    for found in (pod_requests_in_place(typed), pod_requests_in_place(plain)):
        assert found is not None and list(found.items()) == expected


@pytest.mark.parametrize(
    "spec",
    [
        {"containers": [{"resources": {"requests": {"cpu": "1"}}}], "initContainers": [{"name": "i"}]},
        {"containers": [{"resources": {"requests": {"cpu": "1"}}}], "initContainers": {}},
        {"containers": [{"resources": {"requests": {"cpu": "1"}}}], "resources": {"limits": {"cpu": "2"}}},
        {"containers": [{"resources": {"requests": {"cpu": "1"}}}], "overhead": {"cpu": "1"}},
        {"containers": ({"resources": {"requests": {"cpu": "1"}}},)},
        {"containers": None},
        {"containers": [{"resources": {"requests": [("cpu", "1")]}}]},
    ],
)
def test_specs_the_key_does_not_cover_are_read_each_time(spec: dict[str, Any]) -> None:
    assert formula._plain_pod_key(spec) is None
    assert _listed(pod_requests_in_place(spec)) == _read(spec)
    assert formula._IN_PLACE_MEMO == {}


def test_the_memo_stays_bounded() -> None:
    for index in range(formula._IN_PLACE_MEMO_SIZE + 10):
        found = pod_requests_in_place({"containers": [{"resources": {"requests": {"cpu": str(index)}}}]})
        assert found == {"cpu": Fraction(index)}
    assert 0 < len(formula._IN_PLACE_MEMO) <= formula._IN_PLACE_MEMO_SIZE
