"""The built-in DisaggregatedSet definition's scale: a role runs replicas x slices LeaderWorkerSet groups, each a
leader and size - 1 workers; a role of leaders alone has no worker instance; an External role's groups are the ones
the controller reports (its target lives in a DisaggregatedSetRoleScaler, another object)."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from workload_map.catalog import builtin_registry
from workload_map.resolve import resolve

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog" / "disaggregatedset-x-k8s-io-disaggregatedset-v1"


@cache
def _fixture() -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load((FIXTURE / "workload.yaml").read_text())
    return obj


def _replicas(obj: dict[str, Any]) -> dict[str, dict[str, int]]:
    entry = builtin_registry().for_object(obj)
    assert entry is not None and entry.karta.name == "disaggregatedset-x-k8s-io-disaggregatedset-v1"
    resolution = resolve(entry.karta, obj)
    assert resolution.errors == ()
    return {
        name: {key: instance.desired_replicas for key, instance in resolution.component(name).instances.items()}
        for name in ("leader", "worker")
    }


def test_the_fixture_runs_a_leader_per_group_and_workers_only_for_multi_node_roles() -> None:
    # prefill: 2 groups of size 2; decode: 1 group of size 1 (no workers).
    assert _replicas(_fixture()) == {"leader": {"prefill": 2, "decode": 1}, "worker": {"prefill": 2}}


def test_slices_multiply_every_role() -> None:
    obj = copy.deepcopy(_fixture())
    obj["spec"]["slices"] = 3
    assert _replicas(obj) == {"leader": {"prefill": 6, "decode": 3}, "worker": {"prefill": 6}}


def test_an_external_role_counts_the_groups_the_controller_reports() -> None:
    obj = copy.deepcopy(_fixture())
    prefill = obj["spec"]["roles"][0]
    prefill["scaling"] = {"mode": "External"}
    prefill["spec"]["replicas"] = 9  # ignored by the controller for an External role
    obj["status"]["roleStatuses"][0]["replicas"] = 4
    assert _replicas(obj) == {"leader": {"prefill": 4, "decode": 1}, "worker": {"prefill": 4}}
