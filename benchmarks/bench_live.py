"""The live cluster commands against the real test API server, as ratios to baselines measured in the same run.

Needs a running test API server (`scripts/test-cluster.sh start`, or `WMAP_TEST_KUBECONFIG` set); without one every
row reports `figure: None` with a note. The set-up creates one namespace with a PyTorchJob and 1,000 of its pods
(about half a minute; namespaces are never deleted on the test server, so each run adds one).

Rows:
* **discovery requests / time**: our aggregated discovery (`/api` + `/apis`, 2 requests) against the per-group
  discovery older servers need (`/api`, `/apis`, then every group version; run 6 at a time), same server, same run.
* **describe 1,000 pods**: `Cluster.fetch_workload` + `build_view` for the PyTorchJob (GET, 2 pod pages, the
  owner walk, attribution, the roll-up) against the bare HTTP requests of the same reads decoded by `json.loads`:
  what wmap adds on top of the I/O it cannot avoid.
* **describe requests per pod**: requests of that describe over the pod count (a design reading per pod is 1).
* **get 1,000 objects**: `wmap get pods` logic (one paged LIST, each pod resolved through the Pod definition)
  against the bare LIST decoded by `json.loads`.
* **wmap get (executable)**: the installed `wmap get pytorchjobs` with a warm discovery cache against
  `python -c pass` (start-up and imports dominate).

Run alone: ``python benchmarks/bench_live.py``.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import _common
from _common import REPO, python_pass

PODS = 1000
REPEAT = 5


def _env() -> dict[str, str] | None:
    if os.environ.get("WMAP_TEST_KUBECONFIG") and Path(os.environ["WMAP_TEST_KUBECONFIG"]).is_file():
        return {k: v for k, v in os.environ.items() if k.startswith("WMAP_TEST_")}
    script = REPO / "scripts" / "test-cluster.sh"
    if subprocess.run(["bash", str(script), "status"], capture_output=True, check=False).returncode != 0:
        return None
    out = subprocess.run(["bash", str(script), "env"], capture_output=True, text=True, check=False).stdout
    env = {}
    for line in out.splitlines():
        if line.startswith("export ") and "=" in line:
            key, value = line[len("export ") :].split("=", 1)
            env[key] = value.strip("'\"")
    return env if env.get("WMAP_TEST_KUBECONFIG") else None


def _median(fn: Callable[[], Any], repeat: int = REPEAT) -> float:
    return _common.median(fn, repeat=repeat)


def _row(
    name: str, figure: float | None, baseline: float | None, target: float | None, unit: str, note: str = ""
) -> dict[str, Any]:
    return _common.row(name, figure, baseline, target, unit, digits=None, ratio_digits=None, note=note)


def _list_pods(raw: Any, namespace: str) -> None:
    """The namespace's pods, LIST in pages of 500, each page decoded by `json.loads`."""
    token = None
    while True:
        params = {"limit": "500", **({"continue": token} if token else {})}
        page = json.loads(raw.get(f"/api/v1/namespaces/{namespace}/pods", params=params).content)
        token = page["metadata"].get("continue")
        if not token:
            break


NAMES = [
    ("live: discovery requests, aggregated / per-group", 0.1, "requests"),
    ("live: discovery time, aggregated / per-group", 1.0, "s"),
    ("live: describe 1,000 pods, wmap / bare HTTP + json.loads", 3.0, "s"),
    ("live: describe requests per pod (1,000 pods)", 0.01, "requests"),
    ("live: get 1,000 pods, wmap / bare LIST + json.loads", 5.0, "s"),
    ("live: wmap get TYPE (executable, warm cache) / python -c pass", None, "s"),
]


def _set_up(server: Any, env: dict[str, str]) -> tuple[str, dict[str, Any]]:
    namespace = f"bench-live-{uuid.uuid4().hex[:8]}"
    with server.client() as kube:
        kube.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        job = kube.post(
            f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs",
            json={
                "apiVersion": "kubeflow.org/v1",
                "kind": "PyTorchJob",
                "metadata": {"name": "big"},
                "spec": {
                    "pytorchReplicaSpecs": {
                        "Worker": {
                            "replicas": PODS,
                            "template": {"spec": {"containers": [{"name": "pytorch", "image": "t"}]}},
                        }
                    }
                },
            },
        ).json()
    ref = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "name": "big",
        "uid": job["metadata"]["uid"],
        "controller": True,
    }

    def make(batch: range) -> None:
        with server.client() as kube:
            for index in batch:
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"big-worker-{index}",
                        "labels": {"training.kubeflow.org/replica-type": "worker"},
                        "ownerReferences": [ref],
                    },
                    "spec": {
                        "nodeName": f"node-{index % 50}",
                        "containers": [
                            {"name": "pytorch", "image": "t", "resources": {"limits": {"nvidia.com/gpu": "8"}}}
                        ],
                    },
                }
                kube.post(f"/api/v1/namespaces/{namespace}/pods", json=pod)
                kube.patch(
                    f"/api/v1/namespaces/{namespace}/pods/big-worker-{index}/status",
                    json={"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
                    headers={"Content-Type": "application/merge-patch+json"},
                )

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(make, [range(i, min(i + 50, PODS)) for i in range(0, PODS, 50)]))
    return namespace, job


def rows() -> list[dict[str, Any]]:
    env = _env()
    if env is None:
        note = "no test API server running (scripts/test-cluster.sh start)"
        return [_row(name, None, None, target, unit, note) for name, target, unit in NAMES]
    sys.path.insert(0, str(REPO))
    from tests.e2e.conftest import _server_from_env

    from workload_map.catalog import builtin_registry
    from workload_map.cli.commands.get import make_rows
    from workload_map.cluster import Cluster, ConnectionSettings
    from workload_map.cluster.discovery import _fetch_legacy, fetch
    from workload_map.pods import attribute
    from workload_map.view import build_view

    server = _server_from_env(env, started_here=False)
    namespace, _ = _set_up(server, env)
    cache = Path(tempfile.mkdtemp(prefix="wmap-bench-live-"))
    settings = ConnectionSettings(kubeconfig=env["WMAP_TEST_KUBECONFIG"], namespace=namespace)
    out: list[dict[str, Any]] = []
    with Cluster(settings, cache_dir=cache) as cluster:
        client = cluster.client
        # Discovery: requests and time.
        before = len(client.requests)
        fetch(client)
        aggregated_requests = len(client.requests) - before
        before = len(client.requests)
        core, groups = client.get("/api"), client.get("/apis")
        _fetch_legacy(client, core, groups)
        legacy_requests = len(client.requests) - before
        out.append(_row(NAMES[0][0], aggregated_requests, legacy_requests, NAMES[0][1], NAMES[0][2]))
        aggregated = _median(lambda: fetch(client))
        legacy = _median(lambda: _fetch_legacy(client, client.get("/api"), client.get("/apis")))
        out.append(_row(NAMES[1][0], aggregated, legacy, NAMES[1][1], NAMES[1][2]))

        # describe of the 1,000-pod PyTorchJob.
        registry = builtin_registry()
        rtype = cluster.resolve_type("pytorchjob", registry)
        before = len(client.requests)

        def describe() -> Any:
            live = cluster.fetch_workload(rtype, "big", namespace=namespace)
            resolution = live.workload().resolve()
            return build_view(resolution, attribute(resolution, live.pods, live.owners), origin=live.origin)

        view = describe()
        requests = len(client.requests) - before
        assert view.replicas.current == PODS, view.replicas
        wmap_time = _median(describe)

        raw = server.client()

        def bare() -> None:
            json.loads(raw.get(f"/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs/big").content)
            _list_pods(raw, namespace)

        bare_time = _median(bare)
        out.append(_row(NAMES[2][0], wmap_time, bare_time, NAMES[2][1], NAMES[2][2]))
        out.append(_row(NAMES[3][0], requests / PODS, 1.0, NAMES[3][1], NAMES[3][2], f"{requests} requests"))

        # get of 1,000 pods.
        pods_type = cluster.resolve_type("pods", registry)

        def get_pods() -> Any:
            listed = cluster.list_objects(pods_type, namespace=namespace)
            return make_rows(listed.items, pods_type.definition, "Pod", wide=False)

        found, _ = get_pods()
        assert len(found) == PODS
        get_time = _median(get_pods)

        bare_list = functools.partial(_list_pods, raw, namespace)
        out.append(_row(NAMES[4][0], get_time, _median(bare_list), NAMES[4][1], NAMES[4][2]))
        raw.close()

    # The executable, warm cache.
    run_env = {**os.environ, "WMAP_CACHE_DIR": str(cache), "KUBECONFIG": env["WMAP_TEST_KUBECONFIG"]}
    wmap = str(Path(sys.executable).parent / "wmap")
    command = [wmap, "get", "pytorchjobs", "-n", namespace]
    subprocess.run(command, env=run_env, capture_output=True, check=True)
    exe = _median(lambda: subprocess.run(command, env=run_env, capture_output=True, check=True), 3)
    start_up = _median(lambda: subprocess.run(python_pass(), check=True), 3)
    out.append(_row(NAMES[5][0], exe, start_up, NAMES[5][1], NAMES[5][2]))
    return out


if __name__ == "__main__":
    for row in rows():
        print(json.dumps(row))
