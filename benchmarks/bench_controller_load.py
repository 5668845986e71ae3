"""`workload-map-controller` under load, against the real test API server (issue 22; run by hand, not in CI):

* **the pod webhook at 200 pod creations/s**: `BURST` pods of a Deployment's ReplicaSet (the catalog fixture's,
  `schedulerName: kai-scheduler`) are POSTed at 200/s from a thread pool, with the controller's pod webhook
  registered for the namespace (`--webhook-url` on 127.0.0.1, auto certificates). Figure: the POST's latency (the
  API server calls the webhook before it stores the pod); baseline: the same burst into a namespace the webhook's
  namespaceSelector leaves out (the API server does not call it). Every pod of the burst is checked to carry its
  `pod-group-name` at creation.
* **the grouper at 200 pod creations/s** (`--enable-webhook=false`, the patch path): the same burst; the clock
  runs from sending each POST to the watch event that shows the pod's `pod-group-name` annotation (KAI: a
  Deployment's pods need no gang, so each gets a PodGroup of its own, created, then the pod patched). Baseline: the
  pod's own ADDED event on the same watch.
* **memory with 20,000 workloads cached**: `WORKLOADS` Deployments (no pods) are created, then the controller is
  started (`--enable-webhook=false`) and its resident set read from /proc once it is ready and its queue is empty
  (every workload reconciled once). Baseline: the same controller over an empty namespace. Also the time from
  start to that point.

Needs a running test API server (`eval "$(scripts/test-cluster.sh env)"`); without one every row reports
`figure: None` with a note. Run alone: ``python benchmarks/bench_controller_load.py`` (`WMAP_BENCH_WORKLOADS`
sets the workload count; the objects are deleted afterwards).
"""

from __future__ import annotations

import concurrent.futures
import copy
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import _common
import _controller
from _controller import percentile

KAI = "kai-scheduler"  # the pods' schedulerName: the pod webhook and the grouper take KAI's pods
RATE = 200.0  # pod creations per second
BURST = 400  # pods per burst: two seconds at RATE
WORKLOADS = int(os.environ.get("WMAP_BENCH_WORKLOADS", "20000"))
JOBSET = "jobset-x-k8s-io-jobset-v1alpha2"
LAUNCH = "from workload_map.controller.main import console_main; console_main()"
# WMAP_BENCH_PROFILE=FILE: each controller runs under cProfile, its stats written to FILE.<pid> when it stops
PROFILED = (
    "import cProfile, os, sys; from workload_map.controller.main import main; "
    "p = cProfile.Profile(); code = p.runcall(main); p.dump_stats(os.environ['WMAP_BENCH_PROFILE'] "
    "+ '.' + str(os.getpid())); sys.exit(code)"
)
NAMES = (
    ("controller pod webhook at 200 creations/s: POST latency p50", "ms"),
    ("controller pod webhook at 200 creations/s: POST latency p99", "ms"),
    ("controller grouper at 200 creations/s: CREATE-to-linked p50", "ms"),
    ("controller grouper at 200 creations/s: CREATE-to-linked p99", "ms"),
    (f"controller resident memory with {WORKLOADS:,} workloads cached", "MiB"),
    (f"controller start to {WORKLOADS:,} workloads reconciled", "s"),
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of the process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class _Controller:
    def __init__(self, kubeconfig: str, *flags: str) -> None:
        self.metrics = _free_port()
        self.log = Path(tempfile.mkdtemp(prefix="wmap-bench-load-")) / "controller.log"
        launch = PROFILED if os.environ.get("WMAP_BENCH_PROFILE") else LAUNCH
        command = [sys.executable, "-c", launch, "--kubeconfig", kubeconfig, "--leader-elect=false"]
        command += ["--karta-operator=false", "--metrics-bind-address", f"127.0.0.1:{self.metrics}"]
        self.health = _free_port()
        command += ["--health-probe-bind-address", f"127.0.0.1:{self.health}", "--scheduler", "kai", *flags]
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)

    def scrape(self) -> str:
        import httpx

        return httpx.get(f"http://127.0.0.1:{self.metrics}/metrics", timeout=10).text

    def ready(self) -> bool:
        import httpx

        return httpx.get(f"http://127.0.0.1:{self.health}/readyz", timeout=10).status_code == 200

    def reconciled(self) -> int:
        found = re.findall(
            r'workloadmap_controller_reconciles_total\{controller="podgrouper",[^}]*\} (\d+)', self.scrape()
        )
        return sum(int(n) for n in found)

    def queue_depth(self) -> int:
        match = re.search(r'workloadmap_controller_queue_depth\{controller="podgrouper"\} (\d+)', self.scrape())
        return int(match.group(1)) if match else -1

    def wait(self, check: Callable[[], bool], what: str, timeout: float = 900) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the controller exited: {self.log.read_text()[-2000:]}")
            try:
                if check():
                    return
            except (OSError, httpx.HTTPError):  # not listening yet
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{what}: not within {timeout} s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _burst(kube: Any, namespace: str, template: dict[str, Any], prefix: str) -> tuple[list[float], float]:
    """POST `BURST` pods at `RATE`/s; each POST's latency (ms) and the rate achieved."""
    latencies: list[float] = []
    lock = threading.Lock()

    def post(index: int) -> None:
        pod = copy.deepcopy(template)
        pod["metadata"]["name"] = f"{prefix}-{index}"
        sent = time.perf_counter()
        kube.post(f"/api/v1/namespaces/{namespace}/pods", json=pod).raise_for_status()
        with lock:
            latencies.append((time.perf_counter() - sent) * 1000)

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=32) as pool:
        futures = []
        for index in range(BURST):
            delay = started + index / RATE - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            futures.append(pool.submit(post, index))
        for future in futures:
            future.result()
    return latencies, BURST / (time.perf_counter() - started)


def _webhook_rows(server: Any, kubeconfig: str) -> list[dict[str, Any]]:
    webhooked, skipped = server.create_namespace("wmap-bench-hook"), server.create_namespace("wmap-bench-nohook")
    # a JobSet's worker pod: the webhook links a pod of a gang at creation (a Deployment's pods, one group each, are
    # linked by the grouper once named)
    template = _controller.install_owners(server, webhooked, JOBSET, scheduler_name=KAI)
    other = _controller.install_owners(server, skipped, JOBSET, scheduler_name=KAI)
    port = _free_port()
    name = f"wmap-bench-{port}"
    certs = Path(tempfile.mkdtemp(prefix="wmap-bench-certs-"))
    controller = _Controller(
        kubeconfig,
        "--namespaces",
        webhooked,
        "--webhook-port",
        str(port),
        "--webhook-url",
        f"https://127.0.0.1:{port}",
        "--webhook-configuration-name",
        name,
        "--webhook-cert-dir",
        str(certs),
    )
    try:
        with server.client(timeout=60) as kube:
            mutating = f"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/{name}"
            controller.wait(lambda: kube.get(mutating).status_code == 200, "the webhook configurations")
            probe = copy.deepcopy(template)
            probe["metadata"]["name"] = "probe"

            def linked_at_creation() -> bool:
                answer = kube.post(f"/api/v1/namespaces/{webhooked}/pods", json=probe)
                annotations = answer.json()["metadata"].get("annotations") or {}
                kube.delete(f"/api/v1/namespaces/{webhooked}/pods/probe")
                return "pod-group-name" in annotations

            controller.wait(linked_at_creation, "the pod webhook called", timeout=60)
            cpu = _cpu_seconds(controller.process.pid)
            with_hook, rate = _burst(kube, webhooked, template, "hook")
            cpu_ms = (_cpu_seconds(controller.process.pid) - cpu) * 1000 / BURST
            without, base_rate = _burst(kube, skipped, other, "nohook")
            listed = kube.get(f"/api/v1/namespaces/{webhooked}/pods").json()["items"]
            linked = sum(1 for p in listed if "pod-group-name" in (p["metadata"].get("annotations") or {}))
            kube.delete(f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{name}")
            kube.delete(mutating)
            for namespace in (webhooked, skipped):
                kube.delete(f"/api/v1/namespaces/{namespace}/pods")
    finally:
        controller.stop()
    note = (
        f"{BURST} pods POSTed at {rate:.0f}/s (baseline burst {base_rate:.0f}/s, into a namespace the webhook skips); "
        f"{linked} of {BURST} carried pod-group-name at creation; the controller's CPU {cpu_ms:.2f} ms per admission"
    )
    return [
        _common.row(NAMES[0][0], statistics.median(with_hook), statistics.median(without), None, "ms", note=note),
        _common.row(NAMES[1][0], percentile(with_hook, 0.99), percentile(without, 0.99), None, "ms", note=note),
    ]


def _grouper_rows(server: Any, kubeconfig: str) -> list[dict[str, Any]]:
    namespace = server.create_namespace("wmap-bench-group")
    template = _controller.install_owners(server, namespace, "apps-deployment-v1", scheduler_name=KAI)
    controller = _Controller(kubeconfig, "--namespaces", namespace, "--enable-webhook=false")
    sent: dict[str, float] = {}
    try:
        controller.wait(controller.ready, "the controller ready")
        events = _controller.watch_pods(server, namespace)
        time.sleep(1)
        with server.client(timeout=60) as kube:
            lock = threading.Lock()
            original_post = kube.post

            def timed_post(path: str, **kwargs: Any) -> Any:
                name = kwargs["json"]["metadata"]["name"]
                with lock:
                    sent[name] = time.perf_counter()
                return original_post(path, **kwargs)

            kube.post = timed_post  # the clock starts as the request is sent
            _, rate = _burst(kube, namespace, template, "group")
            added: dict[str, float] = {}
            linked: dict[str, float] = {}
            deadline = time.monotonic() + 300
            while len(linked) < BURST and time.monotonic() < deadline:
                at, event = events.get(timeout=300)
                obj = event["object"]
                pod = obj["metadata"]["name"]
                if pod not in sent:
                    continue
                if event["type"] == "ADDED":
                    added.setdefault(pod, at - sent[pod])
                if "pod-group-name" in (obj["metadata"].get("annotations") or {}):
                    linked.setdefault(pod, at - sent[pod])
            kube.delete(f"/api/v1/namespaces/{namespace}/pods")
    finally:
        controller.stop()
    to_link = [v * 1000 for v in linked.values()]
    to_add = [v * 1000 for v in added.values()]
    note = f"{BURST} pods POSTed at {rate:.0f}/s, {len(linked)} linked; each pod its own KAI PodGroup, then a patch"
    return [
        _common.row(NAMES[2][0], statistics.median(to_link), statistics.median(to_add), None, "ms", note=note),
        _common.row(NAMES[3][0], percentile(to_link, 0.99), percentile(to_add, 0.99), None, "ms", note=note),
    ]


def _memory_rows(server: Any, kubeconfig: str) -> list[dict[str, Any]]:
    from tests.e2e.test_live_support import _creatable, fixture_objects

    empty, full = server.create_namespace("wmap-bench-empty"), server.create_namespace("wmap-bench-20k")
    workload = _creatable(fixture_objects("apps-deployment-v1")[0])
    workload.pop("status", None)
    with server.client(timeout=120) as kube:

        def make(index: int) -> None:
            body = copy.deepcopy(workload)
            body["metadata"]["name"] = f"web-{index}"
            body["metadata"]["namespace"] = full
            kube.post(f"/apis/apps/v1/namespaces/{full}/deployments", json=body).raise_for_status()

        with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(make, range(WORKLOADS)))
        try:
            baseline = _Controller(kubeconfig, "--namespaces", empty, "--enable-webhook=false")
            try:
                baseline.wait(
                    lambda: baseline.queue_depth() == 0 and "workloadmap_controller_leader 1" in baseline.scrape(),
                    "the empty controller",
                )
                time.sleep(2)
                base_rss = _rss_mib(baseline.process.pid)
            finally:
                baseline.stop()
            started = time.perf_counter()
            loaded = _Controller(kubeconfig, "--namespaces", full, "--enable-webhook=false")
            try:
                loaded.wait(
                    lambda: loaded.ready() and loaded.reconciled() >= WORKLOADS and loaded.queue_depth() == 0,
                    "every workload reconciled",
                )
                elapsed = time.perf_counter() - started
                rss = _rss_mib(loaded.process.pid)
            finally:
                loaded.stop()
        finally:
            kube.delete(f"/apis/apps/v1/namespaces/{full}/deployments")
    note = (
        f"{WORKLOADS:,} Deployments without pods in one namespace, each reconciled once (resolve, plan, LIST); "
        "baseline: the controller over an empty namespace"
    )
    return [
        _common.row(NAMES[4][0], rss, base_rss, None, "MiB", note=note),
        _common.row(NAMES[5][0], elapsed, None, None, "s", note=note),
    ]


PARTS = {"webhook": _webhook_rows, "grouper": _grouper_rows, "memory": _memory_rows}


def rows(parts: Sequence[str] = tuple(PARTS)) -> list[dict[str, Any]]:
    server = _controller.test_server()
    if server is None:
        return [_common.row(name, None, None, None, unit, note=_controller.NO_SERVER) for name, unit in NAMES]
    return [item for part in parts for item in PARTS[part](server, str(server.kubeconfig))]


if __name__ == "__main__":
    results = rows(sys.argv[1:] or tuple(PARTS))  # `webhook`, `grouper`, `memory`: those parts only
    for item in results:
        print(json.dumps(item))
