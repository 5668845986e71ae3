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
from .test_live_support import Wmap, create, create_pod, make_wmap, summary, wmap_requests

pytestmark = pytest.mark.e2e

KARTAS = "/apis/run.ai/v1alpha1/kartas"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture
def wmap(api_server: ApiServer, tmp_path: Path) -> Wmap:
    return make_wmap(api_server, tmp_path)


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
                        "statusMappings": {"running": [{"byConditions": [{"type": "Ready", "status": "True"}]}]}
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
    crd = {
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
