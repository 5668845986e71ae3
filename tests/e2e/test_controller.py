"""`workload-map-controller` against the real API server (issue 22, docs/controller.md): the process runs as a
subprocess of the test, as it would in a pod, with the admin kubeconfig.

* probes and metrics answer; flags parse (`--leader-elect=false`);
* the Karta operator: a valid Karta gets its labels and conditions, `CRDExists` flips when its CRD is installed,
  an invalid one names the field path in its condition and in an Event, two Kartas of one kind are a condition on
  both;
* the pod grouper (KAI): a JobSet and the pods its operator would create (made by the test: there is no
  controller-manager) get the KAI PodGroup tree, owned by the JobSet, and each pod its links; a scale change
  updates the tree;
* two processes: one leads, the other takes over when it stops; `--dry-run` writes nothing;
* the Karta admission webhooks, called by the API server over HTTPS on 127.0.0.1 (auto certificates): an invalid
  Karta is rejected at create with every finding's path, a valid one gets its labels at create, the root kind is
  immutable.

The test cluster has no garbage collector, so deleting a workload removes its PodGroups only in a real cluster
(through their owner references, which the test checks).
"""

from __future__ import annotations

import copy
import json
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from workload_map.catalog import builtin_registry
from workload_map.controller.grouping import covers
from workload_map.gang import export, plan
from workload_map.resolve import Workload

from .conftest import ApiServer, expect
from .test_live_support import _creatable, create, fixture_objects, widget_crd

pytestmark = pytest.mark.e2e

KARTAS = "/apis/run.ai/v1alpha1/kartas"
JOBSET_FIXTURE = "jobset-x-k8s-io-jobset-v1alpha2"
KAI_PODGROUPS = "/apis/scheduling.run.ai/v2alpha2/namespaces/{ns}/podgroups"
LAUNCH = "from workload_map.controller.main import console_main; console_main()"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Controller:
    process: subprocess.Popen[bytes]
    log: Path
    health: int
    metrics: int
    identity: str

    def get(self, port: int, path: str) -> httpx.Response:
        return httpx.get(f"http://127.0.0.1:{port}{path}", timeout=5)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return int(self.process.returncode)


def eventually(check: Callable[[], Any], what: str, controllers: list[Controller] | None = None) -> Any:
    """Poll `check` until it returns something truthy (an AssertionError counts as not yet); fail after 60 s with
    the last answer and the controllers' logs."""
    deadline = time.monotonic() + 60
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except (AssertionError, httpx.HTTPError) as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(0.3)
    logs = "\n".join(c.output()[-4000:] for c in controllers or [])
    raise AssertionError(f"{what}: never happened; last: {last!r}\ncontroller log:\n{logs}")


@pytest.fixture
def start_controller(api_server: ApiServer, tmp_path: Path) -> Iterator[Callable[..., Controller]]:
    started: list[Controller] = []

    def start(*flags: str) -> Controller:
        health, metrics = _free_port(), _free_port()
        identity = f"ctrl-{uuid.uuid4().hex[:6]}"
        log = tmp_path / f"{identity}.log"
        argv = [
            sys.executable,
            "-c",
            LAUNCH,
            "--kubeconfig",
            str(api_server.kubeconfig),
            "--health-probe-bind-address",
            f"127.0.0.1:{health}",
            "--metrics-bind-address",
            f"127.0.0.1:{metrics}",
            "--identity",
            identity,
            "--lease-duration",
            "6",
            "--renew-deadline",
            "4",
            "--retry-period",
            "0.5",
            "--webhook-port",
            str(_free_port()),
            "--webhook-cert-dir",
            str(tmp_path / f"{identity}-certs"),
            *flags,
        ]
        with log.open("wb") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        controller = Controller(process, log, health, metrics, identity)
        started.append(controller)
        return controller

    yield start
    for controller in started:
        controller.stop()


def _ready(controller: Controller) -> bool:
    return controller.get(controller.health, "/readyz").status_code == 200


# the Karta webhooks alone: no leader election, no pod grouper, no Karta operator
WEBHOOKS_ONLY = ("--leader-elect=false", "--pod-grouper=false", "--karta-operator=false")


def _configuration_paths(configuration: str) -> tuple[str, str]:
    """The validating and the mutating webhook configuration the controller registers under `configuration`."""
    return (
        f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{configuration}",
        f"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/{configuration}",
    )


@dataclass
class Webhooks:
    """A controller serving its webhooks on 127.0.0.1:`port`, registered under `configuration` with that url."""

    controller: Controller
    port: int
    configuration: str

    @property
    def validating(self) -> str:
        return _configuration_paths(self.configuration)[0]

    @property
    def mutating(self) -> str:
        return _configuration_paths(self.configuration)[1]


@pytest.fixture
def start_webhooks(
    kube: httpx.Client, start_controller: Callable[..., Controller]
) -> Iterator[Callable[..., Webhooks]]:
    """`start_webhooks(*flags)`: a controller with `flags` whose webhooks the API server calls by url on a free
    port, under a configuration name of its own. At the end its controllers stop, then both configurations of each
    are deleted (the test server keeps them, and a configuration left behind would call a closed port)."""
    started: list[Webhooks] = []

    def start(*flags: str) -> Webhooks:
        port = _free_port()
        configuration = f"wmap-e2e-{uuid.uuid4().hex[:6]}"
        url = f"https://127.0.0.1:{port}"
        controller = start_controller(
            *flags, "--webhook-port", str(port), "--webhook-url", url, "--webhook-configuration-name", configuration
        )
        started.append(Webhooks(controller, port, configuration))
        return started[-1]

    yield start
    for webhooks in started:
        webhooks.controller.stop()
        for path in _configuration_paths(webhooks.configuration):
            kube.delete(path)


# --- the process ----------------------------------------------------------------------------------------------


def test_probes_and_metrics_answer(start_controller: Callable[..., Controller], namespace: str) -> None:
    controller = start_controller("--leader-elect=false", "--namespaces", namespace)
    eventually(lambda: _ready(controller), "/readyz 200", [controller])
    assert controller.get(controller.health, "/healthz").text == "ok\n"
    assert controller.get(controller.health, "/nothing").status_code == 404
    metrics = controller.get(controller.metrics, "/metrics")
    assert metrics.status_code == 200
    assert "workloadmap_controller_leader 1" in metrics.text
    assert 'workloadmap_controller_queue_depth{controller="podgrouper"}' in metrics.text
    assert controller.stop() == 0
    assert "stopped" in controller.output()


def test_a_bad_flag_is_one_line_and_exit_2() -> None:
    result = subprocess.run(
        [sys.executable, "-c", LAUNCH, "--leader-elect=maybe"], check=False, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.startswith("workload-map-controller: error: argument --leader-elect")
    assert "Traceback" not in result.stderr


# --- the Karta operator ---------------------------------------------------------------------------------------


def _karta(name: str, group: str, *, broken: bool = False) -> dict[str, Any]:
    karta: dict[str, Any] = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "widget",
                    "kind": {"group": group, "version": "v1", "kind": "Widget"},
                    "statusDefinition": {"statusMappings": {}},
                }
            }
        },
    }
    if broken:
        karta["spec"]["structureDefinition"]["childComponents"] = [
            {"name": "part", "ownerRef": "missing", "specDefinition": {"podTemplateSpecPath": ".spec.template | ("}}
        ]
    return karta


def _conditions(kube: httpx.Client, name: str) -> dict[str, dict[str, Any]]:
    stored = expect(kube.get(f"{KARTAS}/{name}"))
    return {c["type"]: c for c in (stored.get("status") or {}).get("conditions") or []}


def _events(kube: httpx.Client, name: str, namespace: str = "default") -> list[dict[str, Any]]:
    listed = expect(
        kube.get(f"/api/v1/namespaces/{namespace}/events", params={"fieldSelector": f"involvedObject.name={name}"})
    )
    return list(listed["items"])


@pytest.fixture
def kartas(kube: httpx.Client) -> Iterator[list[str]]:
    created: list[str] = []
    yield created
    for name in created:
        kube.delete(f"{KARTAS}/{name}")


def test_a_valid_karta_gets_labels_and_conditions_and_crd_exists_flips(
    api_server: ApiServer, kube: httpx.Client, kartas: list[str], start_controller: Callable[..., Controller]
) -> None:
    suffix = uuid.uuid4().hex[:8]
    group, name = f"ctrl{suffix}.example.com", f"widgets-{suffix}"
    controller = start_controller("--leader-elect=false", "--pod-grouper=false")
    expect(kube.post(KARTAS, json=_karta(name, group)), 201)
    kartas.append(name)

    def not_served() -> dict[str, dict[str, Any]] | None:
        found = _conditions(kube, name)
        return found if found.get("CRDExists", {}).get("status") == "False" else None

    found = eventually(not_served, "the Karta's conditions", [controller])
    assert found["KartaValidated"]["status"] == "True" and found["KartaValidated"]["reason"] == "Valid"
    assert found["CRDExists"]["reason"] == "NotServed"
    assert found["CRDExists"]["message"].startswith("spec.structureDefinition.rootComponent.kind: ")
    assert found["Ready"]["status"] == "False" and found["Ready"]["reason"] == "CRDMissing"
    labels = expect(kube.get(f"{KARTAS}/{name}"))["metadata"]["labels"]
    assert labels == {"run.ai/karta-group": group, "run.ai/karta-version": "v1", "run.ai/karta-kind": "Widget"}
    events = eventually(lambda: _events(kube, name), "an Event about the Karta", [controller])
    assert {e["reason"] for e in events} >= {"NotServed"}
    assert all(e["type"] == "Warning" and e["involvedObject"]["kind"] == "Karta" for e in events)

    crd = widget_crd(group)
    expect(kube.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd), 201)
    try:
        ready = eventually(
            lambda: _conditions(kube, name).get("Ready", {}).get("status") == "True",
            "Ready after the CRD",
            [controller],
        )
        assert ready
        assert _conditions(kube, name)["CRDExists"]["reason"] == "Served"
    finally:
        kube.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")


def test_an_invalid_karta_names_the_field_path(
    kube: httpx.Client, kartas: list[str], start_controller: Callable[..., Controller]
) -> None:
    suffix = uuid.uuid4().hex[:8]
    name = f"broken-{suffix}"
    controller = start_controller("--leader-elect=false", "--pod-grouper=false")
    expect(kube.post(KARTAS, json=_karta(name, f"ctrl{suffix}.example.com", broken=True)), 201)
    kartas.append(name)
    found = eventually(lambda: _conditions(kube, name).get("KartaValidated"), "KartaValidated", [controller])
    assert found["status"] == "False" and found["reason"] == "ValidationFailed"
    assert "spec.structureDefinition.childComponents[0].ownerRef: " in found["message"]
    assert "spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath: " in found["message"]
    assert _conditions(kube, name)["Ready"]["reason"] == "NotValidated"
    events = eventually(
        lambda: [e for e in _events(kube, name) if e["reason"] == "ValidationFailed"], "the Event", [controller]
    )
    assert "childComponents[0].ownerRef" in events[0]["message"]


def test_two_kartas_of_one_kind_are_a_condition_on_both(
    kube: httpx.Client, kartas: list[str], start_controller: Callable[..., Controller]
) -> None:
    suffix = uuid.uuid4().hex[:8]
    group = f"ctrl{suffix}.example.com"
    first, second = f"one-{suffix}", f"two-{suffix}"
    controller = start_controller("--leader-elect=false", "--pod-grouper=false")
    for name in (first, second):
        expect(kube.post(KARTAS, json=_karta(name, group)), 201)
        kartas.append(name)
    expect(kube.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=widget_crd(group)), 201)
    try:
        for name, other in ((first, second), (second, first)):
            ready = eventually(
                lambda name=name: (
                    _conditions(kube, name).get("Ready", {}).get("reason") == "DuplicateKind"
                    and _conditions(kube, name)["Ready"]
                ),
                f"DuplicateKind on {name}",
                [controller],
            )
            assert ready["status"] == "False" and other in ready["message"]
        kube.delete(f"{KARTAS}/{second}")
        eventually(lambda: _conditions(kube, first)["Ready"]["status"] == "True", "Ready once alone", [controller])
    finally:
        kube.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")


# --- the pod grouper ------------------------------------------------------------------------------------------


def _install_unscheduled_jobset(
    api_server: ApiServer,
    namespace: str,
    *,
    scheduler_name: str | None = None,
    pods_too: bool = True,
    fixture: str = JOBSET_FIXTURE,
) -> tuple[dict[str, Any], list[str]]:
    """A catalog fixture (the JobSet's by default) with its owners (Jobs) and (`pods_too`) pods, as its operator
    would create them, the pods not yet bound to a node (what the grouper links). Returns the stored workload and
    the pod names."""
    workload, owners, pods = fixture_objects(fixture)
    if not pods_too:
        pods = []
    uids: dict[str, str] = {}
    stored = create(api_server, _creatable(workload), namespace=namespace)
    uids[workload["metadata"]["uid"]] = stored["metadata"]["uid"]
    names = []
    for obj in [*owners, *pods]:
        body = _creatable(obj)
        body.pop("status", None)
        if body["kind"] == "Pod":
            body["spec"].pop("nodeName", None)
            if scheduler_name:
                body["spec"]["schedulerName"] = scheduler_name
            names.append(body["metadata"]["name"])
        for ref in body["metadata"].get("ownerReferences") or []:
            ref["uid"] = uids[ref["uid"]]
        uids[obj["metadata"]["uid"]] = create(api_server, body, namespace=namespace)["metadata"]["uid"]
    return stored, names


def _expected_spec(jobset: dict[str, Any]) -> dict[str, Any]:
    """The KAI PodGroup spec the plan gives for the JobSet as stored (offline: the same library)."""
    resolved = builtin_registry().for_object(jobset)
    assert resolved is not None
    (group,) = export(plan(Workload(resolved.karta, jobset).resolve()), "kai")
    return dict(group["spec"])


def _pod_groups(kube: httpx.Client, namespace: str) -> list[dict[str, Any]]:
    return list(expect(kube.get(KAI_PODGROUPS.format(ns=namespace)))["items"])


def test_kai_pod_groups_follow_a_jobset(
    api_server: ApiServer, kube: httpx.Client, make_namespace: Any, start_controller: Callable[..., Controller]
) -> None:
    namespace = make_namespace("wmap-ctrl")
    controller = start_controller(
        "--leader-elect=false", "--karta-operator=false", "--scheduler", "kai", "--namespaces", namespace
    )
    jobset, pod_names = _install_unscheduled_jobset(api_server, namespace)
    groups = eventually(lambda: _pod_groups(kube, namespace), "a KAI PodGroup", [controller])
    assert [g["metadata"]["name"] for g in groups] == ["llm-pretrain"]
    (group,) = groups
    assert group["spec"] == _expected_spec(jobset)
    assert [s["name"] for s in group["spec"]["subGroups"]] == [
        "driver",
        "driver-replica-0",
        "workers",
        "workers-replica-0",
        "workers-replica-1",
    ]
    assert group["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "name": "llm-pretrain",
            "uid": jobset["metadata"]["uid"],
            "controller": True,
        }
    ]

    def linked() -> list[dict[str, Any]] | None:
        pods = expect(kube.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
        done = [p for p in pods if (p["metadata"].get("annotations") or {}).get("pod-group-name") == "llm-pretrain"]
        return pods if len(done) == len(pod_names) else None

    pods = eventually(linked, "every pod linked to its PodGroup", [controller])
    subgroups = {p["metadata"]["name"]: p["metadata"]["labels"].get("kai.scheduler/subgroup-name") for p in pods}
    assert set(subgroups.values()) == {"driver-replica-0", "workers-replica-0", "workers-replica-1"}
    assert sum(1 for v in subgroups.values() if v == "workers-replica-1") == 4
    assert all(p["metadata"]["annotations"]["kai.scheduler/skip-podgrouper"] == "true" for p in pods)
    path = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{namespace}/jobsets/llm-pretrain"
    stored = eventually(
        lambda: (expect(kube.get(path))["metadata"].get("annotations") or {}).get("kai.scheduler/skip-podgrouper"),
        "KAI's skip annotation on the JobSet",
        [controller],
    )
    assert stored == "true"

    # scale: three worker Jobs -> the tree gets a third replica
    patched = copy.deepcopy(jobset["spec"]["replicatedJobs"])
    patched[1]["replicas"] = 3
    path = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{namespace}/jobsets/llm-pretrain"
    updated = expect(
        kube.patch(
            path,
            content=json.dumps({"spec": {"replicatedJobs": patched}}),
            headers={"Content-Type": "application/merge-patch+json"},
        )
    )

    def scaled() -> dict[str, Any] | None:
        (group,) = _pod_groups(kube, namespace)
        return group if "workers-replica-2" in [s["name"] for s in group["spec"]["subGroups"]] else None

    group = eventually(scaled, "the PodGroup after the scale-up", [controller])
    assert group["spec"] == _expected_spec(updated)

    # scale down to one worker Job: the pods of the second are in no gang, which is an Event on the JobSet
    patched[1]["replicas"] = 1
    updated = expect(
        kube.patch(
            path,
            content=json.dumps({"spec": {"replicatedJobs": patched}}),
            headers={"Content-Type": "application/merge-patch+json"},
        )
    )

    def shrunk() -> dict[str, Any] | None:
        (group,) = _pod_groups(kube, namespace)
        return group if "workers-replica-1" not in [s["name"] for s in group["spec"]["subGroups"]] else None

    group = eventually(shrunk, "the PodGroup after the scale-down", [controller])
    assert group["spec"] == _expected_spec(updated)
    events = eventually(
        lambda: [e for e in _events(kube, "llm-pretrain", namespace) if e["reason"] == "PodNotGrouped"],
        "PodNotGrouped Events",
        [controller],
    )
    assert all(e["involvedObject"]["uid"] == jobset["metadata"]["uid"] for e in events)
    assert any("pod llm-pretrain-workers-1-0-" in e["message"] for e in events)
    assert controller.process.poll() is None


def test_a_pod_group_edited_or_deleted_by_someone_else_is_put_back(
    api_server: ApiServer, kube: httpx.Client, make_namespace: Any, start_controller: Callable[..., Controller]
) -> None:
    """The grouper watches the objects it writes: with no change to the JobSet or its pods (nothing else to
    trigger a reconcile), a PodGroup whose spec someone edits gets the plan's spec back, and one someone deletes
    is created again."""
    namespace = make_namespace("wmap-ctrl")
    controller = start_controller(
        "--leader-elect=false", "--karta-operator=false", "--scheduler", "kai", "--namespaces", namespace
    )
    jobset, _ = _install_unscheduled_jobset(api_server, namespace)
    expected = _expected_spec(jobset)
    (group,) = eventually(lambda: _pod_groups(kube, namespace), "the KAI PodGroup", [controller])
    assert group["spec"] == expected
    path = f"{KAI_PODGROUPS.format(ns=namespace)}/llm-pretrain"
    changed = copy.deepcopy(expected["subGroups"])
    member = next(g for g in changed if "minMember" in g)
    member["minMember"] += 1
    edited = expect(
        kube.patch(
            path,
            content=json.dumps({"spec": {"subGroups": changed}}),
            headers={"Content-Type": "application/merge-patch+json"},
        )
    )
    assert edited["spec"] != expected
    restored = eventually(
        lambda: (g := expect(kube.get(path)))["spec"] == expected and g, "the edited spec put back", [controller]
    )
    assert int(restored["metadata"]["resourceVersion"]) > int(edited["metadata"]["resourceVersion"])
    old_uid = restored["metadata"]["uid"]
    expect(kube.delete(path))

    def recreated() -> dict[str, Any] | None:
        answer = kube.get(path)
        if answer.status_code != 200 or answer.json()["metadata"]["uid"] == old_uid:
            return None
        return dict(answer.json())

    again = eventually(recreated, "the deleted PodGroup created again", [controller])
    assert again["spec"] == expected
    assert again["metadata"]["ownerReferences"][0]["uid"] == jobset["metadata"]["uid"]


def test_a_pod_group_whose_label_was_removed_is_adopted_back(
    api_server: ApiServer, kube: httpx.Client, make_namespace: Any, start_controller: Callable[..., Controller]
) -> None:
    """Someone removes the managed-by label from our PodGroup (and edits its spec): the grouper's LIST no longer
    shows it, its create is refused (the name is taken), and the object, owned by the workload, is adopted back:
    the same object (uid) gets the label and the plan's spec again, with no Event and no endless retry."""
    namespace = make_namespace("wmap-ctrl")
    controller = start_controller(
        "--leader-elect=false", "--karta-operator=false", "--scheduler", "kai", "--namespaces", namespace
    )
    jobset, _ = _install_unscheduled_jobset(api_server, namespace)
    expected = _expected_spec(jobset)
    (group,) = eventually(lambda: _pod_groups(kube, namespace), "the KAI PodGroup", [controller])
    path = f"{KAI_PODGROUPS.format(ns=namespace)}/llm-pretrain"
    changed = copy.deepcopy(expected["subGroups"])
    next(g for g in changed if "minMember" in g)["minMember"] += 1
    edited = expect(
        kube.patch(
            path,
            content=json.dumps(
                {"metadata": {"labels": {"app.kubernetes.io/managed-by": None}}, "spec": {"subGroups": changed}}
            ),
            headers={"Content-Type": "application/merge-patch+json"},
        )
    )
    assert "app.kubernetes.io/managed-by" not in (edited["metadata"].get("labels") or {})

    def adopted() -> dict[str, Any] | None:
        current = expect(kube.get(path))
        labels = current["metadata"].get("labels") or {}
        return current if labels.get("app.kubernetes.io/managed-by") == "workload-map" else None

    again = eventually(adopted, "the PodGroup adopted back", [controller])
    assert again["metadata"]["uid"] == group["metadata"]["uid"]
    assert again["spec"] == expected
    assert "adopted back" in controller.output()
    conflicts = [e for e in _events(kube, "llm-pretrain", namespace) if e["reason"] == "PodGroupConflict"]
    assert conflicts == []


def _writes(controller: Controller, verb: str, kind: str) -> int:
    text = controller.get(controller.metrics, "/metrics").text
    found = re.findall(rf'workloadmap_controller_writes_total\{{verb="{verb}",kind="{kind}"\}} (\d+)', text)
    return sum(int(n) for n in found)


def test_someone_elses_pod_group_with_our_name_is_reported_not_retried(
    api_server: ApiServer, kube: httpx.Client, make_namespace: Any, start_controller: Callable[..., Controller]
) -> None:
    """A PodGroup with the name the plan writes, not owned by the workload and without our label: left as it
    is, a PodGroupConflict Event on the workload names it, and the create is not retried on its own."""
    namespace = make_namespace("wmap-ctrl")
    theirs = expect(
        kube.post(
            KAI_PODGROUPS.format(ns=namespace),
            json={
                "apiVersion": "scheduling.run.ai/v2alpha2",
                "kind": "PodGroup",
                "metadata": {"name": "llm-pretrain", "labels": {"team": "theirs"}},
                "spec": {"minMember": 1},
            },
        )
    )
    controller = start_controller(
        "--leader-elect=false", "--karta-operator=false", "--scheduler", "kai", "--namespaces", namespace
    )
    jobset, _ = _install_unscheduled_jobset(api_server, namespace, pods_too=False)
    events = eventually(
        lambda: [e for e in _events(kube, "llm-pretrain", namespace) if e["reason"] == "PodGroupConflict"],
        "a PodGroupConflict Event",
        [controller],
    )
    assert all(e["involvedObject"]["uid"] == jobset["metadata"]["uid"] for e in events)
    assert any("PodGroup llm-pretrain exists and is not owned by the workload" in e["message"] for e in events)

    def settled() -> int | None:  # the reconciles the JobSet's own changes cause are done
        before = _writes(controller, "create", "PodGroup")
        time.sleep(1.0)
        after = _writes(controller, "create", "PodGroup")
        return after if after == before and after > 0 else None

    attempts = eventually(settled, "the grouper's creates settled", [controller])
    time.sleep(4.0)  # the work queue's backoff (0.5 s, doubling) would have retried at least twice by now
    assert _writes(controller, "create", "PodGroup") == attempts
    current = expect(kube.get(f"{KAI_PODGROUPS.format(ns=namespace)}/llm-pretrain"))
    assert current["metadata"]["resourceVersion"] == theirs["metadata"]["resourceVersion"]
    assert current["spec"] == theirs["spec"]


def test_dry_run_writes_nothing(
    api_server: ApiServer, kube: httpx.Client, make_namespace: Any, start_controller: Callable[..., Controller]
) -> None:
    namespace = make_namespace("wmap-ctrl")
    controller = start_controller(
        "--leader-elect=false", "--karta-operator=false", "--dry-run", "--namespaces", namespace
    )
    _install_unscheduled_jobset(api_server, namespace)
    eventually(
        lambda: "dry-run: would create PodGroup " + f"{namespace}/llm-pretrain" in controller.output(),
        "the logged create",
        [controller],
    )
    eventually(lambda: "dry-run: would patch Pod" in controller.output(), "the logged pod patch", [controller])
    assert _pod_groups(kube, namespace) == []
    pods = expect(kube.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
    assert pods and not any("pod-group-name" in (p["metadata"].get("annotations") or {}) for p in pods)


# --- leader election ------------------------------------------------------------------------------------------


def test_one_of_two_leads_and_the_other_takes_over(
    kube: httpx.Client, namespace: str, start_controller: Callable[..., Controller]
) -> None:
    lease_id = f"ctrl-{uuid.uuid4().hex[:6]}"
    flags = (
        "--leader-election-id",
        lease_id,
        "--leader-election-namespace",
        namespace,
        "--namespaces",
        namespace,
        "--karta-operator=false",
    )
    first, second = start_controller(*flags), start_controller(*flags)
    lease_path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{lease_id}"

    def holder() -> str:
        answer = kube.get(lease_path)
        return str(answer.json()["spec"].get("holderIdentity") or "") if answer.status_code == 200 else ""

    leader_id = eventually(holder, "a leader", [first, second])
    leader, standby = (first, second) if leader_id == first.identity else (second, first)
    assert leader_id == leader.identity
    eventually(lambda: "workloadmap_controller_leader 1" in leader.get(leader.metrics, "/metrics").text, "leader=1")
    assert "workloadmap_controller_leader 0" in standby.get(standby.metrics, "/metrics").text
    assert leader.stop() == 0
    eventually(lambda: holder() == standby.identity, "the standby takes the Lease", [standby])
    eventually(lambda: "workloadmap_controller_leader 1" in standby.get(standby.metrics, "/metrics").text, "leader=1")


SCHEDULER_COLLECTIONS = {
    "volcano": [("PodGroup", "/apis/scheduling.volcano.sh/v1beta1/namespaces/{ns}/podgroups")],
    "coscheduling": [("PodGroup", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups")],
    "workload": [
        ("Workload", "/apis/scheduling.k8s.io/v1alpha2/namespaces/{ns}/workloads"),
        ("PodGroup", "/apis/scheduling.k8s.io/v1alpha2/namespaces/{ns}/podgroups"),
    ],
}


@pytest.mark.parametrize("scheduler", sorted(SCHEDULER_COLLECTIONS))
def test_each_scheduler_gets_the_objects_of_its_export(
    scheduler: str,
    api_server: ApiServer,
    kube: httpx.Client,
    make_namespace: Any,
    start_controller: Callable[..., Controller],
) -> None:
    namespace = make_namespace("wmap-ctrl")
    controller = start_controller(
        "--leader-elect=false", "--karta-operator=false", "--scheduler", scheduler, "--namespaces", namespace
    )
    jobset, _ = _install_unscheduled_jobset(api_server, namespace)
    pods = expect(kube.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
    resolved = builtin_registry().for_object(jobset)
    assert resolved is not None
    gang_plan = plan(Workload(resolved.karta, jobset).resolve(), sorted(pods, key=lambda p: p["metadata"]["name"]))
    expected = {(o["kind"], o["metadata"]["name"]): o["spec"] for o in export(gang_plan, scheduler)}
    assert expected

    def stored() -> dict[tuple[str, str], Any] | None:
        found = {}
        for kind, collection in SCHEDULER_COLLECTIONS[scheduler]:  # a LIST's items of a built-in type have no kind
            for item in expect(kube.get(collection.format(ns=namespace)))["items"]:
                found[(kind, item["metadata"]["name"])] = item
        return found if set(found) == set(expected) else None

    found = eventually(stored, f"the {scheduler} objects", [controller])
    for key, spec in expected.items():
        assert covers(found[key]["spec"], spec), (key, found[key]["spec"], spec)  # plus the server's defaults
        assert found[key]["metadata"]["ownerReferences"][0]["uid"] == jobset["metadata"]["uid"]
    if scheduler == "workload":
        return  # a pod joins a Workload API group by spec.schedulingGroup, set only at creation (the webhook's job)
    key = {"volcano": "scheduling.k8s.io/group-name", "coscheduling": "scheduling.x-k8s.io/pod-group"}[scheduler]

    def linked() -> bool:
        listed = expect(kube.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
        carried = [{**(p["metadata"].get("labels") or {}), **(p["metadata"].get("annotations") or {})} for p in listed]
        return all(key in c for c in carried)

    eventually(linked, f"every pod carries {key}", [controller])


# --- the admission webhooks -----------------------------------------------------------------------------------


def test_the_karta_webhooks_reject_label_and_guard_the_root_kind(
    kube: httpx.Client, kartas: list[str], start_webhooks: Callable[..., Webhooks]
) -> None:
    webhooks = start_webhooks(*WEBHOOKS_ONLY)
    controller = webhooks.controller
    configurations = (webhooks.validating, webhooks.mutating)
    eventually(lambda: all(kube.get(path).status_code == 200 for path in configurations), "the configurations")
    validating = expect(kube.get(configurations[0]))["webhooks"][0]
    assert validating["clientConfig"]["url"] == f"https://127.0.0.1:{webhooks.port}/validate-karta"
    assert validating["failurePolicy"] == "Ignore" and validating["timeoutSeconds"] == 5
    suffix = uuid.uuid4().hex[:8]
    group = f"ctrl{suffix}.example.com"

    def rejected() -> httpx.Response | None:
        answer = kube.post(KARTAS, json=_karta(f"broken-{suffix}", group, broken=True))
        if answer.status_code == 201:  # admitted before the API server called us: take it back, try again
            kube.delete(f"{KARTAS}/broken-{suffix}")
            return None
        return answer

    answer = eventually(rejected, "the invalid Karta rejected", [controller])
    message = answer.json()["message"]
    assert answer.status_code == 422, message
    assert 'admission webhook "kartas.validate.workloadmap.io" denied the request' in message
    assert "spec.structureDefinition.childComponents[0].ownerRef: " in message
    assert "spec.structureDefinition.childComponents[0].specDefinition.podTemplateSpecPath: " in message

    name = f"labelled-{suffix}"
    created = expect(kube.post(KARTAS, json=_karta(name, group)), 201)
    kartas.append(name)
    assert created["metadata"]["labels"] == {
        "run.ai/karta-group": group,
        "run.ai/karta-version": "v1",
        "run.ai/karta-kind": "Widget",
    }
    moved = copy.deepcopy(created)
    moved["spec"]["structureDefinition"]["rootComponent"]["kind"]["kind"] = "Gadget"
    refused = kube.put(f"{KARTAS}/{name}", json=moved)
    assert refused.status_code == 422
    assert (
        f"spec.structureDefinition.rootComponent.kind: immutable (was {group}/v1/Widget)" in refused.json()["message"]
    )
    served = controller.get(controller.metrics, "/metrics").text
    assert 'workloadmap_controller_reconciles_total{controller="webhook/validate-karta",result="served"}' in served


def _served_certificate(port: int) -> tuple[int, str]:
    """The serial and issuer of the certificate the webhook server presents now (a fresh handshake)."""
    import ssl

    from cryptography import x509

    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, context.wrap_socket(raw) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    cert = x509.load_der_x509_certificate(der)
    return cert.serial_number, cert.issuer.rfc4514_string()


def test_rotated_certificates_keep_admission_working(
    kube: httpx.Client, kartas: list[str], start_webhooks: Callable[..., Webhooks]
) -> None:
    """Auto mode with 15 s certificates checked every second: for 40 s every invalid Karta is rejected (the API
    server trusted each certificate served, through renewals by one CA and the switch to the next CA), the
    server presented new certificates without a restart, and the configurations' caBundle follows the CA."""
    pytest.importorskip("cryptography")
    import base64

    from cryptography import x509

    webhooks = start_webhooks(*WEBHOOKS_ONLY, "--webhook-cert-validity", "15s", "--webhook-cert-check-interval", "1s")
    controller, port, validating = webhooks.controller, webhooks.port, webhooks.validating
    suffix = uuid.uuid4().hex[:8]
    group = f"ctrl{suffix}.example.com"

    def post_invalid(attempt: int) -> httpx.Response:
        return kube.post(KARTAS, json=_karta(f"rotating-{suffix}-{attempt}", group, broken=True))

    def first_rejection() -> bool:
        answer = post_invalid(0)
        if answer.status_code == 201:  # before the API server saw the configuration
            kube.delete(f"{KARTAS}/rotating-{suffix}-0")
            return False
        return answer.status_code == 422

    eventually(first_rejection, "the first invalid Karta rejected", [controller])
    served: list[tuple[int, str]] = []
    bundles: set[str] = set()
    deadline = time.monotonic() + 40
    attempt = 0
    while time.monotonic() < deadline:
        attempt += 1
        answer = post_invalid(attempt)
        if answer.status_code == 201:
            kartas.append(f"rotating-{suffix}-{attempt}")
        assert answer.status_code == 422, (
            f"attempt {attempt} admitted (the API server could not call the webhook): {answer.text}\n"
            + controller.output()[-3000:]
        )
        assert 'admission webhook "kartas.validate.workloadmap.io" denied the request' in answer.json()["message"]
        served.append(_served_certificate(port))
        bundles.add(expect(kube.get(validating))["webhooks"][0]["clientConfig"]["caBundle"])
        time.sleep(0.5)
    serials = {serial for serial, _ in served}
    issuers = [issuer for _, issuer in served]
    assert len(serials) >= 3, served  # renewed while running, no restart
    assert len(set(issuers)) >= 2, issuers  # and signed by the next CA once it was published
    assert len(bundles) >= 2
    newest = base64.b64decode(expect(kube.get(validating))["webhooks"][0]["clientConfig"]["caBundle"])
    subjects = [ca.subject.rfc4514_string() for ca in x509.load_pem_x509_certificates(newest)]
    assert issuers[-1] in subjects  # the CA signing now is in the configuration
    assert controller.process.poll() is None and "serving certificate" in controller.output()


def test_in_cluster_the_configurations_call_the_service(
    kube: httpx.Client, start_controller: Callable[..., Controller], tmp_path: Path
) -> None:
    """`--webhook-service-name`: the configurations the API server stores call the Service (no url), with the CA
    of a serving certificate made for the Service's DNS names. (The test server has no Service network, so the
    calls themselves are the url tests'.)"""
    pytest.importorskip("cryptography")
    import base64

    from cryptography import x509

    configuration = f"wmap-e2e-{uuid.uuid4().hex[:6]}"
    certs = tmp_path / "service-certs"
    controller = start_controller(
        "--leader-elect=false",
        "--karta-operator=false",
        "--webhook-service-name",
        "workload-map-controller",
        "--webhook-service-namespace",
        "workload-map-system",
        "--webhook-cert-dir",
        str(certs),
        "--webhook-configuration-name",
        configuration,
    )
    paths = _configuration_paths(configuration)
    try:
        eventually(lambda: all(kube.get(p).status_code == 200 for p in paths), "the configurations", [controller])
        validating, mutating = (expect(kube.get(p)) for p in paths)
        hooks = validating["webhooks"] + mutating["webhooks"]
        assert [h["clientConfig"]["service"]["path"] for h in hooks] == [
            "/validate-karta",
            "/mutate-karta",
            "/mutate-pod",
        ]
        for hook in hooks:
            assert "url" not in hook["clientConfig"]
            assert hook["clientConfig"]["service"] | {"path": ""} == {
                "namespace": "workload-map-system",
                "name": "workload-map-controller",
                "port": 443,
                "path": "",
            }
        bundle = x509.load_pem_x509_certificates(base64.b64decode(hooks[0]["clientConfig"]["caBundle"]))
        serving = x509.load_pem_x509_certificate((certs / "tls.crt").read_bytes())
        assert serving.issuer in [ca.subject for ca in bundle]
        names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert names.get_values_for_type(x509.DNSName) == [
            "workload-map-controller.workload-map-system.svc",
            "workload-map-controller.workload-map-system.svc.cluster.local",
        ]
    finally:
        for path in paths:
            kube.delete(path)


def test_manual_certificates_are_read_again_when_they_change(
    kube: httpx.Client, kartas: list[str], start_controller: Callable[..., Controller], tmp_path: Path
) -> None:
    """`--webhook-cert-mode manual` (a mounted Secret, cert-manager): the test writes the files and the
    configurations (with both CAs, as cert-manager's injector would during a renewal); when the files are replaced
    by a certificate of another CA, the server presents it without a restart and the API server's calls go on."""
    pytest.importorskip("cryptography")
    import shutil

    from workload_map.controller.certs import ensure_certificates
    from workload_map.controller.webhook import Registration, configurations

    mounted, other = tmp_path / "mounted", tmp_path / "renewed"
    first = ensure_certificates(mounted, ["127.0.0.1"]).certificate
    second = ensure_certificates(other, ["127.0.0.1"]).certificate
    port = _free_port()
    configuration = f"wmap-e2e-{uuid.uuid4().hex[:6]}"
    for body in configurations(
        Registration(configuration, url=f"https://127.0.0.1:{port}"), first.ca_pem + second.ca_pem
    ):
        kind = body["kind"].lower()
        expect(kube.post(f"/apis/admissionregistration.k8s.io/v1/{kind}s", json=body), 201)
    controller = start_controller(
        "--leader-elect=false",
        "--pod-grouper=false",
        "--karta-operator=false",
        "--webhook-port",
        str(port),
        "--webhook-cert-mode",
        "manual",
        "--webhook-cert-dir",
        str(mounted),
        "--webhook-cert-check-interval",
        "1s",
    )
    suffix = uuid.uuid4().hex[:8]
    group = f"ctrl{suffix}.example.com"
    attempts = iter(range(1000))

    def rejected() -> bool:
        name = f"manual-{suffix}-{next(attempts)}"
        answer = kube.post(KARTAS, json=_karta(name, group, broken=True))
        if answer.status_code == 201:
            kartas.append(name)
            return False
        return answer.status_code == 422

    try:
        eventually(rejected, "the webhook called with the first certificate", [controller])
        before = _served_certificate(port)
        for name in ("tls.crt", "tls.key", "ca.crt"):
            shutil.copyfile(other / name, mounted / name)
        eventually(lambda: _served_certificate(port) != before, "the new certificate served", [controller])
        assert _served_certificate(port)[1] != before[1]  # of the other CA
        assert rejected(), "the API server could not call the webhook after the files changed"
        assert controller.process.poll() is None
    finally:
        for path in _configuration_paths(configuration):
            kube.delete(path)


@pytest.mark.parametrize("scheduler", ["workload", "kai"])
def test_the_pod_webhook_links_pods_at_creation(
    scheduler: str,
    api_server: ApiServer,
    kube: httpx.Client,
    make_namespace: Any,
    start_webhooks: Callable[..., Webhooks],
) -> None:
    from workload_map.controller.pod_admission import SCHEDULER_NAMES

    namespace = make_namespace("wmap-ctrl")
    webhooks = start_webhooks(
        "--leader-elect=false",
        "--karta-operator=false",
        "--pod-grouper=true",
        "--scheduler",
        scheduler,
        "--namespaces",
        namespace,
    )
    controller, mutating = webhooks.controller, webhooks.mutating
    eventually(lambda: kube.get(mutating).status_code == 200, "the configuration", [controller])
    hooks = {h["name"]: h for h in expect(kube.get(mutating))["webhooks"]}
    pod_hook = hooks["pods.mutate.workloadmap.io"]
    assert pod_hook["failurePolicy"] == "Ignore" and pod_hook["timeoutSeconds"] == 5
    assert pod_hook["namespaceSelector"]["matchExpressions"][0]["values"] == ["default", "kube-system"]
    jobset, _ = _install_unscheduled_jobset(api_server, namespace, pods_too=False)
    _, _, pods = fixture_objects(JOBSET_FIXTURE)
    jobs = {j["metadata"]["name"]: j for j in expect(kube.get(f"/apis/batch/v1/namespaces/{namespace}/jobs"))["items"]}
    pod = _creatable(next(p for p in pods if "workers-1-" in p["metadata"]["name"]))
    pod.pop("status", None)
    pod["spec"].pop("nodeName", None)
    pod["spec"]["schedulerName"] = SCHEDULER_NAMES[scheduler]
    pod["metadata"]["namespace"] = namespace
    owner = jobs[pod["metadata"]["ownerReferences"][0]["name"]]
    pod["metadata"]["ownerReferences"][0]["uid"] = owner["metadata"]["uid"]
    pods_path = f"/api/v1/namespaces/{namespace}/pods"

    def admitted() -> dict[str, Any] | None:
        created = expect(kube.post(pods_path, json=pod), 201)
        spec, meta = created["spec"], created["metadata"]
        if "schedulingGroup" in spec or "pod-group-name" in (meta.get("annotations") or {}):
            return created
        kube.delete(f"{pods_path}/{meta['name']}", params={"gracePeriodSeconds": "0"})  # not called yet: again
        eventually(lambda: kube.get(f"{pods_path}/{meta['name']}").status_code == 404, "the pod gone")
        return None

    created = eventually(admitted, "a pod linked at creation", [controller])
    if scheduler == "workload":
        resolved = builtin_registry().for_object(jobset)
        assert resolved is not None
        exported = export(plan(Workload(resolved.karta, jobset).resolve()), "workload")
        gang_names = [o["metadata"]["name"] for o in exported if o["kind"] == "PodGroup"]
        assert created["spec"]["schedulingGroup"]["podGroupName"] in gang_names
    else:
        assert created["metadata"]["annotations"]["pod-group-name"] == "llm-pretrain"
        assert created["metadata"]["labels"]["kai.scheduler/subgroup-name"] == "workers-replica-1"
        assert created["metadata"]["annotations"]["kai.scheduler/skip-podgrouper"] == "true"


# --- the dashboard (issue 23): the serve layer in the controller process -----------------------------------------


def test_the_controller_serves_each_user_what_their_token_may_list(
    api_server: ApiServer, make_namespace: Any, start_controller: Callable[..., Controller]
) -> None:
    """`--dashboard-bind-address`: the JSON API, /metrics and the event stream need a token; a token that may
    list PyTorchJobs in one namespace sees that namespace's only; the admin sees both; /healthz stays open."""
    from .test_live_support import grant, install_fixture, read_rules

    mine, other = make_namespace("wmap-ctrl"), make_namespace("wmap-ctrl")
    install_fixture(api_server, "kubeflow-org-pytorchjob-v1", mine)
    install_fixture(api_server, "kubeflow-org-pytorchjob-v1", other)
    grant(api_server, mine, read_rules(("kubeflow.org", "pytorchjobs"), verbs=("get", "list")))
    restricted = api_server._restricted["token"] if api_server._restricted else pytest.skip("no restricted token")
    admin = api_server._admin["token"]
    port = _free_port()
    controller = start_controller(
        "--leader-elect=false",
        "--enable-webhook=false",
        "--pod-grouper=false",
        "--karta-operator=false",
        "--namespaces",
        f"{mine},{other}",
        "--dashboard-bind-address",
        f"127.0.0.1:{port}",
    )

    def get(path: str, token: str | None = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        return httpx.get(f"http://127.0.0.1:{port}{path}", headers=headers, timeout=30)

    def names(token: str) -> list[tuple[str, str]]:
        answer = get("/api/v1/workloads", token)
        assert answer.status_code == 200, answer.text
        items = answer.json()["items"]
        return sorted((i["namespace"], i["name"]) for i in items if i["namespace"] in (mine, other))

    both = sorted([(mine, "bert-finetune"), (other, "bert-finetune")])
    eventually(lambda: names(admin) == both, "the admin sees both PyTorchJobs", [controller])
    assert names(restricted) == [(mine, "bert-finetune")]
    assert get(f"/api/v1/workloads/{other}/PyTorchJob/bert-finetune", restricted).status_code == 404
    view = get(f"/api/v1/workloads/{mine}/PyTorchJob/bert-finetune", restricted)
    assert view.status_code == 200 and view.json()["schemaVersion"] == "workloadmap.io/view/v1"
    missing = get("/api/v1/workloads")
    assert missing.status_code == 401 and missing.json()["message"].startswith("a bearer token is required")
    assert get("/api/v1/workloads", "not-a-token").status_code == 401
    assert get("/api/v1/events").status_code == 401
    assert get("/metrics", restricted).status_code == 403
    scraped = get("/metrics", admin)
    assert scraped.status_code == 200
    assert f'namespace="{mine}"' in scraped.text and "wmap_workload_info" in scraped.text
    assert get("/healthz").status_code == 200 and get("/").status_code == 200
    assert "dashboard: serving on" in controller.output()
    assert controller.stop() == 0


def test_the_dashboard_follows_kartas_live(
    api_server: ApiServer,
    kube: httpx.Client,
    kartas: list[str],
    make_namespace: Any,
    start_controller: Callable[..., Controller],
) -> None:
    """The dashboard in the controller follows the cluster's Kartas with no restart: a Widget (a kind no
    definition covers) appears once a Karta for it is applied, is read through the Karta's new version after an
    edit, and leaves the dashboard when the Karta is deleted."""
    suffix = uuid.uuid4().hex[:8]
    group, name = f"dash{suffix}.example.com", f"widgets-{suffix}"
    namespace = make_namespace("wmap-ctrl")
    crd = widget_crd(group)
    expect(kube.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd), 201)
    try:
        api_server.wait_crd_established(f"widgets.{group}")
        widgets = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
        expect(kube.post(widgets, json={"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"}}))
        admin = api_server._admin["token"]
        port = _free_port()
        controller = start_controller(
            "--leader-elect=false",
            "--enable-webhook=false",
            "--pod-grouper=false",
            "--karta-operator=false",
            "--namespaces",
            namespace,
            "--dashboard-bind-address",
            f"127.0.0.1:{port}",
        )

        def get(path: str) -> Any:
            answer = httpx.get(
                f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {admin}"}, timeout=30
            )
            assert answer.status_code == 200, answer.text
            return answer.json()

        def widgets_shown() -> list[str]:
            return [i["name"] for i in get("/api/v1/workloads")["items"] if i["kind"] == "Widget"]

        def definition() -> dict[str, Any] | None:
            return next((d for d in get("/api/v1/definitions")["items"] if d["group"] == group), None)

        eventually(lambda: get("/api/v1/definitions")["items"], "the dashboard answering", [controller])
        assert widgets_shown() == [] and definition() is None

        expect(kube.post(KARTAS, json=_karta(name, group)), 201)
        kartas.append(name)
        eventually(lambda: widgets_shown() == ["w1"], "the Widget shown after its Karta", [controller])
        shown = definition()
        assert shown is not None and (shown["name"], shown["origin"], shown["watched"]) == (name, "cluster", True)
        assert "watching Widget too: a definition covers it now" in controller.output()
        before = get(f"/api/v1/workloads/{namespace}/Widget/w1")
        assert before["definition"] == name and before["phase"] != "Running"

        # an edit: a status mapping that says Running; the view is computed again through the new definition
        karta = expect(kube.get(f"{KARTAS}/{name}"))
        root = karta["spec"]["structureDefinition"]["rootComponent"]
        root["statusDefinition"]["statusMappings"] = {
            "running": [{"byExpression": {"expression": "true", "expectedResult": "true"}}]
        }
        expect(kube.put(f"{KARTAS}/{name}", json=karta))
        eventually(
            lambda: get(f"/api/v1/workloads/{namespace}/Widget/w1")["phase"] == "Running",
            "the Widget read through the edited Karta",
            [controller],
        )

        expect(kube.delete(f"{KARTAS}/{name}"))
        kartas.remove(name)
        eventually(lambda: widgets_shown() == [], "the Widget gone after its Karta", [controller])
        assert definition() is None
        assert "not watching Widget any more" in controller.output()
        assert controller.stop() == 0
    finally:
        kube.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")


# --- least privilege ------------------------------------------------------------------------------------------

MANIFESTS = Path(__file__).resolve().parents[2] / "deploy" / "controller" / "workload-map-controller.yaml"
SERVICE_ACCOUNT = "system:serviceaccount:workload-map-system:workload-map-controller"


def test_the_manifests_role_is_enough(
    api_server: ApiServer,
    kube: httpx.Client,
    kartas: list[str],
    make_namespace: Any,
    start_webhooks: Callable[..., Webhooks],
) -> None:
    """The controller, acting as the manifests' ServiceAccount under their ClusterRole, does its work (a Karta's
    conditions, a JobSet's PodGroup, its webhook configurations) with no request forbidden; the rest of the
    manifests pass the API server's validation (dry run)."""
    import yaml

    documents = [d for d in yaml.safe_load_all(MANIFESTS.read_text()) if d]
    for doc in documents:
        if doc["kind"] in ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"):
            api_server.apply(doc)
        else:
            with api_server.client() as c:
                path = api_server.resource_path(c, doc["apiVersion"], doc["kind"], doc["metadata"]["namespace"])
                expect(
                    c.patch(
                        f"{path}/{doc['metadata']['name']}",
                        params={"fieldManager": "wmap-e2e", "force": "true", "dryRun": "All"},
                        content=json.dumps(doc),
                        headers={"Content-Type": "application/apply-patch+yaml"},
                    )
                )
    namespace = make_namespace("wmap-ctrl")
    mark = api_server.audit_mark()
    controller = start_webhooks(
        "--as",
        SERVICE_ACCOUNT,
        "--as-group",
        "system:serviceaccounts",
        "--as-group",
        "system:serviceaccounts:workload-map-system",
        "--as-group",
        "system:authenticated",
        "--scheduler",
        "kai",
        "--namespaces",
        namespace,
        "--leader-election-namespace",
        namespace,
    ).controller
    suffix = uuid.uuid4().hex[:8]
    name = f"rbac-{suffix}"
    eventually(lambda: _ready(controller), "/readyz", [controller])
    expect(kube.post(KARTAS, json=_karta(name, f"ctrl{suffix}.example.com")), 201)
    kartas.append(name)
    eventually(lambda: _conditions(kube, name).get("Ready"), "the Karta's conditions", [controller])
    _install_unscheduled_jobset(api_server, namespace)
    eventually(lambda: _pod_groups(kube, namespace), "the PodGroup", [controller])

    def annotated() -> bool:
        pods = expect(kube.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
        return all("pod-group-name" in (p["metadata"].get("annotations") or {}) for p in pods)

    eventually(annotated, "the pods linked", [controller])
    path = f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{namespace}/jobsets/llm-pretrain"
    eventually(
        lambda: (expect(kube.get(path))["metadata"].get("annotations") or {}).get("kai.scheduler/skip-podgrouper"),
        "the JobSet annotated",
        [controller],
    )
    controller.stop()  # all its requests are in the audit log before they are read
    mine = api_server.audit_events(
        mark, predicate=lambda ev: (ev.get("impersonatedUser") or {}).get("username") == SERVICE_ACCOUNT
    )
    assert len(mine) > 20  # the controller's requests, made as the ServiceAccount
    forbidden = [
        f"{ev['verb']} {ev['requestURI']}" for ev in mine if (ev.get("responseStatus") or {}).get("code") == 403
    ]
    assert forbidden == []
    verbs = {(ev["verb"], (ev.get("objectRef") or {}).get("resource")) for ev in mine}
    assert {("create", "podgroups"), ("patch", "pods"), ("patch", "kartas"), ("update", "leases")} <= verbs


@pytest.mark.parametrize("fixture", ["kubeflow-org-pytorchjob-v1", "ray-io-raycluster-v1"])
def test_kai_pod_groups_for_other_kinds(
    fixture: str,
    api_server: ApiServer,
    kube: httpx.Client,
    make_namespace: Any,
    start_controller: Callable[..., Controller],
) -> None:
    """A PyTorchJob and a RayCluster (pods owned by the workload itself): the PodGroups equal the offline export
    of the same objects, and every pod is linked."""
    namespace = make_namespace("wmap-ctrl")
    controller = start_controller("--leader-elect=false", "--karta-operator=false", "--namespaces", namespace)
    workload, names = _install_unscheduled_jobset(api_server, namespace, fixture=fixture)
    pods = expect(kube.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
    resolved = builtin_registry().for_object(workload)
    assert resolved is not None
    gang_plan = plan(Workload(resolved.karta, workload).resolve(), sorted(pods, key=lambda p: p["metadata"]["name"]))
    expected = {o["metadata"]["name"]: o["spec"] for o in export(gang_plan, "kai")}

    def stored() -> dict[str, Any] | None:
        found = {g["metadata"]["name"]: g["spec"] for g in _pod_groups(kube, namespace)}
        return found if set(found) == set(expected) else None

    assert eventually(stored, "the PodGroups", [controller]) == expected

    def linked() -> bool:
        listed = expect(kube.get(f"/api/v1/namespaces/{namespace}/pods"))["items"]
        return len(listed) == len(names) and all(
            (p["metadata"].get("annotations") or {}).get("pod-group-name") in expected for p in listed
        )

    eventually(linked, "every pod linked", [controller])


def test_a_killed_leader_is_replaced_when_its_lease_runs_out(
    kube: httpx.Client, namespace: str, start_controller: Callable[..., Controller]
) -> None:
    lease_id = f"ctrl-{uuid.uuid4().hex[:6]}"
    flags = ("--leader-election-id", lease_id, "--leader-election-namespace", namespace, "--namespaces", namespace)
    first, second = (
        start_controller(*flags, "--karta-operator=false"),
        start_controller(*flags, "--karta-operator=false"),
    )
    lease_path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{lease_id}"

    def holder() -> str:
        answer = kube.get(lease_path)
        return str(answer.json()["spec"].get("holderIdentity") or "") if answer.status_code == 200 else ""

    leader_id = eventually(holder, "a leader", [first, second])
    leader, standby = (first, second) if leader_id == first.identity else (second, first)
    leader.process.kill()  # no release: the standby must wait the lease out
    leader.process.wait()
    eventually(lambda: holder() == standby.identity, "the standby takes the expired Lease", [standby])
    lease = expect(kube.get(lease_path))["spec"]
    assert lease["leaseTransitions"] >= 1


def test_a_controller_that_is_down_blocks_no_apply(
    kube: httpx.Client, kartas: list[str], start_webhooks: Callable[..., Webhooks]
) -> None:
    webhooks = start_webhooks(*WEBHOOKS_ONLY)
    controller, validating = webhooks.controller, webhooks.validating
    eventually(lambda: kube.get(validating).status_code == 200, "the configuration", [controller])
    controller.process.kill()  # down, its configurations left in place
    controller.process.wait()
    suffix = uuid.uuid4().hex[:8]
    name = f"while-down-{suffix}"
    answer = kube.post(KARTAS, json=_karta(name, f"ctrl{suffix}.example.com", broken=True))
    assert answer.status_code == 201, answer.text  # failurePolicy Ignore: admitted
    kartas.append(name)


# --- the image's entry point ----------------------------------------------------------------------------------


def _entrypoint() -> list[str]:
    for line in (MANIFESTS.parent / "Containerfile").read_text().splitlines():
        if line.startswith("ENTRYPOINT "):
            return list(json.loads(line.removeprefix("ENTRYPOINT ")))
    raise AssertionError("the Containerfile has no ENTRYPOINT")


def test_the_containerfile_entry_point_runs_the_controller(api_server: ApiServer, tmp_path: Path) -> None:
    import shutil

    entrypoint = _entrypoint()
    assert entrypoint == ["workload-map-controller"]
    executable = shutil.which(entrypoint[0])
    if executable is None:
        pytest.skip("workload-map-controller is not installed (pip install -e .)")
    health = _free_port()
    argv = [executable, "--kubeconfig", str(api_server.kubeconfig), "--leader-elect=false", "--enable-webhook=false"]
    argv += ["--health-probe-bind-address", f"127.0.0.1:{health}", "--metrics-bind-address", "0"]
    argv += ["--pod-grouper=false"]
    log = tmp_path / "entrypoint.log"
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    controller = Controller(process, log, health, 0, "entrypoint")
    try:
        eventually(lambda: _ready(controller), "/readyz from the entry point", [controller])
    finally:
        assert controller.stop() == 0


_CHART_KINDS = [
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "Deployment",
    "MutatingWebhookConfiguration",
    "PodDisruptionBudget",
    "Service",
    "ServiceAccount",
    "ValidatingWebhookConfiguration",
]


@pytest.mark.parametrize(
    ("values", "kinds"),
    [
        ((), _CHART_KINDS),
        (
            ("webhook.certMode=auto", "dashboard.enabled=true"),
            [k for k in _CHART_KINDS if not k.endswith("WebhookConfiguration")],
        ),
    ],
)
def test_the_chart_renders_objects_the_api_server_accepts(
    api_server: ApiServer, values: tuple[str, ...], kinds: list[str]
) -> None:
    """`helm template` of charts/workload-map (default values, and the controller's own certificates with the
    dashboard), every object applied as a dry run (cert-manager's kinds left out: the test server has no
    cert-manager)."""
    import yaml

    from tests.unit.test_controller_chart import CHART, HELM_VERSION, _helm

    helm = _helm()
    if helm is None:
        pytest.skip(f"no helm (scripts/helm.sh builds helm {HELM_VERSION})")
    sets = [arg for value in values for arg in ("--set", value)]
    rendered = subprocess.run(
        [helm, "template", "wmap", str(CHART), "--namespace", "workload-map-system", *sets],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    api_server.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "workload-map-system"}})
    applied = []
    with api_server.client() as c:
        for doc in (d for d in yaml.safe_load_all(rendered) if d):
            if doc["apiVersion"].startswith("cert-manager.io/"):
                continue
            namespace = doc["metadata"].get("namespace")
            path = api_server.resource_path(c, doc["apiVersion"], doc["kind"], namespace)
            expect(
                c.patch(
                    f"{path}/{doc['metadata']['name']}",
                    params={"fieldManager": "wmap-e2e-chart", "force": "true", "dryRun": "All"},
                    content=json.dumps(doc),
                    headers={"Content-Type": "application/apply-patch+yaml"},
                )
            )
            applied.append(doc["kind"])
    assert sorted(applied) == kinds
