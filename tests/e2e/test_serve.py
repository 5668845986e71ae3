"""`wmap serve` against the real API server (issue 23): the installed executable on a free port, workloads and pods
created as their operators would (the catalog fixtures of a JobSet with its Jobs and a PyTorchJob, GPUs requested),
`/metrics` scraped and parsed with prometheus_client's text parser, the JSON API, a change in the cluster seen,
and the errors of a forbidden and of an unreachable cluster.

Test design: each expected figure comes from the cluster's own objects or from `wmap describe TYPE/NAME -o json`
(the sync path, never the server's code): the served view must equal describe's, GPUs per workload the view's,
the pod join series the pods the tree places. Waits are bounded (`WAIT`) and poll; nothing asserts a duration.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from tests.cli.helpers import REPO, clean_env, executable

from .conftest import ApiServer, expect
from .test_live_support import (
    create,
    create_pod,
    delete_object,
    grant,
    install_fixture,
    jobset_body,
    make_wmap,
    patch_status,
    read_rules,
    summary,
    widget_crd,
    widget_definition,
    wmap_requests,
)

pytestmark = pytest.mark.e2e

WAIT = 90.0  # the most any step may take before the test fails (a bound, not a timing assertion)
SERVING = re.compile(r"serving on (http://\S+)")


class Server:
    """A running `wmap serve`: its URL (read from its first stderr line) and its stderr."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [executable("wmap"), "serve", "--bind", "127.0.0.1:0", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_lines: list[str] = []
        assert self.process.stderr is not None
        threading.Thread(target=self._pump, args=(self.process.stderr,), daemon=True).start()
        self.url = ""

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.stderr_lines.append(line)
            self.lines.put(line)
        self.lines.put(None)

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def started(self) -> Server:
        deadline = time.monotonic() + WAIT
        while not self.url:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"wmap serve did not start within {WAIT:.0f}s; stderr: {self.stderr}")
            if line is None:
                pytest.fail(f"wmap serve exited ({self.process.wait()}): {self.stderr}")
            found = SERVING.search(line)
            if found:
                self.url = found.group(1)
        return self

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=30)

    def ready(self) -> dict[str, Any]:
        answer: dict[str, Any] = {}
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            response = self.get("/readyz")
            answer = response.json()
            if response.status_code == 200:
                return answer
            time.sleep(0.2)
        pytest.fail(f"/readyz never 200: {answer}; stderr: {self.stderr}")

    def samples(self) -> list[Sample]:
        response = self.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        return [s for family in text_string_to_metric_families(response.text) for s in family.samples]

    def until(self, what: str, check: Callable[[], Any]) -> Any:
        """Poll `check` until it returns something truthy (bounded by WAIT)."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            time.sleep(0.2)
        pytest.fail(f"{what}: not seen within {WAIT:.0f}s; stderr: {self.stderr}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(timeout=30)


@pytest.fixture
def serve(api_server: ApiServer, tmp_path: Path) -> Iterator[Callable[..., Server]]:
    wmap = make_wmap(api_server, tmp_path)
    started: list[Server] = []

    def start(*args: str, namespace: str | None = None, kubeconfig: Path | None = None) -> Server:
        server = Server(wmap.args(args, namespace, kubeconfig), clean_env(wmap.home, wmap.env()))
        started.append(server)
        return server

    yield start
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait(timeout=30)


def values(samples: list[Sample], metric: str, /, **labels: str) -> list[Sample]:
    return [s for s in samples if s.name == metric and all(s.labels.get(k) == v for k, v in labels.items())]


def one(samples: list[Sample], metric: str, /, **labels: str) -> float:
    found = values(samples, metric, **labels)
    assert len(found) == 1, (metric, labels, found)
    return found[0].value


def describe(api_server: ApiServer, tmp_path: Path, kind: str, name: str, namespace: str) -> dict[str, Any]:
    result = make_wmap(api_server, tmp_path).installed("describe", f"{kind}/{name}", "-o", "json", namespace=namespace)
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert isinstance(document, dict)
    return document


def tree_pods(view: dict[str, Any]) -> set[tuple[str, str, str]]:
    """(pod, component, instance) of every pod the view's tree places."""
    found: set[tuple[str, str, str]] = set()

    def walk(node: dict[str, Any]) -> None:
        component = node.get("component", node["name"])
        for pod in node.get("pods", []):
            found.add((pod["name"], component, node.get("instance", "")))
        for child in node.get("children", []):
            walk(child)

    for node in view["components"]:
        walk(node)
    return found


def test_metrics_and_api_of_a_jobset_and_a_pytorchjob(
    api_server: ApiServer, namespace: str, tmp_path: Path, serve: Callable[..., Server]
) -> None:
    jobset = install_fixture(api_server, "jobset-x-k8s-io-jobset-v1alpha2", namespace)
    pytorchjob = install_fixture(api_server, "kubeflow-org-pytorchjob-v1", namespace)
    server = serve(namespace=namespace).started()
    ready = server.ready()
    assert ready["ready"] is True and ready["workloads"] == 2, ready
    samples = server.samples()

    for obj in (jobset, pytorchjob):
        kind, name = obj["kind"], obj["metadata"]["name"]
        view = describe(api_server, tmp_path, kind, name, namespace)
        ident = {"namespace": namespace, "kind": kind, "name": name}
        # the served view is describe's (the Jobs of the JobSet are not workloads of their own)
        assert server.get(f"/api/v1/workloads/{namespace}/{kind.lower()}/{name}").json() == view
        assert one(samples, "wmap_workload_info", **ident) == 1
        assert one(samples, "wmap_workload_phase", phase=view["phase"], **ident) == 1
        assert sum(s.value for s in values(samples, "wmap_workload_phase", **ident)) == 1
        gpus = view["resources"]["gpus"]
        assert gpus > 0
        assert one(samples, "wmap_workload_gpus_requested", **ident) == gpus
        assert one(samples, "wmap_workload_resource_requests", resource="nvidia.com/gpu", unit="integer", **ident) == (
            gpus
        )
        assert (
            sum(s.value for s in values(samples, "wmap_workload_pods_desired", **ident))
            == (view["replicas"]["desired"])
        )
        assert sum(s.value for s in values(samples, "wmap_workload_pods_ready", **ident)) == view["replicas"]["ready"]
        joined = {
            (s.labels["pod"], s.labels["component"], s.labels["workload_instance"])
            for s in values(samples, "wmap_pod_workload", namespace=namespace, workload_kind=kind, workload_name=name)
        }
        assert joined and joined == tree_pods(view)
    assert one(samples, "wmap_workload_gpus_requested", kind="PyTorchJob", name=pytorchjob["metadata"]["name"]) == 10
    assert {s.labels["kind"] for s in values(samples, "wmap_workload_info")} == {"JobSet", "PyTorchJob"}

    listed = server.get(f"/api/v1/workloads?namespace={namespace}").json()
    assert listed["apiVersion"] == "workloadmap.io/api/v1" and listed["total"] == 2
    assert [item["kind"] for item in listed["items"]] == ["JobSet", "PyTorchJob"]
    assert all(item["schemaVersion"] == "workloadmap.io/view/v1" for item in listed["items"])
    assert [i["kind"] for i in server.get("/api/v1/workloads?kind=pytorchjob").json()["items"]] == ["PyTorchJob"]
    assert server.get("/api/v1/workloads?phase=NoSuchPhase").json()["items"] == []
    missing = server.get(f"/api/v1/workloads/{namespace}/JobSet/absent")
    assert missing.status_code == 404 and "absent" in missing.json()["message"]
    assert server.get("/api/v1/workloads?limit=x").status_code == 400
    definitions = {d["name"]: d for d in server.get("/api/v1/definitions").json()["items"]}
    assert definitions["jobset-x-k8s-io-jobset-v1alpha2"]["watched"] is True
    assert definitions["kubeflow-org-pytorchjob-v1"]["watched"] is True
    assert server.get("/healthz").status_code == 200
    assert server.stop() == 0
    assert "Traceback" not in server.stderr


def test_a_change_in_the_cluster_shows_up(
    api_server: ApiServer, namespace: str, tmp_path: Path, serve: Callable[..., Server]
) -> None:
    pytorchjob = install_fixture(api_server, "kubeflow-org-pytorchjob-v1", namespace)
    name = pytorchjob["metadata"]["name"]
    server = serve(namespace=namespace).started()
    server.ready()
    ident = {"namespace": namespace, "kind": "PyTorchJob", "name": name}
    before = one(server.samples(), "wmap_workload_gpus_held", **ident)

    # a new worker pod bound to a node, owned by the job, with 2 GPUs: held goes up by 2, and it joins
    view = describe(api_server, tmp_path, "PyTorchJob", name, namespace)
    worker = next(node for node in view["components"] if node["name"] == "worker")
    labels = {
        "training.kubeflow.org/job-name": name,
        "training.kubeflow.org/replica-type": "worker",
        "training.kubeflow.org/replica-index": "9",
    }
    create_pod(api_server, namespace, f"{name}-worker-9", owner=pytorchjob, labels=labels, gpus=2)
    after = server.until(
        "the new pod's GPUs",
        lambda: [s for s in values(server.samples(), "wmap_workload_gpus_held", **ident) if s.value == before + 2],
    )
    assert after
    joined = server.until(
        "the new pod's join series",
        lambda: values(server.samples(), "wmap_pod_workload", pod=f"{name}-worker-9", workload_name=name),
    )
    assert joined[0].labels["component"] == worker["name"]

    # the job fails: the phase state set moves
    patch_status(
        api_server,
        pytorchjob,
        {"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "x"}]},
    )
    server.until("phase Failed", lambda: one(server.samples(), "wmap_workload_phase", phase="Failed", **ident) == 1)
    assert server.get(f"/api/v1/workloads/{namespace}/PyTorchJob/{name}").json()["phase"] == "Failed"

    # a workload created while serving appears; deleted, it goes
    later = create(api_server, jobset_body("later", replicas=3), namespace=namespace)
    server.until("the new JobSet", lambda: values(server.samples(), "wmap_workload_info", kind="JobSet", name="later"))
    assert one(server.samples(), "wmap_workload_gpus_requested", kind="JobSet", name="later") == 3 * 2 * 4
    delete_object(api_server, later)
    server.until(
        "the JobSet gone",
        lambda: not values(server.samples(), "wmap_workload_info", kind="JobSet", name="later"),
    )
    assert server.get(f"/api/v1/workloads/{namespace}/JobSet/later").status_code == 404


def test_a_user_who_may_list_nothing_gets_one_clear_error(
    api_server: ApiServer, namespace: str, serve: Callable[..., Server]
) -> None:
    server = serve(namespace=namespace, kubeconfig=api_server.restricted_kubeconfig)
    code = server.process.wait(timeout=WAIT)
    assert code == 1, server.stderr
    errors = [line for line in server.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, server.stderr
    assert errors[0].startswith("error: cannot list any covered workload type: not allowed to list ")
    assert f"in namespace {namespace}" in errors[0] and "wmap-restricted" in errors[0]
    assert "Traceback" not in server.stderr


def test_a_namespace_reader_sees_its_namespace_only(
    api_server: ApiServer, make_namespace: Callable[..., str], serve: Callable[..., Server]
) -> None:
    mine, other = make_namespace(), make_namespace()
    install_fixture(api_server, "kubeflow-org-pytorchjob-v1", mine)
    install_fixture(api_server, "kubeflow-org-pytorchjob-v1", other)
    grant(api_server, mine, read_rules(("kubeflow.org", "pytorchjobs"), ("", "pods"), verbs=("get", "list", "watch")))
    server = serve(namespace=mine, kubeconfig=api_server.restricted_kubeconfig).started()
    ready = server.ready()
    assert ready["workloads"] == 1
    assert ready["notWatched"], ready  # the other covered types: refused, left out with a warning
    info = values(server.samples(), "wmap_workload_info")
    assert [(s.labels["namespace"], s.labels["kind"]) for s in info] == [(mine, "PyTorchJob")]
    assert "warning: not watching JobSet: not allowed to list" in server.stderr
    assert server.stop() == 0


def test_an_unreachable_cluster_is_exit_1_before_listening(
    api_server: ApiServer, tmp_path: Path, serve: Callable[..., Server]
) -> None:
    server = serve("--server", "https://127.0.0.1:1", "--request-timeout", "5s")
    code = server.process.wait(timeout=WAIT)
    assert code == 1
    first = server.stderr.splitlines()[0]
    assert first.startswith("error: cannot reach https://127.0.0.1:1: connection refused"), server.stderr
    assert "serving on" not in server.stderr


def test_a_port_in_use_is_a_clear_error(api_server: ApiServer, namespace: str, serve: Callable[..., Server]) -> None:
    first = serve(namespace=namespace).started()
    port = first.url.rsplit(":", 1)[1]
    wmap_args = ["--bind", f"127.0.0.1:{port}"]
    second = serve(*wmap_args, namespace=namespace)
    assert second.process.wait(timeout=WAIT) == 1
    assert f"error: cannot listen on 127.0.0.1:{port}" in second.stderr, second.stderr


def test_without_a_namespace_every_namespace_is_watched(
    api_server: ApiServer, make_namespace: Callable[..., str], serve: Callable[..., Server]
) -> None:
    first, second = make_namespace(), make_namespace()
    install_fixture(api_server, "kubeflow-org-pytorchjob-v1", first)
    server = serve().started()
    server.ready()
    install_fixture(api_server, "jobset-x-k8s-io-jobset-v1alpha2", second)  # after the first LIST: seen by the watch
    for namespace, kind in ((first, "PyTorchJob"), (second, "JobSet")):
        server.until(
            f"{kind} in {namespace}",
            lambda namespace=namespace, kind=kind: values(
                server.samples(), "wmap_pod_workload", namespace=namespace, workload_kind=kind
            ),
        )
    listed = server.get(f"/api/v1/workloads?namespace={second}").json()["items"]
    assert [(item["kind"], item["namespace"]) for item in listed] == [("JobSet", second)]
    assert server.stop() == 0


def test_a_crd_installed_while_serving_is_watched(
    api_server: ApiServer, namespace: str, serve: Callable[..., Server], tmp_path: Path
) -> None:
    group = f"serve{uuid.uuid4().hex[:8]}.wmap-e2e.example.com"
    definition = tmp_path / "widget.yaml"
    definition.write_text(widget_definition(group))
    with api_server.client() as kube:
        assert kube.get(f"/apis/{group}/v1").status_code == 404, "the Widget CRD is already installed"
    server = serve("--definitions", str(definition), namespace=namespace).started()
    server.ready()
    try:
        api_server.apply(widget_crd(group, status_subresource=True))
        api_server.wait_crd_established(f"widgets.{group}")
        container = {"name": "main", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
        widget = {
            "apiVersion": f"{group}/v1",
            "kind": "Widget",
            "metadata": {"name": "wg"},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [container]}}},
        }
        create(api_server, widget, namespace=namespace)
        info = server.until(
            "the Widget",
            lambda: values(server.samples(), "wmap_workload_info", namespace=namespace, kind="Widget", name="wg"),
        )
        assert info[0].labels["api_version"] == f"{group}/v1"
        assert one(server.samples(), "wmap_workload_gpus_requested", namespace=namespace, kind="Widget", name="wg") == 3
        assert "watching Widget too: its CRD was installed" in server.stderr
    finally:
        with api_server.client() as kube:
            kube.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")
    assert server.stop() == 0


def test_user_tokens_show_each_user_what_they_may_list(
    api_server: ApiServer, make_namespace: Callable[..., str], serve: Callable[..., Server]
) -> None:
    mine, other = make_namespace(), make_namespace()
    install_fixture(api_server, "kubeflow-org-pytorchjob-v1", mine)
    install_fixture(api_server, "kubeflow-org-pytorchjob-v1", other)
    grant(api_server, mine, read_rules(("kubeflow.org", "pytorchjobs"), verbs=("get", "list")))
    server = serve("--user-tokens").started()  # the server reads everything as the admin
    server.ready()
    restricted = api_server._restricted["token"] if api_server._restricted else pytest.skip("no restricted token")
    admin = api_server._admin["token"]

    def get(path: str, token: str | None = None, **headers: str) -> httpx.Response:
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return httpx.get(server.url + path, headers=headers, timeout=30)

    def names(answer: httpx.Response) -> list[tuple[str, str]]:
        assert answer.status_code == 200, answer.text
        return [
            (item["namespace"], item["kind"]) for item in answer.json()["items"] if item["namespace"] in (mine, other)
        ]

    mark = api_server.audit_mark()
    assert names(get("/api/v1/workloads", restricted)) == [(mine, "PyTorchJob")]
    reviews = [r for r in summary(wmap_requests(api_server, mark)) if r[1].endswith("reviews")]
    assert ("create", "tokenreviews") in reviews and ("create", "subjectaccessreviews") in reviews
    assert names(get("/api/v1/workloads", restricted)) == [(mine, "PyTorchJob")]  # answered from the cache
    again = [r for r in summary(wmap_requests(api_server, mark)) if r[1].endswith("reviews")]
    assert again == reviews
    assert sorted(names(get("/api/v1/workloads", admin))) == sorted([(mine, "PyTorchJob"), (other, "PyTorchJob")])
    assert names(get("/api/v1/workloads", **{"X-Forwarded-Access-Token": restricted})) == [(mine, "PyTorchJob")]
    seen = get("/api/v1/workloads", restricted).json()["namespaces"]  # other tests' namespaces may grant it too
    assert mine in seen and other not in seen
    assert get(f"/api/v1/workloads/{other}/PyTorchJob/bert-finetune", restricted).status_code == 404
    assert get(f"/api/v1/workloads/{mine}/PyTorchJob/bert-finetune", restricted).status_code == 200

    missing = get("/api/v1/workloads")
    assert missing.status_code == 401 and missing.json()["message"].startswith("a bearer token is required")
    wrong = get("/api/v1/workloads", "not-a-token")
    assert wrong.status_code == 401 and wrong.json()["message"] == "the API server does not accept this token"
    assert get("/api/v1/events").status_code == 401
    assert get("/healthz").status_code == 200 and get("/").status_code == 200

    # /metrics: a token that may GET it (the admin), not the restricted user
    assert get("/metrics", admin).status_code == 200
    refused = get("/metrics", restricted)
    assert refused.status_code == 403 and 'user "wmap-restricted" may not get /metrics' in refused.json()["message"]

    # the session cookie: set once from the token, HttpOnly, then enough by itself
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        assert browser.post("/api/v1/session", json={"token": "nope"}).status_code == 401
        login = browser.post("/api/v1/session", json={"token": restricted})
        assert login.status_code == 200 and login.json()["user"] == "wmap-restricted"
        cookie = login.headers["set-cookie"]
        assert "wmap_token=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert names(browser.get("/api/v1/workloads")) == [(mine, "PyTorchJob")]
        assert browser.delete("/api/v1/session").status_code == 200
        assert browser.get("/api/v1/workloads").status_code == 401
    assert server.stop() == 0


def test_a_karta_applied_while_serving_is_followed(
    api_server: ApiServer, namespace: str, serve: Callable[..., Server]
) -> None:
    """`wmap serve` follows the cluster's Kartas: a Widget (a kind no definition covers) shows once a Karta for it
    is applied, and leaves when the Karta is deleted, with no restart."""
    suffix = uuid.uuid4().hex[:8]
    group, karta_name = f"serve{suffix}.example.com", f"widgets-{suffix}"
    crd = widget_crd(group)
    karta = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": karta_name},
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
    api_server.apply(crd)
    try:
        api_server.wait_crd_established(f"widgets.{group}")
        create(
            api_server, {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"}}, namespace=namespace
        )
        server = serve(namespace=namespace).started()
        server.ready()

        def widgets() -> list[str]:
            items = server.get("/api/v1/workloads").json()["items"]
            return [i["name"] for i in items if i["kind"] == "Widget"]

        assert widgets() == []
        with api_server.client() as kube:
            expect(kube.post("/apis/run.ai/v1alpha1/kartas", json=karta))
        server.until("the Widget after its Karta", lambda: widgets() == ["w1"])
        assert "watching Widget too: a definition covers it now" in server.stderr
        with api_server.client() as kube:
            expect(kube.delete(f"/apis/run.ai/v1alpha1/kartas/{karta_name}"))
        server.until("the Widget gone after its Karta", lambda: widgets() == [])
        assert server.stop() == 0
    finally:
        with api_server.client() as kube:
            kube.delete(f"/apis/run.ai/v1alpha1/kartas/{karta_name}")
            kube.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")
