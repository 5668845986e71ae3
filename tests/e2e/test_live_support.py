"""Helpers for the live-command e2e tests (`test_live_*.py`): running `wmap` against the test API server, creating
workloads, owners and pods with their status (there are no controllers), installing the catalog fixtures, and
counting the requests wmap sent (audit log, by user agent). No tests here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.cli.helpers import REPO, Result, clean_env, invoke, run_installed

from . import apis
from .conftest import REPO_ROOT, ApiServer, expect

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "catalog"
MERGE = {"Content-Type": "application/merge-patch+json"}


@dataclass
class Wmap:
    """`wmap` against the test server, in this process (`run`) or as the installed executable (`installed`).

    Each test gets its own HOME and discovery cache (`cache`), so no run sees another's cache."""

    api_server: ApiServer
    home: Path
    cache: Path

    def args(self, args: Sequence[str], namespace: str | None, kubeconfig: Path | None) -> list[str]:
        out = [*args, "--kubeconfig", str(kubeconfig or self.api_server.kubeconfig)]
        if namespace is not None:
            out += ["-n", namespace]
        return out

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {"WMAP_CACHE_DIR": str(self.cache), **(extra or {})}

    def run(
        self,
        *args: str,
        namespace: str | None = None,
        kubeconfig: Path | None = None,
        env: dict[str, str] | None = None,
        stdin: str = "",
    ) -> Result:
        return invoke(self.args(args, namespace, kubeconfig), home=self.home, env=self.env(env), stdin=stdin)

    def installed(
        self,
        *args: str,
        namespace: str | None = None,
        kubeconfig: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> Result:
        if apis.current() == "async":  # the same executable, its cluster seam on the async API
            return run_async_installed(self.args(args, namespace, kubeconfig), home=self.home, env=self.env(env))
        return run_installed(self.args(args, namespace, kubeconfig), home=self.home, env=self.env(env))

    def json(self, *args: str, namespace: str | None = None, kubeconfig: Path | None = None) -> Any:
        result = self.run(*args, "-o", "json", namespace=namespace, kubeconfig=kubeconfig)
        assert result.code == 0, result.stderr
        return json.loads(result.stdout)


def run_async_installed(args: Sequence[str], *, home: Path, env: dict[str, str]) -> Result:
    """`run_installed`, with the CLI's cluster seam on the async API (`python -m tests.e2e.async_wmap`)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "tests.e2e.async_wmap", *args],
        capture_output=True,
        text=True,
        env=clean_env(home, env),
        cwd=REPO,
        timeout=120,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def make_wmap(api_server: ApiServer, tmp_path: Path) -> Wmap:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Wmap(api_server, home, tmp_path / "cache")


# --- requests wmap sent -------------------------------------------------------------------------------------------


def wmap_requests(api_server: ApiServer, mark: int) -> list[dict[str, Any]]:
    """Audit events of the requests `wmap` sent since `mark` (its user agent is `wmap/<version>`)."""
    return api_server.audit_events(mark, predicate=lambda e: str(e.get("userAgent", "")).startswith("wmap/"))


def summary(events: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """(verb, resource[/subresource]) per request, e.g. ("list", "pods"), ("get", "jobsets")."""
    out = []
    for event in events:
        ref = event.get("objectRef") or {}
        resource = ref.get("resource") or event.get("requestURI", "").split("?")[0]
        if ref.get("subresource"):
            resource += "/" + ref["subresource"]
        out.append((event["verb"], resource))
    return out


# --- creating objects -------------------------------------------------------------------------------------------


def collection(kube: httpx.Client, api_server: ApiServer, obj: dict[str, Any], namespace: str | None) -> str:
    return api_server.resource_path(kube, obj["apiVersion"], obj["kind"], namespace)


def create(
    api_server: ApiServer, obj: dict[str, Any], *, namespace: str | None = None, status: dict[str, Any] | None = None
) -> dict[str, Any]:
    """POST `obj` as the admin (then write `status` through the status subresource); the stored object. Where the
    resource has no status subresource, `obj`'s status (or `status`) is created with it, as its controller does
    (the published ScheduledWorkflow CRD even requires one)."""
    namespace = namespace or obj.get("metadata", {}).get("namespace")
    body = copy.deepcopy(obj)
    inline_status = body.pop("status", None)
    meta = body.setdefault("metadata", {})
    for key in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink"):
        meta.pop(key, None)
    if namespace:
        meta["namespace"] = namespace
    with api_server.client() as kube:
        path = collection(kube, api_server, body, namespace)
        if (status or inline_status) and not has_status_subresource(kube, api_server, body):
            return expect(kube.post(path, json={**body, "status": status or inline_status}), 201)
        stored = expect(kube.post(path, json=body), 201)
        if status:
            stored = expect(
                kube.patch(f"{path}/{stored['metadata']['name']}/status", json={"status": status}, headers=MERGE)
            )
    return stored


def owner_ref(obj: dict[str, Any], *, controller: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def pod_status(*, phase: str = "Running", ready: bool = True, reason: str | None = None) -> dict[str, Any]:
    """A pod status as a kubelet would write it. `reason`: `Unschedulable`, a container waiting reason
    (`ImagePullBackOff`, `CrashLoopBackOff`), or anything else as `status.reason`."""
    status: dict[str, Any] = {"phase": phase}
    conditions: list[dict[str, Any]] = [{"type": "PodScheduled", "status": "True"}]
    if reason == "Unschedulable":
        status["phase"], ready = "Pending", False
        conditions = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    elif reason in ("ImagePullBackOff", "CrashLoopBackOff", "ErrImagePull"):
        ready = False
        status["containerStatuses"] = [
            {
                "name": "main",
                "ready": False,
                "restartCount": 3,
                "image": "busybox",
                "imageID": "",
                "state": {"waiting": {"reason": reason}},
            }
        ]
    elif reason is not None:
        ready = False
        status["reason"] = reason
    conditions.append({"type": "Ready", "status": "True" if ready else "False"})
    status["conditions"] = conditions
    return status


def pod_body(
    name: str,
    *,
    owner: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    node: str | None = "node-01",
    gpus: int = 0,
    cpu: str = "1",
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu}}
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": str(gpus)}
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "busybox", "resources": resources}]}
    if node:
        spec["nodeName"] = node
    meta: dict[str, Any] = {"name": name, "labels": dict(labels or {})}
    if owner is not None:
        meta["ownerReferences"] = [owner_ref(owner)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def create_pod(
    api_server: ApiServer,
    namespace: str,
    name: str,
    *,
    owner: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    node: str | None = "node-01",
    gpus: int = 0,
    phase: str = "Running",
    ready: bool = True,
    reason: str | None = None,
) -> dict[str, Any]:
    body = pod_body(name, owner=owner, labels=labels, node=None if reason == "Unschedulable" else node, gpus=gpus)
    return create(api_server, body, namespace=namespace, status=pod_status(phase=phase, ready=ready, reason=reason))


_STATUS_SUBRESOURCE: dict[tuple[str, str, str], bool] = {}


def has_status_subresource(kube: httpx.Client, api_server: ApiServer, obj: dict[str, Any]) -> bool:
    """Whether `obj`'s resource serves `/status` (KubeVirt's VirtualMachineInstance, Argo's Workflow and Kubeflow
    Pipelines' ScheduledWorkflow do not: their controllers write the status with the object). Read from discovery
    once per server and kind."""
    key = (api_server.url, obj["apiVersion"], obj["kind"])
    if key not in _STATUS_SUBRESOURCE:
        prefix = "/api/v1" if "/" not in obj["apiVersion"] else f"/apis/{obj['apiVersion']}"
        resources = expect(kube.get(prefix))["resources"]
        plural = next(r["name"] for r in resources if r["kind"] == obj["kind"] and "/" not in r["name"])
        _STATUS_SUBRESOURCE[key] = any(r["name"] == f"{plural}/status" for r in resources)
    return _STATUS_SUBRESOURCE[key]


def patch_status(api_server: ApiServer, obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    """Write `status` as the object's controller would: through the status subresource, or on the object itself
    where its resource has none."""
    with api_server.client() as kube:
        path = collection(kube, api_server, obj, obj["metadata"].get("namespace"))
        target = f"{path}/{obj['metadata']['name']}"
        if has_status_subresource(kube, api_server, obj):
            target += "/status"
        return expect(kube.patch(target, json={"status": status}, headers=MERGE))


def get_object(api_server: ApiServer, obj: dict[str, Any]) -> dict[str, Any]:
    with api_server.client() as kube:
        path = collection(kube, api_server, obj, obj["metadata"].get("namespace"))
        return expect(kube.get(f"{path}/{obj['metadata']['name']}"))


def delete_object(api_server: ApiServer, obj: dict[str, Any]) -> None:
    with api_server.client() as kube:
        path = collection(kube, api_server, obj, obj["metadata"].get("namespace"))
        expect(kube.delete(f"{path}/{obj['metadata']['name']}"), 200, 202)


# --- the catalog fixtures ---------------------------------------------------------------------------------------


def _items(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    doc = yaml.safe_load(path.read_text())
    if isinstance(doc, dict) and doc.get("kind") == "List":
        return list(doc.get("items") or [])
    return [doc] if doc else []


def fixture_objects(name: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """(workload, owners, pods) of `tests/fixtures/catalog/<name>/`."""
    folder = FIXTURES / name
    return _items(folder / "workload.yaml")[0], _items(folder / "owners.yaml"), _items(folder / "pods.yaml")


def served_kinds(api_server: ApiServer) -> set[tuple[str, str]]:
    """(apiVersion, kind) of every served resource."""
    found: set[tuple[str, str]] = set()
    with api_server.client() as kube:
        for group_version in [
            "v1",
            *(v["groupVersion"] for g in expect(kube.get("/apis"))["groups"] for v in g["versions"]),
        ]:
            prefix = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
            answer = kube.get(prefix)
            if answer.status_code == 404:  # a CRD deleted a moment ago (another test's) may still be listed
                continue
            for res in expect(answer)["resources"]:
                if "/" not in res["name"]:
                    found.add((group_version, res["kind"]))
    return found


_JOB_GENERATED_LABELS = (
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
    "job-name",
    "batch.kubernetes.io/job-name",
)


def widget_crd(group: str, *, status_subresource: bool = False) -> dict[str, Any]:
    """A namespaced Widget CRD (`widgets.<group>`, v1, any fields) in a group of the test's own: a kind no catalog
    definition covers, for tests that bring their own Karta or `--definitions` file."""
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    if status_subresource:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [version],
        },
    }


_WIDGET_DEFINITION = """\
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {{name: {name}}}
spec:
  structureDefinition:
    rootComponent:
      name: widget
      kind: {{group: {group}, version: v1, kind: Widget}}
      specDefinition: {{podTemplateSpecPath: .spec.template}}
      scaleDefinition: {{replicasPath: .spec.replicas}}
      statusDefinition:
        statusMappings:
          running: [{{byConditions: [{{type: Ready, status: "True"}}]}}]
"""


def widget_definition(group: str) -> str:
    """A Karta definition (YAML text, for a `--definitions` file) of `widget_crd(group)`'s Widget, named
    `widget-<group>` so that definitions of several groups load together: pods from `.spec.template`, replicas from
    `.spec.replicas`, running on the condition Ready=True."""
    return _WIDGET_DEFINITION.format(name=f"widget-{group}", group=group)


def _creatable(obj: dict[str, Any]) -> dict[str, Any]:
    """What the API server accepts on create for a recorded-shape object (generated fields dropped)."""
    body = copy.deepcopy(obj)
    if obj["apiVersion"] == "batch/v1" and obj["kind"] == "Job":
        spec = body.get("spec") or {}
        if not spec.get("manualSelector"):
            spec.pop("selector", None)
            labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
            for key in _JOB_GENERATED_LABELS:
                labels.pop(key, None)
        template = spec.setdefault("template", {})
        pod_spec = template.setdefault("spec", {})
        if not pod_spec.get("containers"):
            pod_spec["containers"] = [{"name": "main", "image": "busybox"}]
            pod_spec.setdefault("restartPolicy", "Never")
    if obj["apiVersion"] == "v1" and obj["kind"] == "Pod":
        spec = body.get("spec") or {}
        spec.pop("serviceAccountName", None)
        spec.pop("serviceAccount", None)
    if obj["apiVersion"] == "apps/v1" and obj["kind"] in ("StatefulSet", "ReplicaSet", "Deployment"):
        # Some fixtures give an intermediate owner as its metadata only (all a metadata LIST returns), or with its
        # selector but no template: give it the smallest spec the server accepts, keeping a selector it has.
        spec = body.setdefault("spec", {})
        if not spec.get("selector"):
            spec["selector"] = {"matchLabels": {"wmap-e2e/owner": obj["metadata"]["name"]}}
            spec.pop("template", None)
        if not spec.get("template"):
            spec["template"] = {
                "metadata": {"labels": dict(spec["selector"].get("matchLabels") or {})},
                "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            }
    return body


def install_fixture(api_server: ApiServer, name: str, namespace: str) -> dict[str, Any]:
    """Create the fixture's workload, owners and pods in `namespace` (owner references rewritten to the UIDs the
    server assigns; status written through the status subresource, as the operators would). The stored workload."""
    workload, owners, pods = fixture_objects(name)
    uids: dict[str, str] = {}
    created_workload = create(api_server, _creatable(workload), namespace=namespace)
    uids[workload["metadata"]["uid"]] = created_workload["metadata"]["uid"]
    pending = [o for o in [*owners, *pods] if o["metadata"]["uid"] != workload["metadata"]["uid"]]
    while pending:
        progress = False
        for obj in list(pending):
            refs = obj.get("metadata", {}).get("ownerReferences") or []
            if any(ref.get("uid") not in uids for ref in refs):
                continue
            body = _creatable(obj)
            for ref in body["metadata"].get("ownerReferences") or []:
                ref["uid"] = uids[ref["uid"]]
            stored = create(api_server, body, namespace=namespace)
            uids[obj["metadata"]["uid"]] = stored["metadata"]["uid"]
            if obj.get("status"):
                patch_status(api_server, stored, obj["status"])
            pending.remove(obj)
            progress = True
        if not progress:
            missing = sorted({f"{o['kind']}/{o['metadata']['name']}" for o in pending})
            raise AssertionError(f"fixture {name}: owners never created for {missing}")
    if workload.get("status"):
        created_workload = patch_status(api_server, created_workload, workload["status"])
    return created_workload


# --- workloads built by hand ------------------------------------------------------------------------------------


def deployment_body(name: str, *, replicas: int, gpus: int = 0, labels: dict[str, str] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": "1"}}
    if gpus:
        resources["limits"] = {"nvidia.com/gpu": str(gpus)}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "busybox", "resources": resources}]},
            },
        },
    }


def replicaset_body(deployment: dict[str, Any], suffix: str) -> dict[str, Any]:
    """The ReplicaSet a Deployment controller would create (the test server has no controllers)."""
    spec = copy.deepcopy(deployment["spec"])
    labels = {**spec["template"]["metadata"]["labels"], "pod-template-hash": suffix}
    spec["template"]["metadata"]["labels"] = labels
    spec["selector"] = {"matchLabels": labels}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{deployment['metadata']['name']}-{suffix}",
            "labels": labels,
            "ownerReferences": [owner_ref(deployment)],
        },
        "spec": spec,
    }


def jobset_body(name: str, *, replicas: int = 2, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": replicas,
                    "template": {
                        "spec": {
                            "parallelism": 2,
                            "completions": 2,
                            "template": {
                                "spec": {
                                    "restartPolicy": "Never",
                                    "containers": [
                                        {
                                            "name": "main",
                                            "image": "busybox",
                                            "resources": {"limits": {"nvidia.com/gpu": "4"}},
                                        }
                                    ],
                                }
                            },
                        }
                    },
                }
            ]
        },
    }


# --- RBAC for the restricted user ------------------------------------------------------------------------------

RBAC = "/apis/rbac.authorization.k8s.io/v1"
RESTRICTED_USER = "wmap-restricted"


def grant(api_server: ApiServer, namespace: str, rules: list[dict[str, Any]], *, name: str = "wmap-e2e") -> None:
    """Give the restricted user these rules in `namespace` (a Role and a RoleBinding)."""
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": name}, "rules": rules}
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": RESTRICTED_USER}],
    }
    with api_server.client() as kube:
        expect(kube.post(f"{RBAC}/namespaces/{namespace}/roles", json=role), 201)
        expect(kube.post(f"{RBAC}/namespaces/{namespace}/rolebindings", json=binding), 201)


def read_rules(*resources: tuple[str, str], verbs: Sequence[str] = ("get", "list")) -> list[dict[str, Any]]:
    """RBAC rules allowing `verbs` on (apiGroup, resource) pairs."""
    return [{"apiGroups": [group], "resources": [resource], "verbs": list(verbs)} for group, resource in resources]
