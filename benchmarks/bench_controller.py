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
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
import _controller
from _controller import percentile

SAMPLES = 40
NAMES = (
    ("controller pod CREATE-to-linked p50", None, "ms"),
    ("controller pod CREATE-to-linked p99", None, "ms"),
)


def rows() -> list[dict[str, Any]]:
    server = _controller.test_server()
    if server is None:
        note = _controller.NO_SERVER
        return [_common.row(name, None, None, target, unit, note=note) for name, target, unit in NAMES]
    namespace = server.create_namespace("wmap-bench-ctrl")
    template = _controller.install_owners(server, namespace, "jobset-x-k8s-io-jobset-v1alpha2")

    log = Path(tempfile.mkdtemp(prefix="wmap-bench-ctrl-")) / "controller.log"
    command = [sys.executable, "-c", "from workload_map.controller.main import console_main; console_main()"]
    command += ["--kubeconfig", str(server.kubeconfig), "--scheduler", "kai", "--namespaces", namespace]
    command += ["--leader-elect=false", "--enable-webhook=false", "--karta-operator=false"]
    command += ["--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:0"]
    linked: list[float] = []
    added: list[float] = []
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        with server.client(timeout=300) as kube:
            events = _controller.watch_pods(server, namespace)
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
        _common.row(NAMES[1][0], percentile(linked, 0.99), percentile(added, 0.99), None, "ms", note=note),
    ]


if __name__ == "__main__":
    for item in rows():
        print(json.dumps(item))
