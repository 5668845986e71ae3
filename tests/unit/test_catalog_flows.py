"""Flow tables (tests/fixtures/flows/<definition>.yaml, format in tests/flows.py): every row of every table.

Each row is one step of a workload's life as its controller writes it (create, start, run, scale, suspend, resume,
pod failure, completion, failure, configuration error, a stale observedGeneration), read from the controller's
reconcile code at the version the file names. The object at that row must resolve through the built-in registry to
the definition the file is named after and give the row's primary phase. docs/catalog.md shows the tables
(scripts/gen_catalog_docs.py; tests/unit/test_catalog_docs.py checks they are current).
"""

from __future__ import annotations

from functools import cache

import pytest

from tests.flows import STEPS, Flow, FlowRow, all_rows, load_flows
from workload_map.catalog import DefinitionRegistry, builtin_registry
from workload_map.resolve import Workload

ROWS = all_rows()
# The definitions the issue asks flow tables for first (issue 15); each must have one.
REQUIRED = (
    "jobset-x-k8s-io-jobset-v1alpha2",
    "kubeflow-org-pytorchjob-v1",
    "kubeflow-org-mpijob-v2beta1",
    "ray-io-raycluster-v1",
    "ray-io-rayjob-v1",
    "leaderworkerset-x-k8s-io-leaderworkerset-v1",
    "apps-deployment-v1",
    "batch-job-v1",
    "apps-statefulset-v1",
    "serving-kserve-io-inferenceservice-v1beta1",
    "grove-io-podcliqueset-v1alpha1",
    "nvidia-com-dynamographdeployment-v1alpha1",
)


@cache
def _registry() -> DefinitionRegistry:
    return builtin_registry()


@pytest.mark.parametrize(("flow", "row"), ROWS, ids=[row.id for _, row in ROWS])
def test_the_definition_gives_the_phase_of_each_step_its_controller_writes(flow: Flow, row: FlowRow) -> None:
    obj = flow.object_at(row)
    resolved = _registry().for_object(obj)
    assert resolved is not None and resolved.exact, f"{row.id}: no built-in definition"
    assert resolved.karta.name == flow.definition
    status = Workload(resolved.karta, obj).status
    assert status.phase == row.phase, f"{row.id} ({row.what}): matched {status.phases}"


@pytest.mark.parametrize(("flow", "row"), ROWS, ids=[row.id for _, row in ROWS])
def test_each_row_names_a_known_step_and_the_code_it_follows(flow: Flow, row: FlowRow) -> None:
    assert row.step in STEPS, f"{row.id}: step {row.step!r} is not one of {STEPS}"
    assert row.what and row.source, row.id


def test_every_flow_names_its_controller_and_version_and_keeps_the_step_order() -> None:
    flows = load_flows()
    assert flows
    for flow in flows:
        assert flow.controller and flow.version, flow.definition
        order = [STEPS.index(row.step) for row in flow.rows]
        assert order == sorted(order), f"{flow.definition}: rows out of step order"


def test_the_definitions_the_issue_names_have_flow_tables() -> None:
    assert set(REQUIRED) <= {flow.definition for flow in load_flows()}


def test_every_flow_is_of_a_built_in_definition() -> None:
    names = {entry.karta.name for entry in _registry().all()}
    assert {flow.definition for flow in load_flows()} <= names


def test_every_built_in_definition_has_a_flow_table() -> None:
    names = {entry.karta.name for entry in _registry().all()}
    assert names - {flow.definition for flow in load_flows()} == set()
