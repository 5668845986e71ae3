"""`wmap describe TYPE/NAME` against the real API server: the live view equals the offline view of the same
objects, pods are read once and owners once per kind, and the edge cases (deleted owner, restricted user,
uninstalled CRD, unknown type, 1,000 pods) behave as a user expects."""

from __future__ import annotations

import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from workload_map.catalog import builtin_registry
from workload_map.pods import attribute
from workload_map.resolve import Workload
from workload_map.view import build_view

from .conftest import ApiServer
from .test_live_support import (
    FIXTURES,
    Wmap,
    create,
    create_pod,
    delete_object,
    deployment_body,
    fixture_objects,
    get_object,
    grant,
    install_fixture,
    pod_body,
    pod_status,
    read_rules,
    replicaset_body,
    served_kinds,
    summary,
    widget_definition,
    wmap_requests,
)

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("cluster_api")]  # every case: sync and async API

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


@pytest.fixture(scope="module")
def served(api_server: ApiServer) -> set[tuple[str, str]]:
    return served_kinds(api_server)


def _type_token(workload: dict[str, Any], served: set[tuple[str, str]]) -> str:
    """The kind, or `kind.version.group` where the server serves that kind at several versions or in several groups:
    the kind alone names the preferred version of one group (a built-in group first: `job` is batch's Job, not
    Volcano's), and the test server has no conversion webhook, so a fixture of another version is read at its own."""
    group, _, version = workload["apiVersion"].rpartition("/")
    kind = workload["kind"]
    elsewhere = {api for api, k in served if k == kind} - {workload["apiVersion"]}
    return f"{kind.lower()}.{version}.{group}" if group and elsewhere else kind.lower()


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
    live = wmap.json("describe", f"{_type_token(workload, served)}/{name}", namespace=namespace)
    events = wmap_requests(api_server, mark)

    registry = builtin_registry()
    resolved = registry.for_object(workload)
    assert resolved is not None
    resolution = Workload(resolved.karta, workload).resolve()
    offline = build_view(resolution, attribute(resolution, pods, owners), origin=resolved.origin)
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


# --- a Deployment built by hand: ReplicaSet chain, pod reasons, a neighbour, a deleted owner -------------------------


@pytest.fixture
def web(api_server: ApiServer, make_namespace: Any) -> dict[str, Any]:
    """Deployment `web` (3 replicas, 2 GPUs each) -> ReplicaSet -> 3 pods (ready, unschedulable, image pull
    failing); a neighbour Deployment `api` with its own pod; a pod whose ReplicaSet was deleted."""
    namespace = make_namespace("wmap-live")
    web = create(api_server, deployment_body("web", replicas=3, gpus=2), namespace=namespace)
    rs = create(api_server, replicaset_body(web, "5d8f9"), namespace=namespace)
    labels = rs["spec"]["template"]["metadata"]["labels"]
    create_pod(api_server, namespace, "web-5d8f9-a", owner=rs, labels=labels, gpus=2, node="gpu-1")
    create_pod(api_server, namespace, "web-5d8f9-b", owner=rs, labels=labels, gpus=2, reason="Unschedulable")
    create_pod(api_server, namespace, "web-5d8f9-c", owner=rs, labels=labels, gpus=2, reason="ImagePullBackOff")
    api = create(api_server, deployment_body("api", replicas=1), namespace=namespace)
    api_rs = create(api_server, replicaset_body(api, "77c4d"), namespace=namespace)
    create_pod(api_server, namespace, "api-77c4d-x", owner=api_rs, labels={"app": "api"})
    # A pod whose ReplicaSet is gone (the reference names an object that does not exist).
    ghost_rs = {
        **replicaset_body(web, "0ld00"),
        "metadata": {"name": "web-0ld00", "uid": "4f5c1a3e-0000-4000-8000-00000000dead"},
    }
    orphan = pod_body("web-0ld00-z", owner=ghost_rs, labels={"app": "web"})
    create(api_server, orphan, namespace=namespace, status=pod_status())
    return {"namespace": namespace, "deployment": web}


def test_describe_deployment_through_its_replicaset(api_server: ApiServer, wmap: Wmap, web: dict[str, Any]) -> None:
    namespace = web["namespace"]
    mark = api_server.audit_mark()
    result = wmap.run("describe", "deployment/web", namespace=namespace)
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Deployment/web   namespace: {namespace}")
    assert "definition: apps-deployment-v1 (catalog)" in result.stdout
    tree = "\n".join(lines)
    assert "1/3 ready" in tree and "gpu: 6" in tree
    assert "web-5d8f9-a" in tree and "Running" in tree and "gpu-1" in tree
    assert "Pending (Unschedulable)" in tree and "(ImagePullBackOff)" in tree
    assert "api-77c4d-x" not in tree  # the neighbour's pod never leaks in
    assert "web-0ld00-z" not in tree  # its owner is gone: not attributed
    assert "TOTAL" in tree and "Phase:" in tree
    assert result.stderr == ""

    calls = summary(wmap_requests(api_server, mark))
    # A cold cache: discovery (2), the cluster's Kartas (1), the Deployment (1), the pods (1), the ReplicaSets (1),
    # and the Deployments (1: the neighbour's ReplicaSet names another Deployment, which could own this one).
    # Never a read per pod or per owner.
    expected = [("list", "kartas"), ("get", "deployments"), ("list", "pods"), ("list", "replicasets")]
    expected.append(("list", "deployments"))
    assert sorted(calls) == sorted([("get", "/api"), ("get", "/apis"), *expected]), calls

    # Warm cache: no discovery at all.
    mark = api_server.audit_mark()
    again = wmap.run("describe", "deployments", "web", namespace=namespace)
    assert again.code == 0
    assert again.stdout.splitlines()[2:] == lines[2:]  # the same tree (the header has the age)
    assert sorted(summary(wmap_requests(api_server, mark))) == sorted(expected)


def test_describe_json_is_the_view_with_pods_nodes_and_reasons(wmap: Wmap, web: dict[str, Any]) -> None:
    view = wmap.json("describe", "Deployment/web", namespace=web["namespace"])
    assert view["schemaVersion"] == "workloadmap.io/view/v1"
    assert view["uid"] == web["deployment"]["metadata"]["uid"]
    (component,) = view["components"]
    assert component["replicas"] == {"desired": 3, "current": 3, "ready": 1}
    assert component["resources"]["gpus"] == 6
    assert component["nodes"] == ["gpu-1", "node-01"]
    pods = {pod["name"]: pod for pod in component["pods"]}
    assert set(pods) == {"web-5d8f9-a", "web-5d8f9-b", "web-5d8f9-c"}
    assert pods["web-5d8f9-b"]["node"] is None and pods["web-5d8f9-b"]["reason"] == "Unschedulable"
    assert pods["web-5d8f9-c"]["reason"] == "ImagePullBackOff"
    assert pods["web-5d8f9-a"]["ready"] is True and "reason" not in pods["web-5d8f9-a"]
    assert view["unclaimedPods"] == []


def test_describe_pod_limit_keeps_unhealthy_pods(wmap: Wmap, web: dict[str, Any]) -> None:
    result = wmap.run("describe", "deploy/web", "--pod-limit", "1", namespace=web["namespace"])
    assert result.code == 0, result.stderr
    assert "and 2 more (1 of 2 unhealthy shown)" in result.stdout


def test_describe_as_the_installed_executable(wmap: Wmap, web: dict[str, Any]) -> None:
    result = wmap.installed("describe", "deployment/web", "-o", "yaml", namespace=web["namespace"])
    assert result.code == 0, result.stderr
    assert "kind: Deployment" in result.stdout and "web-5d8f9-c" in result.stdout


def test_debug_prints_each_request_on_stderr(wmap: Wmap, web: dict[str, Any]) -> None:
    result = wmap.run("--debug", "describe", "deployment/web", namespace=web["namespace"])
    assert result.code == 0, result.stderr
    debug = [line for line in result.stderr.splitlines() if line.startswith("debug: ")]
    assert any(f"GET /apis/apps/v1/namespaces/{web['namespace']}/deployments/web -> 200 (" in line for line in debug)
    assert any(f"GET /api/v1/namespaces/{web['namespace']}/pods?limit=500 -> 200" in line for line in debug)
    assert debug[-1].startswith("debug: 7 requests to https://")
    assert "web-5d8f9-a" in result.stdout  # the result is still on stdout


# --- errors --------------------------------------------------------------------------------------------------------


def test_a_missing_workload_is_exit_3(wmap: Wmap, namespace: str) -> None:
    result = wmap.run("describe", "pytorchjob/absent", namespace=namespace)
    assert result.code == 3
    assert result.stderr.splitlines()[0] == f'error: PyTorchJob "absent" not found in namespace {namespace}'


def test_a_name_is_required(wmap: Wmap) -> None:
    result = wmap.run("describe", "jobset")
    assert result.code == 2
    assert "a NAME is required: give it as TYPE/NAME or as TYPE NAME" in result.stderr


def test_a_type_no_definition_covers_is_exit_4_with_the_machine_payload(wmap: Wmap, namespace: str) -> None:
    result = wmap.run("describe", "flinkdeployment/etl", "-o", "json", namespace=namespace)
    assert result.code == 4
    payload = json.loads(result.stdout)
    assert payload["error"] == "no_definition_for_type" and payload["type"] == "flinkdeployment"
    assert 'error: no Karta definition covers "flinkdeployment"' in result.stderr
    table = wmap.run("describe", "flinkdeployment/etl", namespace=namespace)
    assert table.code == 4 and table.stdout == ""


def test_a_type_whose_crd_is_not_installed_is_exit_3(wmap: Wmap, namespace: str, tmp_path: Path) -> None:
    definition = tmp_path / "widget.yaml"
    definition.write_text(widget_definition("wmap-e2e.example.com"))
    result = wmap.run("describe", "widget/w1", "--definitions", str(definition), namespace=namespace)
    assert result.code == 3
    assert result.stderr.splitlines()[0] == "error: Widget is not installed in this cluster"


def test_a_restricted_user_sees_what_was_refused(api_server: ApiServer, wmap: Wmap, web: dict[str, Any]) -> None:
    namespace = web["namespace"]
    assert api_server.restricted_kubeconfig is not None
    refused = wmap.run("describe", "deployment/web", namespace=namespace, kubeconfig=api_server.restricted_kubeconfig)
    assert refused.code == 1
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: not allowed to get deployments.apps web in namespace {namespace} (as user wmap-restricted)"
    ]
    assert "warning: not allowed to list kartas.run.ai (as user wmap-restricted)" in refused.stderr

    # May read the Deployment and the pods, not the ReplicaSets: the pods cannot be attributed, and it says why.
    grant(api_server, namespace, read_rules(("apps", "deployments"), ("", "pods")))
    partial = wmap.run(
        "describe", "deployment/web", "-o", "json", namespace=namespace, kubeconfig=api_server.restricted_kubeconfig
    )
    assert partial.code == 0, partial.stderr
    view = json.loads(partial.stdout)
    assert view["components"][0]["replicas"] == {"desired": 3, "current": 0, "ready": 0}
    assert "warning: cannot read ReplicaSet objects (not allowed to list replicasets.apps in namespace" in (
        partial.stderr
    )
    assert "pods owned through them are not attributed to the workload" in partial.stderr


def test_deleting_the_owner_detaches_its_pods(api_server: ApiServer, wmap: Wmap, web: dict[str, Any]) -> None:
    namespace = web["namespace"]
    rs = get_object(
        api_server,
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-5d8f9", "namespace": namespace}},
    )
    delete_object(api_server, rs)  # no garbage collector here: the pods stay, pointing at nothing
    view = wmap.json("describe", "deployment/web", namespace=namespace)
    assert view["components"][0]["replicas"] == {"desired": 3, "current": 0, "ready": 0}
    assert view["unclaimedPods"] == []


# --- unreachable servers -----------------------------------------------------------------------------------------


def test_an_unreachable_server_is_exit_1_at_once(wmap: Wmap) -> None:
    start = time.monotonic()
    result = wmap.run("describe", "jobset/x", "--server", "https://127.0.0.1:1", "--request-timeout", "5s")
    assert result.code == 1
    assert result.stderr.splitlines()[0] == (
        "error: cannot reach https://127.0.0.1:1: connection refused (check --context/--kubeconfig)"
    )
    assert time.monotonic() - start < 5


def test_a_server_that_never_answers_fails_within_the_request_timeout(wmap: Wmap) -> None:
    with socket.socket() as listener:  # accepts connections (the kernel does), never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        start = time.monotonic()
        result = wmap.installed("get", "jobsets", "--server", f"https://127.0.0.1:{port}", "--request-timeout", "1s")
        elapsed = time.monotonic() - start
    assert result.code == 1
    assert result.stderr.splitlines()[0].startswith(f"error: no answer from https://127.0.0.1:{port} within 1s")
    assert "Traceback" not in result.stderr
    assert elapsed < 10


# --- many pods ----------------------------------------------------------------------------------------------------


def test_a_workload_with_1000_pods(api_server: ApiServer, wmap: Wmap, make_namespace: Any) -> None:
    namespace = make_namespace("wmap-live-big")
    job = create(
        api_server,
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "big"},
            "spec": {
                "pytorchReplicaSpecs": {
                    "Master": {
                        "replicas": 1,
                        "template": {"spec": {"containers": [{"name": "pytorch", "image": "t"}]}},
                    },
                    "Worker": {
                        "replicas": 999,
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": "pytorch", "image": "t", "resources": {"limits": {"nvidia.com/gpu": "8"}}}
                                ]
                            }
                        },
                    },
                }
            },
        },
        namespace=namespace,
    )

    def make(index: int) -> None:
        role = "master" if index == 0 else "worker"
        name = f"big-{role}-{index}"
        create_pod(
            api_server,
            namespace,
            name,
            owner=job,
            labels={"training.kubeflow.org/replica-type": role, "training.kubeflow.org/job-name": "big"},
            node=f"node-{index % 50:02d}",
            gpus=0 if index == 0 else 8,
            ready=index % 100 != 7,
        )

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(make, range(1000)))

    mark = api_server.audit_mark()
    start = time.monotonic()
    view = wmap.json("describe", "pytorchjob/big", namespace=namespace)
    elapsed = time.monotonic() - start
    calls = summary(wmap_requests(api_server, mark))
    workers = next(c for c in view["components"] if c["name"] == "worker")
    assert workers["replicas"] == {"desired": 999, "current": 999, "ready": 989}
    assert view["resources"]["gpus"] == 999 * 8
    assert len(workers["nodes"]) == 50
    # The pods are one paged LIST (2 pages of 500); the PyTorchJob owns them directly: no owner LIST.
    assert calls.count(("list", "pods")) == 2
    assert [c for c in calls if c[0] == "list" and c[1] not in ("pods", "kartas")] == []
    assert elapsed < 60
