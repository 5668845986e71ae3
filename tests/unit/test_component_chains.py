"""Long ownerRef chains (issue 16): the cycle check is linear (a 3,000-component chain took ~40 s, cubic), and a chain
that passes `validate` also resolves, views, plans and exports; a chain deeper than MAX_COMPONENT_DEPTH (100) is a
`component-depth` error, in `validate` and in `Workload` (even with `validate=False`), never "nested too deeply".
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import yaml

from workload_map import Workload, attribute, build_view, export, loads_definitions, plan, validate
from workload_map._limits import MAX_COMPONENT_DEPTH
from workload_map.model import Karta
from workload_map.resolve import InvalidDefinitionError, resolve
from workload_map.validation import errors

UID = "0d7f0a4e-0000-4000-8000-000000000001"


def chain(length: int, *, cycle: bool = False, pods: bool = True) -> Karta:
    children: list[dict[str, Any]] = []
    for index in range(length):
        child: dict[str, Any] = {
            "name": f"c{index}",
            "ownerRef": f"c{index - 1}" if index else "root",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
        }
        if pods:
            child["specDefinition"] = {"podTemplateSpecPath": ".spec.template"}
            child["scaleDefinition"] = {"replicasPath": ".spec.replicas"}
            child["podSelector"] = {"componentTypeSelector": {"matchLabels": {"c": f"c{index}"}}}
        children.append(child)
    if cycle:
        children[0]["ownerRef"] = f"c{length - 1}"
    members = [{"componentName": f"c{index}"} for index in range(length)] if pods else []
    value = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "chain"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "root",
                    "kind": {"group": "chain.example.com", "version": "v1", "kind": "Chain"},
                    "statusDefinition": {
                        "phaseDefinition": {"path": ".status.phase"},
                        "statusMappings": {"running": [{"byPhase": "Running"}]},
                    },
                },
                "childComponents": children,
            },
            **(
                {"optimizationInstructions": {"gangScheduling": {"podGroups": [{"name": "g", "members": members}]}}}
                if members
                else {}
            ),
        },
    }
    (karta,) = loads_definitions(json.dumps(value))
    return karta


OBJECT = {
    "apiVersion": "chain.example.com/v1",
    "kind": "Chain",
    "metadata": {"name": "c", "namespace": "ns", "uid": UID},
    "spec": {
        "replicas": 1,
        "template": {"spec": {"containers": [{"name": "m", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}},
    },
    "status": {"phase": "Running"},
}


def test_a_3000_component_cycle_is_found_in_well_under_a_second() -> None:
    karta = chain(3000, cycle=True, pods=False)
    started = time.monotonic()
    found = errors(validate(karta))
    assert time.monotonic() - started < 2
    (finding,) = found
    assert finding.rule == "ownership-cycle"
    assert finding.message.startswith("ownership cycle detected involving component c0 (c0 -> c2999 -> c2998")
    assert "2990 more" in finding.message and len(finding.message) < 300


def test_a_3000_component_chain_validates_quickly_and_is_too_deep() -> None:
    karta = chain(3000, pods=False)
    started = time.monotonic()
    found = errors(validate(karta))
    assert time.monotonic() - started < 2
    assert [(f.rule, f.path) for f in found] == [
        ("component-depth", f"spec.structureDefinition.childComponents[{MAX_COMPONENT_DEPTH}].ownerRef")
    ]
    assert f"at most {MAX_COMPONENT_DEPTH} are supported" in found[0].message


@pytest.mark.parametrize("validate_first", [True, False])
def test_a_chain_deeper_than_the_bound_is_an_invalid_definition(validate_first: bool) -> None:
    with pytest.raises(InvalidDefinitionError, match="component 'c100' is 101 ownerRef levels below the root"):
        Workload(chain(300), OBJECT, validate=validate_first)


def test_a_chain_as_deep_as_the_bound_resolves_views_plans_and_exports() -> None:
    karta = chain(MAX_COMPONENT_DEPTH)
    assert errors(validate(karta)) == []
    resolution = resolve(karta, OBJECT)
    assert resolution.errors == ()
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"p{index}",
                "namespace": "ns",
                "labels": {"c": f"c{index}"},
                "ownerReferences": [{"apiVersion": "chain.example.com/v1", "kind": "Chain", "name": "c", "uid": UID}],
            },
            "spec": {},
        }
        for index in range(MAX_COMPONENT_DEPTH)
    ]
    view = build_view(resolution, attribute(resolution, pods))
    assert view.replicas.desired == MAX_COMPONENT_DEPTH
    document = view.to_dict()
    yaml.safe_dump(document)
    json.dumps(document)
    gang_plan = plan(resolution, pods)
    for format_ in ("kai", "volcano", "coscheduling", "kueue"):
        json.dumps(export(gang_plan, format_), default=str)
    Workload(karta, OBJECT).tree()
