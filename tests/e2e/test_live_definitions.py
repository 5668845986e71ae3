"""Karta definitions stored in the cluster (`kartas.run.ai`) drive the live commands: a type only a cluster
definition covers is listed and described (origin `cluster`), a local `--definitions` file wins over it, and an
invalid cluster definition is skipped with a warning naming it. The test creates its own CRD (a kind nothing else
uses) and deletes everything it created, since Kartas are cluster-scoped."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ApiServer, expect
from .test_live_support import Wmap, create, create_pod, summary, wmap_requests

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("cluster_api")]  # every case: sync and async API

KARTAS = "/apis/run.ai/v1alpha1/kartas"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _karta(name: str, group: str, *, replicas_path: str = ".spec.replicas") -> dict[str, Any]:
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "trainer",
                    "kind": {"group": group, "version": "v1", "kind": "LiveWidget"},
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "scaleDefinition": {"replicasPath": replicas_path},
                    "statusDefinition": {
                        "conditionsDefinition": {"path": ".status.conditions"},
                        "statusMappings": {"running": [{"byConditions": [{"type": "Ready", "status": "True"}]}]},
                    },
                }
            }
        },
    }


@pytest.fixture
def widget_type(api_server: ApiServer, karta_crd: dict[str, Any]) -> Iterator[dict[str, str]]:
    """A CRD `LiveWidget` in a fresh group, a cluster Karta for it, and an invalid cluster Karta; all deleted after."""
    suffix = uuid.uuid4().hex[:8]
    group = f"live-{suffix}.wmap-e2e.example.com"
    crd: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"livewidgets.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": "LiveWidget", "plural": "livewidgets", "singular": "livewidget", "shortNames": ["lwd"]},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            },
                        }
                    },
                    "subresources": {"status": {}},
                }
            ],
        },
    }
    good, bad = f"livewidget-{suffix}", f"broken-{suffix}"
    with api_server.client() as kube:
        expect(kube.post(CRDS, json=crd), 201)
        api_server.wait_crd_established(crd["metadata"]["name"])
        expect(kube.post(KARTAS, json=_karta(good, group)), 201)
        broken = _karta(bad, f"other-{group}", replicas_path=".spec.replicas |||")
        expect(kube.post(KARTAS, json=broken), 201)
        try:
            yield {"group": group, "karta": good, "broken": bad}
        finally:
            kube.delete(f"{KARTAS}/{good}")
            kube.delete(f"{KARTAS}/{bad}")
            kube.delete(f"{CRDS}/{crd['metadata']['name']}")


def _widget(api_server: ApiServer, namespace: str, group: str) -> dict[str, Any]:
    widget = create(
        api_server,
        {
            "apiVersion": f"{group}/v1",
            "kind": "LiveWidget",
            "metadata": {"name": "w1"},
            "spec": {
                "replicas": 2,
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "main", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "2"}}}
                        ]
                    }
                },
            },
        },
        namespace=namespace,
        status={"conditions": [{"type": "Ready", "status": "True"}]},
    )
    for index in range(2):
        create_pod(api_server, namespace, f"w1-{index}", owner=widget, gpus=2)
    return widget


def test_a_cluster_definition_covers_a_type_for_get_and_describe(
    api_server: ApiServer, wmap: Wmap, widget_type: dict[str, str], namespace: str
) -> None:
    _widget(api_server, namespace, widget_type["group"])
    mark = api_server.audit_mark()
    listed = wmap.run("get", "livewidgets", "-o", "wide", namespace=namespace)
    assert listed.code == 0, listed.stderr
    header, row = (line.split() for line in listed.stdout.splitlines())
    cells = dict(zip(header, row, strict=True))
    assert cells["NAME"] == "w1" and cells["PHASE"] == "Running" and cells["ORIGIN"] == "cluster"
    assert cells["PODS"] == "2" and cells["GPU"] == "4"
    # The invalid cluster definition is skipped, and says so; the valid one is used.
    assert f'warning: skipping Karta definition "{widget_type["broken"]}" from the cluster' in listed.stderr
    calls = summary(wmap_requests(api_server, mark))
    assert calls.count(("list", "kartas")) == 1

    view = wmap.json("describe", "lwd/w1", namespace=namespace)  # a short name, through discovery
    assert view["definition"] == widget_type["karta"] and view["origin"] == "cluster"
    assert view["replicas"] == {"desired": 2, "current": 2, "ready": 2}


def test_a_local_definition_wins_over_the_cluster_one(
    api_server: ApiServer, wmap: Wmap, widget_type: dict[str, str], namespace: str, tmp_path: Path
) -> None:
    _widget(api_server, namespace, widget_type["group"])
    local = _karta("my-livewidget", widget_type["group"])
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(local))
    result = wmap.run("get", "livewidget/w1", "--definitions", str(path), "-o", "json", namespace=namespace)
    assert result.code == 0, result.stderr
    item = json.loads(result.stdout)
    assert item["definition"] == "my-livewidget" and item["origin"] == "local"


# --- `wmap definitions` lists the cluster's definitions ------------------------------------------------------------


def _definition_rows(result: Any) -> dict[str, list[str]]:
    """NAME -> the other cells of `wmap definitions` (no cell here has spaces but COMPONENTS, which is left out)."""
    rows: dict[str, list[str]] = {}
    for line in result.stdout.splitlines()[1:]:
        cells = line.split()
        rows[cells[0]] = [cells[1], cells[-1]]  # GROUP/VERSION/KIND, ORIGIN
    return rows


def test_wmap_definitions_lists_a_cluster_karta_with_origin_cluster(
    api_server: ApiServer, wmap: Wmap, widget_type: dict[str, str]
) -> None:
    group = widget_type["group"]
    result = wmap.run("definitions")
    assert result.code == 0, result.stderr
    rows = _definition_rows(result)
    assert rows[widget_type["karta"]] == [f"{group}/v1/LiveWidget", "cluster"]
    assert rows["kubeflow-org-pytorchjob-v1"][1] == "catalog"
    assert widget_type["broken"] not in rows
    assert f'warning: skipping Karta definition "{widget_type["broken"]}" from the cluster' in result.stderr

    one = wmap.run("definitions", widget_type["karta"], "-o", "yaml")
    assert one.code == 0, one.stderr
    assert yaml.safe_load(one.stdout)["spec"]["structureDefinition"]["rootComponent"]["kind"]["group"] == group
    filtered = wmap.run("definitions", "--group", group)
    assert list(_definition_rows(filtered)) == [widget_type["karta"]]


def test_wmap_definitions_precedence_is_local_then_cluster_then_catalog(
    api_server: ApiServer, wmap: Wmap, widget_type: dict[str, str], tmp_path: Path
) -> None:
    # a cluster Karta for a kind the catalog covers replaces the catalog's
    override = _karta(f"cluster-{widget_type['karta']}", "kubeflow.org")
    root = override["spec"]["structureDefinition"]["rootComponent"]
    root["kind"] = {"group": "kubeflow.org", "version": "v1", "kind": "PyTorchJob"}
    with api_server.client() as kube:
        expect(kube.post(KARTAS, json=override), 201)
        try:
            cluster_wins = wmap.run("definitions", "--group", "kubeflow.org", "--kind", "PyTorchJob")
            local = _karta("my-livewidget", widget_type["group"])
            path = tmp_path / "mine.yaml"
            path.write_text(yaml.safe_dump(local))
            local_wins = wmap.run("definitions", "--definitions", str(path))
        finally:
            kube.delete(f"{KARTAS}/{override['metadata']['name']}")
    assert cluster_wins.code == 0, cluster_wins.stderr
    assert _definition_rows(cluster_wins) == {override["metadata"]["name"]: ["kubeflow.org/v1/PyTorchJob", "cluster"]}
    assert local_wins.code == 0, local_wins.stderr
    rows = _definition_rows(local_wins)
    assert rows["my-livewidget"] == [f"{widget_type['group']}/v1/LiveWidget", "local"]
    assert widget_type["karta"] not in rows


def test_wmap_definitions_without_list_permission_warns_and_lists_the_catalog(
    api_server: ApiServer, wmap: Wmap
) -> None:
    assert api_server.restricted_kubeconfig is not None
    result = wmap.run("definitions", kubeconfig=api_server.restricted_kubeconfig)
    assert result.code == 0
    assert result.stderr.startswith("warning: not allowed to list kartas.run.ai (as user wmap-restricted)")
    assert {cells[1] for cells in _definition_rows(result).values()} == {"catalog"}


# --- jq containment: a cluster definition's expressions run in the worker under the deadline ------------------------

RUNS_FOR_MINUTES = "reduce (.spec.points[] as $x | .spec.points[] as $y | .spec.points[]) as $z (0; . + 1) > 0"


@pytest.fixture
def crunch_type(api_server: ApiServer, karta_crd: dict[str, Any]) -> Iterator[dict[str, str]]:
    """A CRD `LiveCrunch` in a fresh group and a cluster Karta whose `running` matcher loops 10^9 times over a
    1,000-item `.spec.points` (minutes in process); deleted after."""
    suffix = uuid.uuid4().hex[:8]
    group = f"crunch-{suffix}.wmap-e2e.example.com"
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    crd: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"livecrunches.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": "LiveCrunch", "plural": "livecrunches", "singular": "livecrunch"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": schema}}},
                }
            ],
        },
    }
    karta = _karta(f"livecrunch-{suffix}", group)
    root = karta["spec"]["structureDefinition"]["rootComponent"]
    root["kind"]["kind"] = "LiveCrunch"
    root["statusDefinition"]["statusMappings"] = {
        "running": [{"byExpression": {"expression": RUNS_FOR_MINUTES, "expectedResult": "true"}}]
    }
    with api_server.client() as kube:
        expect(kube.post(CRDS, json=crd), 201)
        api_server.wait_crd_established(crd["metadata"]["name"])
        expect(kube.post(KARTAS, json=karta), 201)
        try:
            yield {"group": group, "karta": karta["metadata"]["name"]}
        finally:
            kube.delete(f"{KARTAS}/{karta['metadata']['name']}")
            kube.delete(f"{CRDS}/{crd['metadata']['name']}")


def test_a_cluster_definition_is_stopped_at_the_jq_deadline_by_default(
    api_server: ApiServer, wmap: Wmap, crunch_type: dict[str, str], namespace: str
) -> None:
    spec = {"replicas": 1, "points": list(range(1000)), "template": {"spec": {"containers": [{"name": "c"}]}}}
    create(
        api_server,
        {"apiVersion": f"{crunch_type['group']}/v1", "kind": "LiveCrunch", "metadata": {"name": "big"}, "spec": spec},
        namespace=namespace,
    )
    # No --jq-mode: auto runs the cluster's definition in the worker. (In process this would run for minutes.)
    result = wmap.installed("--jq-deadline", "1", "describe", "livecrunch/big", namespace=namespace)
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.startswith("LiveCrunch/big")
    lines = result.stderr.splitlines()
    assert lines[-2].startswith(
        f'error: definition "{crunch_type["karta"]}" (cluster): evaluation exceeded the 1 s deadline in \'reduce ('
    )
    assert lines[-1].startswith("hint: the output is incomplete; allow more time with --jq-deadline SECONDS")

    listed = wmap.installed("--jq-deadline", "1", "get", "livecrunches", namespace=namespace)
    assert listed.code == 1  # the row could not be resolved (a warning says why), and the run says it was stopped
    assert "could not resolve LiveCrunch/big" in listed.stderr
    assert "evaluation exceeded the 1 s deadline" in listed.stderr.splitlines()[-2]
