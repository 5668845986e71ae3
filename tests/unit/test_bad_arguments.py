"""Wrong arguments and unreadable objects (issue 16): the public API raised RecursionError, AttributeError or
TypeError for cyclic or 1,000-deep objects, `validate(None)`, `plan(..., pods=[None])`, `load_definitions(5)`.

A wrong argument type is `ArgumentTypeError` (a `WorkloadMapError` and a `TypeError`, docs/architecture.md,
"Errors"); wrong data is the layer's own error. Nothing else leaves the public API.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.fixtures import gang
from tests.fixtures.resolve import karta, obj
from tests.samples import MINIMAL_KARTA
from workload_map import (
    WorkloadMapError,
    attribute,
    build_view,
    dump_json,
    dump_yaml,
    export,
    load_definitions,
    loads_definitions,
    plan,
    scan_definitions,
    validate,
)
from workload_map.errors import ArgumentTypeError
from workload_map.jq import evaluate
from workload_map.jq.convert import InputNotJSONError
from workload_map.model import DefinitionError, parse_documents
from workload_map.pods import PodQuerier
from workload_map.resolve import InvalidObjectError, Workload, resolve


def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["a"] = {"b": value}
    return value


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


RESOLUTION = resolve(karta("pyflow"), obj("pyflow"))
GANG = gang.workload("jobset", gang.obj("jobset")).resolve()

WRONG_TYPES: dict[str, Callable[[], Any]] = {
    "validate(None)": lambda: validate(None),  # type: ignore[arg-type]
    "validate(dict)": lambda: validate(MINIMAL_KARTA),  # type: ignore[arg-type]
    "load_definitions(5)": lambda: load_definitions(5),  # type: ignore[arg-type]
    "load_definitions(None)": lambda: load_definitions(None),  # type: ignore[arg-type]
    "load_definitions(bytes)": lambda: load_definitions(b"kind: Karta"),  # type: ignore[arg-type]
    "scan_definitions(5)": lambda: scan_definitions(5),  # type: ignore[arg-type]
    "loads_definitions(5)": lambda: loads_definitions(5),  # type: ignore[arg-type]
    "loads_definitions(None)": lambda: loads_definitions(None),  # type: ignore[arg-type]
    "parse_documents(5)": lambda: parse_documents(5),  # type: ignore[arg-type]
    "dump_yaml(None)": lambda: dump_yaml(None),  # type: ignore[arg-type]
    "dump_json([5])": lambda: dump_json([5]),  # type: ignore[list-item]
    "Workload(None, obj)": lambda: Workload(None, obj("pyflow")),  # type: ignore[arg-type]
    "Workload(policy=5)": lambda: Workload(karta("pyflow"), obj("pyflow"), policy=5),  # type: ignore[arg-type]
    "Workload(related=5)": lambda: Workload(karta("pyflow"), obj("pyflow"), related=5),  # type: ignore[arg-type]
    "Workload(related=[None])": lambda: Workload(karta("pyflow"), obj("pyflow"), related=[None]),  # type: ignore[list-item]
    "build_view(None)": lambda: build_view(None),  # type: ignore[arg-type]
    "build_view(attribution=5)": lambda: build_view(RESOLUTION, 5),  # type: ignore[arg-type]
    "build_view(gpu_resource_names=5)": lambda: build_view(RESOLUTION, gpu_resource_names=5),  # type: ignore[arg-type]
    "attribute(None, [])": lambda: attribute(None, []),  # type: ignore[arg-type]
    "attribute(pods=None)": lambda: attribute(RESOLUTION, None),  # type: ignore[arg-type]
    "attribute(pods=[None])": lambda: attribute(RESOLUTION, [None]),  # type: ignore[list-item]
    "attribute(pods=[5], unchecked)": lambda: attribute(RESOLUTION, [5], check_ownership=False),  # type: ignore[list-item]
    "attribute(owners=5)": lambda: attribute(RESOLUTION, [{}], 5),  # type: ignore[arg-type]
    "plan(None)": lambda: plan(None),  # type: ignore[arg-type]
    "plan(pods=[None])": lambda: plan(GANG, pods=[None]),  # type: ignore[list-item]
    "plan(pods=5)": lambda: plan(GANG, pods=5),  # type: ignore[arg-type]
    "export(None)": lambda: export(None, "kai"),  # type: ignore[arg-type]
    "evaluate(policy=5) via Workload": lambda: resolve(karta("pyflow"), obj("pyflow"), policy="worker"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("call", list(WRONG_TYPES.values()), ids=list(WRONG_TYPES))
def test_a_wrong_argument_type_is_an_argument_type_error(call: Callable[[], Any]) -> None:
    with pytest.raises(ArgumentTypeError) as info:
        call()
    assert isinstance(info.value, WorkloadMapError) and isinstance(info.value, TypeError)
    assert " must be " in str(info.value) and ", not " in str(info.value)


def test_the_message_names_the_argument_and_what_it_must_be() -> None:
    with pytest.raises(ArgumentTypeError, match=r"^pods\[1\] must be a mapping \(a Pod object\), not None$"):
        plan(GANG, pods=[{}, None])  # type: ignore[list-item]
    with pytest.raises(ArgumentTypeError, match=r"^the definition to validate must be a Karta .*, not NoneType|None"):
        validate(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "document",
    [_cycle(), {"spec": _deep(1000)}, {"spec": {"x": [_deep(600)]}}],
    ids=["cycle", "1000-deep", "600-deep-in-a-list"],
)
def test_a_cyclic_or_too_deep_object_is_an_invalid_object(document: dict[str, Any]) -> None:
    value = {**obj("pyflow"), **document}
    message = r"cannot be read as JSON: .*(a cycle|nested more than 500 levels)"
    workload = Workload(karta("pyflow"), value)  # a plain dict is checked when read, as far as the read needs
    with pytest.raises(InvalidObjectError, match=message):
        workload.resolve()
    with pytest.raises(InvalidObjectError, match=message):  # each read that needs the whole object, again
        workload.to_object()
    with pytest.raises(InvalidObjectError, match=message):
        resolve(karta("pyflow"), value)


def test_a_cyclic_or_deep_definition_dict_is_a_definition_error() -> None:
    value = copy.deepcopy(MINIMAL_KARTA)
    value["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"] = _cycle()
    with pytest.raises(DefinitionError, match="unknown field 'a'"):
        load_definitions(value)
    deep = copy.deepcopy(MINIMAL_KARTA)
    deep["metadata"]["labels"] = _deep(1000)
    with pytest.raises(DefinitionError, match="must be a string"):
        load_definitions(deep)
    huge = copy.deepcopy(MINIMAL_KARTA)
    huge["metadata"]["name"] = 10**5000
    with pytest.raises(DefinitionError, match=r"metadata\.name: must be a string, not an integer"):
        load_definitions(huge)


@pytest.mark.parametrize(
    "pod",
    [
        {"metadata": {"name": "p", "labels": _cycle()}},
        {"metadata": {"name": "p"}, "spec": _deep(3000)},
        {"metadata": {"name": "p", "generation": 10**5000}},
    ],
    ids=["cycle", "3000-deep", "huge-int"],
)
def test_a_pod_jq_cannot_read_is_that_pods_selector_error(pod: dict[str, Any]) -> None:
    query = PodQuerier(pod)
    assert query.evaluate(".metadata.name") == ["p"]  # the fast path reads the pod as it is
    with pytest.raises(WorkloadMapError, match="the pod cannot be given to jq: the object is not JSON"):
        query.evaluate("tojson | length")


def test_jq_refuses_an_unreadable_object_with_its_own_type_error() -> None:
    for value in (_cycle(), _deep(3000), {"n": 10**5000}):
        with pytest.raises(InputNotJSONError, match="the object is not JSON") as info:
            evaluate("[.[]] | length", value)
        assert isinstance(info.value, TypeError)
