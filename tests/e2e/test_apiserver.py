"""The test API server itself: discovery, authorization, CRDs, status subresources, audit log."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from .conftest import TEST_CRD_DIR, ApiServer, expect

pytestmark = pytest.mark.e2e


def _test_crds() -> list[dict[str, Any]]:
    docs = []
    for path in sorted(TEST_CRD_DIR.glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


TEST_CRDS = _test_crds()


def _is_generic(crd: dict[str, Any]) -> bool:
    """A minimal workload CRD of ours: status subresource, spec keeps any field (not a full structural schema)."""
    v = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    spec = v["schema"]["openAPIV3Schema"].get("properties", {}).get("spec", {})
    return "status" in (v.get("subresources") or {}) and bool(spec.get("x-kubernetes-preserve-unknown-fields"))


GENERIC_CRDS = [d for d in TEST_CRDS if _is_generic(d)]
REQUIRED_TEST_KINDS = {
    ("kubeflow.org", "PyTorchJob"),
    ("jobset.x-k8s.io", "JobSet"),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
    ("ray.io", "RayCluster"),
}


def test_test_crd_files_cover_the_required_kinds() -> None:
    kinds = {(d["spec"]["group"], d["spec"]["names"]["kind"]) for d in GENERIC_CRDS}
    assert kinds >= REQUIRED_TEST_KINDS


def test_discovery(kube: httpx.Client, api_server: ApiServer) -> None:
    version = expect(kube.get("/version"))
    assert version["major"] == "1"
    assert version["gitVersion"].startswith("v1.36."), version
    if api_server.k8s_version:
        assert version["gitVersion"] == api_server.k8s_version
    assert "v1" in expect(kube.get("/api"))["versions"]
    groups = {g["name"] for g in expect(kube.get("/apis"))["groups"]}
    assert {"apps", "batch", "apiextensions.k8s.io", "rbac.authorization.k8s.io"} <= groups
    core = {r["name"] for r in expect(kube.get("/api/v1"))["resources"]}
    assert {"pods", "pods/status", "namespaces", "nodes"} <= core


def test_readyz_and_openapi(kube: httpx.Client) -> None:
    assert kube.get("/readyz").text.strip() == "ok"
    assert kube.get("/livez").status_code == 200
    openapi = expect(kube.get("/openapi/v3"))
    assert "api/v1" in openapi["paths"]


def test_restricted_user_is_forbidden(restricted_kube: httpx.Client) -> None:
    # Discovery is allowed for every authenticated user ...
    assert restricted_kube.get("/api").status_code == 200
    assert restricted_kube.get("/apis").status_code == 200
    # ... reading objects is not.
    for path in ("/api/v1/namespaces", "/api/v1/nodes", "/api/v1/namespaces/default/pods"):
        r = restricted_kube.get(path)
        assert r.status_code == 403, (path, r.status_code, r.text)
        status = r.json()
        assert status["reason"] == "Forbidden"
        assert "wmap-restricted" in status["message"]


def test_who_am_i(kube: httpx.Client, restricted_kube: httpx.Client) -> None:
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    admin = expect(kube.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review), 201)
    assert admin["status"]["userInfo"]["username"] == "wmap-admin"
    assert "system:masters" in admin["status"]["userInfo"]["groups"]
    restricted = expect(restricted_kube.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review), 201)
    assert restricted["status"]["userInfo"]["username"] == "wmap-restricted"
    assert "system:masters" not in restricted["status"]["userInfo"]["groups"]


def test_bad_token_is_unauthorized(api_server: ApiServer) -> None:
    with api_server.anonymous_client(token="not-a-valid-token") as c:
        assert c.get("/api/v1/namespaces").status_code == 401


def test_rbac_grants_take_effect(api_server: ApiServer, kube: httpx.Client, restricted_kube: httpx.Client) -> None:
    """Tests can give the restricted user narrow rights with RBAC (Role + RoleBinding in a namespace)."""
    ns = api_server.create_namespace()
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "pod-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "wmap-restricted"}],
    }
    expect(kube.post(f"{rbac}/namespaces/{ns}/roles", json=role), 201)
    expect(kube.post(f"{rbac}/namespaces/{ns}/rolebindings", json=binding), 201)
    assert restricted_kube.get(f"/api/v1/namespaces/{ns}/pods").status_code == 200
    assert restricted_kube.get(f"/api/v1/namespaces/{ns}/configmaps").status_code == 403
    assert restricted_kube.get("/api/v1/pods").status_code == 403


def test_test_crds_are_established(api_server: ApiServer, kube: httpx.Client) -> None:
    for doc in TEST_CRDS:
        name = doc["metadata"]["name"]
        assert name in api_server.applied_crds
        crd = expect(kube.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"))
        conds = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conds.get("Established") == "True", (name, conds)
        assert conds.get("NamesAccepted") == "True", (name, conds)


@pytest.mark.parametrize(
    "crd",
    GENERIC_CRDS,
    ids=[f"{d['spec']['names']['kind']}.{d['spec']['group']}" for d in GENERIC_CRDS],
)
def test_custom_object_with_status_subresource(crd: dict[str, Any], api_server: ApiServer, namespace: str) -> None:
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    version = next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))
    base = f"/apis/{group}/{version}/namespaces/{namespace}/{plural}"
    name = f"obj-{uuid.uuid4().hex[:6]}"
    obj = {
        "apiVersion": f"{group}/{version}",
        "kind": crd["spec"]["names"]["kind"],
        "metadata": {"name": name, "labels": {"app": "e2e"}},
        "spec": {"replicas": 2, "nested": {"list": [1, "two", {"three": 3}]}},
        # Ignored on create: status is only written through the status subresource.
        "status": {"phase": "Ignored"},
    }
    with api_server.client() as kube:
        created = expect(kube.post(base, json=obj), 201)
        assert created["spec"] == obj["spec"]
        assert "phase" not in created.get("status", {})

        status = {
            "phase": "Running",
            "replicas": 2,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Test",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        }
        patched = expect(
            kube.patch(
                f"{base}/{name}/status",
                json={"status": status},
                headers={"Content-Type": "application/merge-patch+json"},
            )
        )
        assert patched["status"] == status
        # A write to the main resource does not touch the status ...
        expect(
            kube.patch(
                f"{base}/{name}",
                json={"spec": {"replicas": 3}, "status": {"phase": "Failed"}},
                headers={"Content-Type": "application/merge-patch+json"},
            )
        )
        got = expect(kube.get(f"{base}/{name}"))
        assert got["spec"]["replicas"] == 3
        assert got["status"] == status
        # ... and the status subresource does not touch the spec.
        expect(kube.put(f"{base}/{name}/status", json={**got, "spec": {"replicas": 9}, "status": {"phase": "Done"}}))
        got = expect(kube.get(f"{base}/{name}"))
        assert got["spec"]["replicas"] == 3
        assert got["status"] == {"phase": "Done"}


def test_scale_subresource_of_leaderworkerset(api_server: ApiServer, kube: httpx.Client, namespace: str) -> None:
    base = f"/apis/leaderworkerset.x-k8s.io/v1/namespaces/{namespace}/leaderworkersets"
    obj = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws"},
    }
    expect(kube.post(base, json={**obj, "spec": {"replicas": 1}}), 201)
    scale = expect(kube.get(f"{base}/lws/scale"))
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1
    expect(
        kube.patch(
            f"{base}/lws/scale",
            json={"spec": {"replicas": 4}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
    )
    assert expect(kube.get(f"{base}/lws"))["spec"]["replicas"] == 4


def test_pods_without_kubelet(kube: httpx.Client, namespace: str) -> None:
    """No scheduler or kubelet: tests create pods directly and write their status themselves."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "worker-0", "labels": {"app": "e2e"}},
        "spec": {
            "nodeName": "node-a",  # never scheduled otherwise; no Node object is needed
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {
                        "requests": {"cpu": "100m", "nvidia.com/gpu": "1"},
                        "limits": {"nvidia.com/gpu": "1"},
                    },
                }
            ],
        },
    }
    base = f"/api/v1/namespaces/{namespace}/pods"
    created = expect(kube.post(base, json=pod), 201)
    assert created["status"]["phase"] == "Pending"
    # The ServiceAccount admission plugin is off: no token volume, no default service account needed.
    assert not any(v["name"].startswith("kube-api-access") for v in created["spec"].get("volumes", []))
    status = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [
            {
                "name": "c",
                "ready": True,
                "restartCount": 0,
                "image": "busybox",
                "imageID": "",
                "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
            }
        ],
    }
    updated = expect(
        kube.patch(
            f"{base}/worker-0/status",
            json={"status": status},
            headers={"Content-Type": "application/strategic-merge-patch+json"},
        )
    )
    assert updated["status"]["phase"] == "Running"
    assert updated["status"]["containerStatuses"][0]["ready"] is True
    listed = expect(kube.get(base, params={"labelSelector": "app=e2e"}))
    assert [p["metadata"]["name"] for p in listed["items"]] == ["worker-0"]


def test_builtin_workloads_can_be_created(kube: httpx.Client, namespace: str) -> None:
    """Deployments etc. are stored, but nothing reconciles them (no controller-manager)."""
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    expect(kube.post(f"/apis/apps/v1/namespaces/{namespace}/deployments", json=deploy), 201)
    expect(
        kube.patch(
            f"/apis/apps/v1/namespaces/{namespace}/deployments/web/status",
            json={"status": {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
    )
    got = expect(kube.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/web"))
    assert got["status"]["readyReplicas"] == 2


def test_audit_log_counts_requests(api_server: ApiServer, kube: httpx.Client, namespace: str) -> None:
    mark = api_server.audit_mark()
    for _ in range(3):
        expect(kube.get(f"/api/v1/namespaces/{namespace}/configmaps"))
    expect(kube.get(f"/api/v1/namespaces/{namespace}"))
    events = api_server.audit_events(
        mark, user="wmap-admin", predicate=lambda e: e.get("objectRef", {}).get("namespace") == namespace
    )
    by_verb: dict[tuple[str, str], int] = {}
    for e in events:
        key = (e["verb"], e["objectRef"].get("resource", ""))
        by_verb[key] = by_verb.get(key, 0) + 1
    assert by_verb == {("list", "configmaps"): 3, ("get", "namespaces"): 1}, by_verb


def test_kubeconfigs_work_with_lightkube(api_server: ApiServer, namespace: str) -> None:
    lightkube = pytest.importorskip("lightkube")
    from lightkube.resources.core_v1 import Namespace

    client = api_server.lightkube_client()
    names = {ns.metadata.name for ns in client.list(Namespace)}
    assert namespace in names
    restricted = api_server.lightkube_client(restricted=True)
    with pytest.raises(lightkube.ApiError) as err:
        list(restricted.list(Namespace))
    assert err.value.status.code == 403


def test_kubeconfig_files_exist(api_server: ApiServer) -> None:
    assert Path(api_server.kubeconfig).is_file()
    cfg = yaml.safe_load(Path(api_server.kubeconfig).read_text())
    assert cfg["clusters"][0]["cluster"]["server"] == api_server.url
