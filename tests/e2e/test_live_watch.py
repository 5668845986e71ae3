"""`wmap watch` and `wmap get -w` against the real API server (issue 21): a change seen, a workload deleted while
watched, Ctrl-C, a watch across a 410 (the server restarted: its watch cache no longer holds the resourceVersion),
the API server restarted mid-watch, RBAC that allows list but forbids watch (polling), and no request per pod,
counted from the audit log.

The two cases that restart kube-apiserver run only on a server the tests may restart: one the session started
itself, or any with WMAP_TEST_ALLOW_RESTART=1 (your own instance: WMAP_TEST_CLUSTER_DIR=/tmp/...); never the
shared one another session may be using."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.cli.helpers import REPO, clean_env, executable
from workload_map.asyncio import AsyncCluster, AsyncInformer, Backoff, ConnectionSettings, WatchedResource

from .conftest import ApiServer, expect
from .test_live_support import (
    MERGE,
    create,
    create_pod,
    delete_object,
    deployment_body,
    grant,
    make_wmap,
    read_rules,
    replicaset_body,
    summary,
    wmap_requests,
)

pytestmark = pytest.mark.e2e

WAIT = 90.0  # the most any step may take before the test fails (a bound, not a timing assertion)


class Stream:
    """A running `wmap` whose stdout is read line by line (a thread feeds a queue, so a read can give up)."""

    def __init__(self, args: list[str], home: Path, cache: Path) -> None:
        self.process = subprocess.Popen(
            [executable("wmap"), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(home, {"WMAP_CACHE_DIR": str(cache)}),
            cwd=REPO,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_lines: list[str | None] = []
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=self._pump, args=(self.process.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.process.stderr, self.stderr_lines.append), daemon=True).start()

    @staticmethod
    def _pump(stream: IO[str], put: Callable[[Any], None]) -> None:
        for line in stream:
            put(line)
        put(None)

    @property
    def stderr(self) -> str:
        return "".join(line for line in self.stderr_lines if line)

    def next_line(self, timeout: float = WAIT) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no output within {timeout:.0f}s; stderr: {self.stderr}")
        if line is None:
            pytest.fail(f"wmap exited ({self.process.wait()}): {self.stderr}")
        return line

    def next_json(self, until: Callable[[dict[str, Any]], bool] = lambda _: True) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT
        while True:
            document = json.loads(self.next_line(max(1.0, deadline - time.monotonic())))
            assert isinstance(document, dict)
            if until(document):
                return document

    def interrupt(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=30)
        time.sleep(0.2)  # the stderr thread's last lines
        return code, self.stderr

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


@pytest.fixture
def run_stream(api_server: ApiServer, tmp_path: Path) -> Iterator[Callable[..., Stream]]:
    wmap = make_wmap(api_server, tmp_path)
    started: list[Stream] = []

    def start(*args: str, namespace: str, kubeconfig: Path | None = None) -> Stream:
        stream = Stream(wmap.args(args, namespace, kubeconfig), wmap.home, wmap.cache)
        started.append(stream)
        return stream

    yield start
    for stream in started:
        stream.stop()


def make_web(api_server: ApiServer, namespace: str, *, pods: int = 1) -> dict[str, Any]:
    web = create(api_server, deployment_body("web", replicas=2), namespace=namespace)
    rs = create(api_server, replicaset_body(web, "5d8f9"), namespace=namespace)
    labels = rs["spec"]["template"]["metadata"]["labels"]
    for index in range(pods):
        create_pod(api_server, namespace, f"web-5d8f9-{index}", owner=rs, labels=labels)
    return {"deployment": web, "replicaset": rs, "labels": labels}


def scale(api_server: ApiServer, namespace: str, replicas: int, name: str = "web") -> None:
    with api_server.client() as kube:
        path = f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
        expect(kube.patch(path, json={"spec": {"replicas": replicas}}, headers=MERGE))


def desired(view: dict[str, Any]) -> int:
    return int(view["components"][0]["replicas"]["desired"])


def current(view: dict[str, Any]) -> int:
    return int(view["components"][0]["replicas"]["current"])


# --- wmap watch -----------------------------------------------------------------------------------------------


def test_watch_prints_the_view_again_when_the_workload_or_a_pod_changes(
    api_server: ApiServer, namespace: str, run_stream: Callable[..., Stream]
) -> None:
    web = make_web(api_server, namespace)
    stream = run_stream("watch", "deployment/web", "-o", "json", namespace=namespace)
    first = stream.next_json()
    assert (first["kind"], first["name"], desired(first), current(first)) == ("Deployment", "web", 2, 1)
    scale(api_server, namespace, 5)
    assert desired(stream.next_json(lambda view: desired(view) == 5)) == 5
    create_pod(api_server, namespace, "web-5d8f9-new", owner=web["replicaset"], labels=web["labels"])
    assert current(stream.next_json(lambda view: current(view) == 2)) == 2
    code, stderr = stream.interrupt()
    assert code == 0, stderr
    assert "Traceback" not in stderr


def test_watch_off_a_terminal_defaults_to_json_lines(
    api_server: ApiServer, namespace: str, run_stream: Callable[..., Stream]
) -> None:
    make_web(api_server, namespace)
    stream = run_stream("watch", "deployment/web", namespace=namespace)  # stdout is a pipe: no redraw
    line = stream.next_line()
    assert line.endswith("\n")
    assert "\x1b" not in line
    assert json.loads(line)["schemaVersion"] == "workloadmap.io/view/v1"


def test_a_workload_deleted_while_watched(
    api_server: ApiServer, namespace: str, run_stream: Callable[..., Stream]
) -> None:
    web = make_web(api_server, namespace)
    stream = run_stream("watch", "deployment/web", "-o", "json", namespace=namespace)
    stream.next_json()
    delete_object(api_server, web["deployment"])
    gone = stream.next_json(lambda doc: bool(doc.get("deleted")))
    assert gone == {"deleted": True, "kind": "Deployment", "name": "web", "namespace": namespace}
    create(api_server, deployment_body("web", replicas=7), namespace=namespace)  # created again: watched again
    assert desired(stream.next_json(lambda doc: "components" in doc)) == 7
    code, _ = stream.interrupt()
    assert code == 0


def test_watching_a_missing_workload_is_exit_3(api_server: ApiServer, namespace: str, tmp_path: Path) -> None:
    result = make_wmap(api_server, tmp_path).installed("watch", "deployment/nothing", namespace=namespace)
    assert result.code == 3
    assert result.stderr.splitlines()[0] == f'error: Deployment "nothing" not found in namespace {namespace}'


def test_no_request_per_pod(api_server: ApiServer, namespace: str, run_stream: Callable[..., Stream]) -> None:
    make_web(api_server, namespace, pods=30)
    mark = api_server.audit_mark()
    stream = run_stream("watch", "deployment/web", "-o", "json", namespace=namespace)
    assert current(stream.next_json()) == 30
    scale(api_server, namespace, 3)
    stream.next_json(lambda view: desired(view) == 3)
    code, _ = stream.interrupt()
    assert code == 0
    calls = summary(wmap_requests(api_server, mark))
    pod_calls = [call for call in calls if call[1].startswith("pods")]
    assert sorted(set(pod_calls)) == [("list", "pods"), ("watch", "pods")], calls
    assert pod_calls.count(("list", "pods")) == 1, calls
    assert ("get", "pods") not in calls
    assert calls.count(("list", "replicasets")) == 1, calls  # the owners: one metadata LIST, then a WATCH
    assert ("watch", "replicasets") in calls, calls


def test_watch_forbidden_by_rbac_falls_back_to_polling(
    api_server: ApiServer, namespace: str, run_stream: Callable[..., Stream]
) -> None:
    if api_server.restricted_kubeconfig is None:
        pytest.skip("no restricted kubeconfig")
    make_web(api_server, namespace)
    grant(api_server, namespace, read_rules(("apps", "deployments"), ("apps", "replicasets"), ("", "pods")))
    stream = run_stream(
        "watch",
        "deployment/web",
        "-o",
        "json",
        "--poll-interval",
        "0.5",
        namespace=namespace,
        kubeconfig=api_server.restricted_kubeconfig,
    )
    assert desired(stream.next_json()) == 2
    scale(api_server, namespace, 4)
    assert desired(stream.next_json(lambda view: desired(view) == 4)) == 4  # seen by the next poll
    code, stderr = stream.interrupt()
    assert code == 0
    assert "warning: not allowed to watch deployments.apps in namespace" in stderr
    assert "polling with a LIST every 0.5s" in stderr


def test_an_owner_kind_that_cannot_be_read_is_a_warning(
    api_server: ApiServer, namespace: str, run_stream: Callable[..., Stream]
) -> None:
    if api_server.restricted_kubeconfig is None:
        pytest.skip("no restricted kubeconfig")
    make_web(api_server, namespace)
    verbs = ("get", "list", "watch")
    grant(api_server, namespace, read_rules(("apps", "deployments"), ("", "pods"), verbs=verbs))  # no replicasets
    stream = run_stream(
        "watch", "deployment/web", "-o", "json", namespace=namespace, kubeconfig=api_server.restricted_kubeconfig
    )
    view = stream.next_json()
    assert (desired(view), current(view)) == (2, 0)  # the pod is there, but not attributed through its ReplicaSet
    scale(api_server, namespace, 3)
    assert desired(stream.next_json(lambda doc: desired(doc) == 3)) == 3  # the watch goes on
    code, stderr = stream.interrupt()
    assert code == 0
    assert "warning: cannot read ReplicaSet objects (not allowed to list replicasets.apps in namespace" in stderr


# --- wmap get -w ----------------------------------------------------------------------------------------------


def test_get_watch_json_is_a_stream_of_events(
    api_server: ApiServer, namespace: str, run_stream: Callable[..., Stream]
) -> None:
    web = make_web(api_server, namespace)
    stream = run_stream("get", "deployments", "-w", "-o", "json", namespace=namespace)
    added = stream.next_json()
    assert (added["type"], added["object"]["name"]) == ("ADDED", "web")
    scale(api_server, namespace, 3)
    modified = stream.next_json()
    assert (modified["type"], modified["object"]["name"]) == ("MODIFIED", "web")
    delete_object(api_server, web["deployment"])
    deleted = stream.next_json(lambda event: event["type"] == "DELETED")
    assert deleted["object"]["name"] == "web"
    code, _ = stream.interrupt()
    assert code == 0


def test_get_watch_prints_the_table_then_a_row_per_change(
    api_server: ApiServer, namespace: str, run_stream: Callable[..., Stream]
) -> None:
    make_web(api_server, namespace)
    stream = run_stream("get", "deployments", "-w", namespace=namespace)
    assert stream.next_line().split() == ["NAME", "PHASE", "AGE"]
    assert stream.next_line().split()[0] == "web"
    create(api_server, deployment_body("api", replicas=1), namespace=namespace)
    assert stream.next_line().split()[0] == "api"
    code, stderr = stream.interrupt()
    assert code == 0
    assert "Traceback" not in stderr


def test_get_watch_with_custom_columns(
    api_server: ApiServer, namespace: str, run_stream: Callable[..., Stream]
) -> None:
    make_web(api_server, namespace)
    stream = run_stream("get", "deployments", "-w", "-o", "custom-columns=N:.name,P:.phase", namespace=namespace)
    assert stream.next_line().split() == ["N", "P"]
    assert stream.next_line().split() == ["web", "Initializing"]
    scale(api_server, namespace, 3)
    assert stream.next_line().split() == ["web", "Initializing"]  # the row again, without the header
    code, _ = stream.interrupt()
    assert code == 0


def test_get_watch_with_all_types_is_a_usage_error(api_server: ApiServer, tmp_path: Path) -> None:
    result = make_wmap(api_server, tmp_path).installed("get", "--all-types", "-w")
    assert result.code == 2
    assert "--watch takes one TYPE" in result.stderr


# --- the API server restarted ---------------------------------------------------------------------------------


def restart_allowed(api_server: ApiServer) -> None:
    if not (api_server.started_here or os.environ.get("WMAP_TEST_ALLOW_RESTART") == "1"):
        pytest.skip("restarts kube-apiserver: only on a server this session started, or WMAP_TEST_ALLOW_RESTART=1")
    if not os.environ.get("WMAP_TEST_CLUSTER_DIR") and not api_server.started_here:
        pytest.skip("WMAP_TEST_CLUSTER_DIR is not set: the server's state directory is unknown")


def restart_api_server(api_server: ApiServer) -> None:
    """Stop kube-apiserver and start it again with the same command line (etcd keeps running); wait until ready."""
    state = Path(os.environ.get("WMAP_TEST_CLUSTER_DIR") or "/tmp/wmap-test-cluster")
    pid_file = state / "kube-apiserver.pid"
    pid = int(pid_file.read_text())
    argv = [part.decode() for part in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if part]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + WAIT
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        stat = Path(f"/proc/{pid}/stat").read_text().split()
        if stat[2] == "Z":
            break
        time.sleep(0.1)
    with (state / "kube-apiserver.log").open("ab") as log:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    pid_file.write_text(str(process.pid))
    while time.monotonic() < deadline:
        try:
            with api_server.client(timeout=2) as kube:
                if kube.get("/readyz").status_code == 200:
                    return
        except Exception:  # not up yet
            pass
        time.sleep(0.3)
    pytest.fail("kube-apiserver did not come back")


def test_the_api_server_restarted_mid_watch(
    api_server: ApiServer, namespace: str, run_stream: Callable[..., Stream]
) -> None:
    restart_allowed(api_server)
    make_web(api_server, namespace)
    stream = run_stream("watch", "deployment/web", "-o", "json", namespace=namespace)
    assert desired(stream.next_json()) == 2
    restart_api_server(api_server)
    scale(api_server, namespace, 6)
    assert desired(stream.next_json(lambda view: desired(view) == 6)) == 6  # the informers came back
    code, stderr = stream.interrupt()
    assert code == 0
    assert "Traceback" not in stderr


def test_a_watch_across_a_410_relists(api_server: ApiServer, namespace: str) -> None:
    """A resourceVersion the server no longer keeps (its watch cache starts anew at a restart, as after etcd
    compaction) is answered 410 (an ERROR event, code 410): the informer LISTs again and carries on."""
    restart_allowed(api_server)
    with api_server.client() as kube:
        path = f"/api/v1/namespaces/{namespace}/configmaps"
        expect(kube.post(path, json={"metadata": {"name": "before"}, "data": {"a": "1"}}), 201)
        old = expect(kube.get(path))["metadata"]["resourceVersion"]
    restart_api_server(api_server)
    with api_server.client() as kube:  # something newer, so the old version is outside the new cache's window
        expect(kube.post(path, json={"metadata": {"name": "after"}, "data": {"a": "2"}}), 201)
    seen: list[str] = []

    async def main() -> AsyncInformer:
        settings = ConnectionSettings(kubeconfig=str(api_server.kubeconfig))
        async with AsyncCluster(settings, cache_dir=None) as cluster:
            resource = WatchedResource(
                path=path, kind="ConfigMap", api_version="v1", resource="configmaps", namespace=namespace
            )
            informer = AsyncInformer(
                cluster.client,
                resource,
                on_change=lambda change: seen.append(f"{change.type} {change.key}"),
                resume_from=old,
                backoff=Backoff(initial=0.1),
            )
            task = asyncio.create_task(informer.run())
            await asyncio.wait_for(informer.synced.wait(), WAIT)
            with api_server.client() as kube:
                expect(kube.post(path, json={"metadata": {"name": "later"}}), 201)
            deadline = time.monotonic() + WAIT
            while f"ADDED {namespace}/later" not in seen and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            task.cancel()
            return informer

    informer = asyncio.run(main())
    assert informer.core.lists == 1  # the 410 made it LIST
    assert informer.core.watches >= 2  # the watch from the old version, then one from the list's
    assert f"ADDED {namespace}/before" in seen
    assert f"ADDED {namespace}/after" in seen
    assert f"ADDED {namespace}/later" in seen  # and the watch after the re-LIST delivers
    assert sorted(informer.store.keys()) == [f"{namespace}/{n}" for n in ("after", "before", "later")]
