"""`wmap watch` against the real test API server: how long after a change its new view is printed (issue 21).

Needs a running test API server (`scripts/test-cluster.sh start`, or `WMAP_TEST_KUBECONFIG` set); without one every
row reports `figure: None` with a note. The set-up creates one namespace with a Deployment, its ReplicaSet and 100
pods. Then `CHANGES` times: the Deployment's replicas are patched, and the clock runs from sending the PATCH to
the new view's line on `wmap watch -o json`'s stdout (the informers' events, the index, the recomputed resolution,
attribution and view, the JSON). The baseline is the same change seen by a bare watch of the collection (httpx,
`json.loads` per line) in the same run: what the API server itself takes to deliver the event.

Rows: event-to-output p50 and p99 (target from issue 21: p99 <= 100 ms).
Run alone: ``python benchmarks/bench_watch.py``.
"""

from __future__ import annotations

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

PODS = 100
CHANGES = 40
NAMES = (
    ("watch event-to-output p50", None, "ms"),
    ("watch event-to-output p99", 100, "ms"),
)


def _env() -> dict[str, str] | None:
    if os.environ.get("WMAP_TEST_KUBECONFIG") and Path(os.environ["WMAP_TEST_KUBECONFIG"]).is_file():
        return {k: v for k, v in os.environ.items() if k.startswith("WMAP_TEST_")}
    return None


def _lines(stream: Any, out: queue.Queue[tuple[float, str]]) -> None:
    for line in stream:
        out.put((time.perf_counter(), line if isinstance(line, str) else line.decode()))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def rows() -> list[dict[str, Any]]:
    env = _env()
    if env is None:
        note = 'no test API server (eval "$(scripts/test-cluster.sh env)")'
        return [_common.row(name, None, None, target, unit, note=note) for name, target, unit in NAMES]
    sys.path.insert(0, str(REPO))
    from tests.e2e.conftest import _server_from_env
    from tests.e2e.test_live_support import create, create_pod, deployment_body, replicaset_body

    server = _server_from_env(env, started_here=False)
    namespace = server.create_namespace("wmap-bench-watch")
    web = create(server, deployment_body("web", replicas=PODS), namespace=namespace)
    rs = create(server, replicaset_body(web, "5d8f9"), namespace=namespace)
    labels = rs["spec"]["template"]["metadata"]["labels"]
    for index in range(PODS):
        create_pod(server, namespace, f"web-5d8f9-{index}", owner=rs, labels=labels)
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments/web"
    merge = {"Content-Type": "application/merge-patch+json"}

    home = Path(tempfile.mkdtemp(prefix="wmap-bench-watch-"))
    command = [_common.wmap_executable(), "watch", "deployment/web", "-o", "json", "-n", namespace]
    command += ["--kubeconfig", env["WMAP_TEST_KUBECONFIG"]]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "HOME": str(home), "WMAP_CACHE_DIR": str(home / "cache")},
    )
    seen: queue.Queue[tuple[float, str]] = queue.Queue()
    threading.Thread(target=_lines, args=(process.stdout, seen), daemon=True).start()
    watched: list[float] = []
    bare: list[float] = []
    try:
        seen.get(timeout=60)  # the first view
        with server.client() as kube, server.client(timeout=120) as watcher:
            version = kube.get(path).json()["metadata"]["resourceVersion"]
            raw: queue.Queue[tuple[float, str]] = queue.Queue()

            def bare_watch() -> None:
                params = {"watch": "true", "resourceVersion": version, "fieldSelector": "metadata.name=web"}
                with watcher.stream("GET", path.rsplit("/", 1)[0], params=params) as response:
                    for line in response.iter_lines():
                        json.loads(line)
                        raw.put((time.perf_counter(), line))

            threading.Thread(target=bare_watch, daemon=True).start()
            time.sleep(0.5)
            for change in range(CHANGES):
                replicas = PODS + 1 + change % 2  # alternate, so every patch is a change
                sent = time.perf_counter()
                kube.patch(path, json={"spec": {"replicas": replicas}}, headers=merge).raise_for_status()
                while True:
                    at, line = seen.get(timeout=30)
                    if json.loads(line)["components"][0]["replicas"]["desired"] == replicas:
                        watched.append((at - sent) * 1000)
                        break
                at, _ = raw.get(timeout=30)
                bare.append((at - sent) * 1000)
                time.sleep(0.05)
    finally:
        process.terminate()
        process.wait(timeout=30)
    note = f"{CHANGES} changes of a Deployment with {PODS} pods; baseline: a bare watch of the same object"
    return [
        _common.row(NAMES[0][0], statistics.median(watched), statistics.median(bare), None, "ms", note=note),
        _common.row(NAMES[1][0], _percentile(watched, 0.99), _percentile(bare, 0.99), 100, "ms", note=note),
    ]


if __name__ == "__main__":
    for item in rows():
        print(json.dumps(item))
