"""`wmap describe TYPE/NAME` against the real API server: the live view equals the offline view of the same
objects, pods are read once and owners once per kind, and the edge cases (deleted owner, restricted user,
uninstalled CRD, unknown type, 1,000 pods) behave as a user expects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workload_map.catalog import builtin_registry
from workload_map.resolve import Workload
from workload_map.view import build_view

from .conftest import ApiServer
from .test_live_support import (
    FIXTURES,
    Wmap,
    fixture_objects,
    install_fixture,
    make_wmap,
    served_kinds,
    summary,
    wmap_requests,
)

pytestmark = pytest.mark.e2e

CATALOG_FIXTURES = sorted(p.name for p in FIXTURES.iterdir() if (p / "workload.yaml").exists())


def _shape(component: dict[str, Any]) -> dict[str, Any]:
    """What a user sees of a component: counts, requests, nodes, pods and children (not UIDs or times)."""
    return {
        "name": component["name"],
        "replicas": component["replicas"],
        "resources": component["resources"],
        "nodes": component.get("nodes", []),
        "pods": [
            {k: pod.get(k) for k in ("name", "phase", "ready", "node", "reason", "replica")}
            for pod in component.get("pods", [])
        ],
        "children": [_shape(child) for child in component.get("children", [])],
    }


def _view_shape(view: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": view["kind"],
        "phases": view["phases"],
        "replicas": view["replicas"],
        "resources": view["resources"],
        "components": [_shape(c) for c in view["components"]],
        "unclaimed": sorted(p["name"] for p in view.get("unclaimedPods", [])),
    }


@pytest.fixture
def wmap(api_server: ApiServer, tmp_path: Path) -> Wmap:
    return make_wmap(api_server, tmp_path)


@pytest.fixture(scope="module")
def served(api_server: ApiServer) -> set[tuple[str, str]]:
    return served_kinds(api_server)


@pytest.mark.parametrize("fixture", CATALOG_FIXTURES)
def test_live_describe_equals_the_offline_view_of_the_same_objects(
    fixture: str, api_server: ApiServer, served: set[tuple[str, str]], wmap: Wmap, make_namespace: Any
) -> None:
    workload, owners, pods = fixture_objects(fixture)
    missing = sorted(
        {f"{o['apiVersion']} {o['kind']}" for o in [workload, *owners] if (o["apiVersion"], o["kind"]) not in served}
    )
    if missing:
        pytest.skip(f"the test server does not serve {', '.join(missing)}")
    namespace = make_namespace("wmap-live")
    stored = install_fixture(api_server, fixture, namespace)
    name = stored["metadata"]["name"]

    mark = api_server.audit_mark()
    live = wmap.json("describe", f"{stored['kind'].lower()}/{name}", namespace=namespace)
    events = wmap_requests(api_server, mark)

    registry = builtin_registry()
    resolved = registry.for_object(workload)
    assert resolved is not None
    offline = build_view(Workload(resolved.karta, workload), pods=pods, owners=owners, origin=resolved.origin)
    assert _view_shape(live) == _view_shape(offline.to_dict())
    assert live["namespace"] == namespace and live["uid"] == stored["metadata"]["uid"]
    assert live["fileMode"] is False

    # One GET of the workload, one pod LIST, one metadata LIST per owner kind; never a read per pod.
    calls = summary(events)
    assert calls.count(("get", stored["kind"].lower() + "s")) <= 1
    pod_lists = [c for c in calls if c == ("list", "pods")]
    assert len(pod_lists) == (0 if stored["kind"] == "Pod" else 1)
    assert len([c for c in calls if c == ("get", "pods")]) == (1 if stored["kind"] == "Pod" else 0)
    owner_lists = [c for c in calls if c[0] == "list" and c[1] not in ("pods", "kartas")]
    assert len(owner_lists) == len(set(owner_lists)), calls
    owner_kinds = {o["kind"] for o in owners if o["kind"] != stored["kind"]}
    assert len(owner_lists) <= len(owner_kinds), calls
