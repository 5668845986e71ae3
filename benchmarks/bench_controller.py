"""`workload-map-controller` against the real test API server: how long after a pod's CREATE the pod grouper has
linked it to its KAI PodGroup (issue 22), with the webhook off (the patch path; with the pod webhook a pod is
linked at creation).

Needs a running test API server (`scripts/test-cluster.sh start`, or `WMAP_TEST_KUBECONFIG` set); without one every
row reports `figure: None` with a note. The set-up creates one namespace with the JobSet fixture and its Jobs, and
starts the controller (`--scheduler kai --namespaces NS --leader-elect=false --enable-webhook=false`). Then
`SAMPLES` times a worker pod is created (named anew, the fixture's labels and owner), and the clock runs from
sending the POST to the watch event that shows its `pod-group-name` annotation; the pod is then deleted. The baseline
is the same pod's ADDED event on the same watch: what the API server itself takes to deliver the event.

Rows: CREATE-to-linked p50 and p99. Run alone: ``python benchmarks/bench_controller.py``.
"""

from __future__ import annotations

import copy
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import _common
from _common import REPO

SAMPLES = 40
NAMES = (
    ("controller pod CREATE-to-linked p50", None, "ms"),
    ("controller pod CREATE-to-linked p99", None, "ms"),
)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def rows() -> list[dict[str, Any]]:
    kubeconfig = os.environ.get("WMAP_TEST_KUBECONFIG")
    if not kubeconfig or not Path(kubeconfig).is_file():
        note = 'no test API server (eval "$(scripts/test-cluster.sh env)")'
        return [_common.row(name, None, None, target, unit, note=note) for name, target, unit in NAMES]
    sys.path.insert(0, str(REPO))
    from tests.e2e.conftest import _server_from_env
    from tests.e2e.test_live_support import _creatable, create, fixture_objects

    env = {k: v for k, v in os.environ.items() if k.startswith("WMAP_TEST_")}
    server = _server_from_env(env, started_here=False)
    namespace = server.create_namespace("wmap-bench-ctrl")
    workload, owners, pods = fixture_objects("jobset-x-k8s-io-jobset-v1alpha2")
    uids = {workload["metadata"]["uid"]: create(server, _creatable(workload), namespace=namespace)["metadata"]["uid"]}
    for owner in owners:
        body = _creatable(owner)
        body.pop("status", None)
        for ref in body["metadata"].get("ownerReferences") or []:
            ref["uid"] = uids[ref["uid"]]
        uids[owner["metadata"]["uid"]] = create(server, body, namespace=namespace)["metadata"]["uid"]
    template = _creatable(next(p for p in pods if "workers-0-0" in p["metadata"]["name"]))
    template.pop("status", None)
    template["spec"].pop("nodeName", None)
    template["metadata"]["namespace"] = namespace
    for ref in template["metadata"]["ownerReferences"]:
        ref["uid"] = uids[ref["uid"]]

    log = Path(tempfile.mkdtemp(prefix="wmap-bench-ctrl-")) / "controller.log"
    command = [sys.executable, "-c", "from workload_map.controller.main import console_main; console_main()"]
    command += ["--kubeconfig", kubeconfig, "--scheduler", "kai", "--namespaces", namespace]
    command += ["--leader-elect=false", "--enable-webhook=false", "--karta-operator=false"]
    command += ["--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:0"]
    events: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
    linked: list[float] = []
    added: list[float] = []
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        with server.client(timeout=300) as kube:

            def watch() -> None:
                with (
                    server.client(timeout=None) as watcher,
                    watcher.stream("GET", f"/api/v1/namespaces/{namespace}/pods", params={"watch": "true"}) as stream,
                ):
                    for line in stream.iter_lines():
                        if line:
                            events.put((time.perf_counter(), json.loads(line)))

            threading.Thread(target=watch, daemon=True).start()
            time.sleep(3)  # the controller lists, then waits for changes
            for index in range(SAMPLES):
                pod = copy.deepcopy(template)
                pod["metadata"]["name"] = f"bench-{index}"
                sent = time.perf_counter()
                response = kube.post(f"/api/v1/namespaces/{namespace}/pods", json=pod)
                response.raise_for_status()
                seen_added = False
                while True:
                    at, event = events.get(timeout=60)
                    obj = event["object"]
                    if obj["metadata"]["name"] != pod["metadata"]["name"]:
                        continue
                    if event["type"] == "ADDED" and not seen_added:
                        added.append((at - sent) * 1000)
                        seen_added = True
                    if "pod-group-name" in (obj["metadata"].get("annotations") or {}):
                        linked.append((at - sent) * 1000)
                        break
                kube.delete(f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}")
    finally:
        process.terminate()
        process.wait(timeout=30)
    note = f"{SAMPLES} pods of a JobSet's worker Job, one at a time; baseline: the pod's ADDED event on the same watch"
    return [
        _common.row(NAMES[0][0], statistics.median(linked), statistics.median(added), None, "ms", note=note),
        _common.row(NAMES[1][0], _percentile(linked, 0.99), _percentile(added, 0.99), None, "ms", note=note),
    ]


if __name__ == "__main__":
    for item in rows():
        print(json.dumps(item))
