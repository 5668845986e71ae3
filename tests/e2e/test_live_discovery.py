"""Discovery against the real API server: aggregated discovery (2 requests) sees what per-group discovery sees, the
disk cache saves those requests on the next run, and a cached document that does not know a type just installed is
re-read once."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from workload_map.cluster import ConnectionSettings
from workload_map.cluster.core import get_op
from workload_map.cluster.discovery import fetch_op, legacy_op

from .apis import cluster_class
from .conftest import ApiServer, expect
from .test_live_support import Wmap, summary, widget_crd, widget_definition, wmap_requests

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("cluster_api")]  # every case: sync and async API

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def test_aggregated_discovery_sees_what_per_group_discovery_sees(
    api_server: ApiServer, tmp_path: Path, cluster_api: str
) -> None:
    settings = ConnectionSettings(kubeconfig=str(api_server.kubeconfig))
    with cluster_class(cluster_api)(settings, cache_dir=None) as cluster:
        client = cluster.client
        aggregated = cluster.run(fetch_op())
        assert len(client.requests) == 2
        legacy = cluster.run(legacy_op(cluster.run(get_op("/api")), cluster.run(get_op("/apis"))))
        assert len(client.requests) > 10  # one request per group version

    def key(doc: Any) -> set[tuple[Any, ...]]:
        return {(r.group, r.version, r.kind, r.plural, r.namespaced, r.short_names) for r in doc.resources}

    assert key(aggregated) == key(legacy)
    for group in ("", "apps", "batch", "jobset.x-k8s.io"):
        assert aggregated.group_versions[group][0] == legacy.group_versions[group][0]  # the preferred version
    deployments = aggregated.find("apps", "v1", "Deployment")
    assert deployments is not None and deployments.short_names == ("deploy",) and deployments.namespaced


def test_the_cache_saves_discovery_on_the_next_run(api_server: ApiServer, wmap: Wmap, namespace: str) -> None:
    mark = api_server.audit_mark()
    assert wmap.run("get", "jobsets", namespace=namespace).code == 0
    first = summary(wmap_requests(api_server, mark))
    assert ("get", "/api") in first and ("get", "/apis") in first
    assert list((wmap.cache / "discovery").glob("*/discovery.json"))

    mark = api_server.audit_mark()
    assert wmap.run("get", "jobsets", namespace=namespace).code == 0
    second = summary(wmap_requests(api_server, mark))
    assert sorted(second) == [("list", "jobsets"), ("list", "kartas")]

    # --cache-dir points elsewhere: a cold cache again.
    mark = api_server.audit_mark()
    other = wmap.cache.parent / "other-cache"
    assert wmap.run("get", "jobsets", "--cache-dir", str(other), namespace=namespace).code == 0
    assert ("get", "/apis") in summary(wmap_requests(api_server, mark))
    assert list((other / "discovery").glob("*/discovery.json"))


def test_a_type_installed_after_the_cache_was_written_is_found(
    api_server: ApiServer, wmap: Wmap, namespace: str, tmp_path: Path
) -> None:
    assert wmap.run("get", "jobsets", namespace=namespace).code == 0  # the cache now exists
    group = f"fresh-{uuid.uuid4().hex[:8]}.wmap-e2e.example.com"
    definition = tmp_path / "widget.yaml"
    definition.write_text(widget_definition(group))
    crd = widget_crd(group)
    with api_server.client() as kube:
        expect(kube.post(CRDS, json=crd), 201)
        try:
            api_server.wait_crd_established(crd["metadata"]["name"])
            mark = api_server.audit_mark()
            result = wmap.run("get", "widgets", "--definitions", str(definition), namespace=namespace)
            assert result.code == 0, result.stderr
            assert "not installed" not in result.stderr
            assert result.stderr == f"No workloads found in namespace {namespace}.\n"
            calls = summary(wmap_requests(api_server, mark))
            assert calls.count(("get", "/apis")) == 1  # re-read once
            assert ("list", "widgets") in calls
        finally:
            kube.delete(f"{CRDS}/{crd['metadata']['name']}")
