"""The live commands at a real cluster's scale, on the test API server, side by side with upstream's `kli` (issue 21).

Needs a running test API server (`eval "$(scripts/test-cluster.sh env)"`) with the test CRDs applied (the e2e
fixture applies them; `python benchmarks/bench_live_scale.py --set-up` does too); kli (`KLI=../shared/tools/kli`)
for its side. The data sets are made once and reused (`live_data.py`: concurrent creates, namespaces named by size):
0, 2,000 and 20,000 Deployments; a PyTorchJob with 0, 1,000 and 10,000 Running pods; for the watch, a Deployment with
a ReplicaSet and 100 pods. Creating all of them takes about two minutes the first time.

Each command is a fresh process (HOME in a temporary directory, wmap's discovery cache warmed by one untimed run,
as kli's is), measured from `wait4`: wall time, client CPU (user + sys), peak RSS; and the requests it sent, counted
in the API server's audit log by user agent (`wmap/...`, `kli/...`). Medians of `ROUNDS` interleaved rounds.

* `get deployments` and `get --all-types` of 0 / 2,000 / 20,000 workloads (kli has no `--all-types`: its row is
  `kli get deployments`), and `describe pytorchjob/big` with 0 / 1,000 / 10,000 pods;
* linear growth: for each command, the cost per workload (or pod) at the large size over the cost at the small one,
  each over the empty set's run (1 = linear; fixed costs such as start-up are taken out by the empty run);
* a watch (`wmap watch deployment/web -o json`) receiving `RATE` changes/s for `SECONDS` s (pod readiness flips and
  replica changes, paced): documents printed, the last change seen, client CPU per change, RSS after 10 s and at the
  end (flat: memory does not grow with the changes), requests (flat: no request per change);
* the informer cache (`LiveWatch`: store and index of the Deployments of a namespace, their pods watched too), in a
  child process: RSS growth per cached workload against the size of the workload's JSON as the server sends it
  (target <= 3x), at 2,000 and 20,000.

Environment: `WMAP_BENCH_LIVE_SIZES=2000,20000` (workloads), `WMAP_BENCH_LIVE_PODS=1000,10000`,
`WMAP_BENCH_LIVE_WATCH=100x60` (rate x seconds), `WMAP_BENCH_LIVE_ROUNDS=3`.
Run alone: ``KLI=../shared/tools/kli python benchmarks/bench_live_scale.py`` (about 10 minutes).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import live_data
from _common import REPO, row, wmap_executable

ROUNDS = int(os.environ.get("WMAP_BENCH_LIVE_ROUNDS", "3"))
WATCH_PODS = 100


def _sizes(name: str, default: str) -> list[int]:
    return [int(part) for part in os.environ.get(name, default).split(",") if part.strip()]


# --- one run of a command -----------------------------------------------------------------------------------------


@dataclass
class Sample:
    """One run of a command: wall and CPU seconds, peak RSS (KiB), requests sent, what it printed."""

    wall: float
    cpu: float
    rss_kib: int
    requests: int | None
    stdout: str = field(repr=False)


def _requests(server: Any, mark: int, agent: str) -> int | None:
    if server.audit_log is None:
        return None
    events = server.audit_events(mark, predicate=lambda e: str(e.get("userAgent", "")).startswith(agent))
    return len(events)


GNU_TIME = "/usr/bin/time"
"""Peak RSS is read from GNU time's `%M`: `wait4`'s `ru_maxrss` of a child starts at this (large) process's RSS,
which the child inherits at fork, so it cannot tell a small child's peak. (wait4's CPU includes the grandchild.)"""


def run_command(command: Sequence[str], env: dict[str, str], server: Any = None, agent: str = "") -> Sample:
    """Run `command` to its end; with `server`, count its requests (audit events whose user agent starts with
    `agent`; nothing else may be talking to the server under that agent meanwhile)."""
    mark = server.audit_mark() if server is not None else 0
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as peak:
        timed = [GNU_TIME, "-f", "%M", "-o", peak.name, *command] if Path(GNU_TIME).exists() else list(command)
        began = time.perf_counter()
        process = subprocess.Popen(timed, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - began
        process.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace")
        errors = err.read().decode(errors="replace")
        reported = peak.read().strip().splitlines()
    if code != 0:
        raise RuntimeError(f"{' '.join(command)} exited {code}: {errors.strip()[:300]}")
    rss = int(reported[-1]) if reported and reported[-1].isdigit() else usage.ru_maxrss
    requests = _requests(server, mark, agent) if server is not None else None
    return Sample(wall, usage.ru_utime + usage.ru_stime, rss, requests, text)


@dataclass
class Compared:
    """Medians of interleaved rounds of wmap and kli (kli None: not available); requests from the first round."""

    wmap: Sample
    kli: Sample | None


def _median_sample(samples: list[Sample]) -> Sample:
    return Sample(
        statistics.median(s.wall for s in samples),
        statistics.median(s.cpu for s in samples),
        max(s.rss_kib for s in samples),
        samples[0].requests,
        samples[0].stdout,
    )


def compare(
    ours: Sequence[str], theirs: Sequence[str] | None, env: dict[str, str], server: Any, rounds: int = ROUNDS
) -> Compared:
    run_command(ours, env)  # warms wmap's discovery cache (kli keeps one too)
    if theirs is not None:
        run_command(theirs, env)
    mine: list[Sample] = []
    kli: list[Sample] = []
    for index in range(rounds):
        counted = index == 0
        mine.append(run_command(ours, env, server if counted else None, "wmap/"))
        if theirs is not None:
            kli.append(run_command(theirs, env, server if counted else None, "kli/"))
    return Compared(_median_sample(mine), _median_sample(kli) if kli else None)


# --- the environment ----------------------------------------------------------------------------------------------


def server_from_env() -> Any:
    """The test API server named by `WMAP_TEST_*` (None when there is none)."""
    kubeconfig = os.environ.get("WMAP_TEST_KUBECONFIG")
    if not kubeconfig or not Path(kubeconfig).is_file():
        return None
    sys.path.insert(0, str(REPO))
    from tests.e2e.conftest import _server_from_env

    env = {k: v for k, v in os.environ.items() if k.startswith("WMAP_TEST_")}
    return _server_from_env(env, started_here=False)


def tool_env(server: Any, home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WMAP_OUTPUT", "WMAP_CONFIG", "WMAP_CACHE_DIR")}
    env.update(KUBECONFIG=str(server.kubeconfig), HOME=home, XDG_CONFIG_HOME=str(Path(home) / ".config"))
    env.pop("XDG_CACHE_HOME", None)
    return env


def set_up(server: Any, workloads: list[int], pods: list[int]) -> None:
    from tests.e2e.conftest import TEST_CRD_DIR

    for path in sorted(TEST_CRD_DIR.glob("*.yaml")):
        server.apply_crd_file(path)
    with server.client(timeout=120) as kube:
        for count in [0, *workloads]:
            live_data.ensure_deployments(kube, deployments_namespace(count), count)
        for count in [0, *pods]:
            live_data.ensure_pytorchjob(kube, pods_namespace(count), "big", count)


def deployments_namespace(count: int) -> str:
    return f"bench-scale-deploy-{count}"


def pods_namespace(count: int) -> str:
    return f"bench-scale-pods-{count}"


# --- rows ---------------------------------------------------------------------------------------------------------


def _rows_of(label: str, result: Compared, unit_items: int) -> list[dict[str, Any]]:
    kli = result.kli
    note = f"lines printed: wmap {len(result.wmap.stdout.splitlines())}"
    if kli is not None:
        note += f", kli {len(kli.stdout.splitlines())}"
    base = (lambda value: value) if kli is not None else (lambda value: None)
    return [
        row(
            f"{label}: wall (vs kli)",
            result.wmap.wall * 1e3,
            base(kli.wall * 1e3 if kli else 0),
            None,
            "ms",
            digits=1,
            note=note,
        ),
        row(
            f"{label}: client CPU, user + sys (vs kli)",
            result.wmap.cpu * 1e3,
            base(kli.cpu * 1e3 if kli else 0),
            None,
            "ms",
            digits=1,
        ),
        row(
            f"{label}: peak RSS (vs kli)",
            result.wmap.rss_kib / 1024,
            base(kli.rss_kib / 1024 if kli else 0),
            None,
            "MiB",
            digits=1,
        ),
        row(
            f"{label}: requests (vs kli)",
            result.wmap.requests,
            base(kli.requests if kli else 0),
            None,
            "requests",
            digits=0,
            note=f"{unit_items:,} items",
        ),
    ]


def _linear(label: str, results: dict[int, Compared], unit: str) -> list[dict[str, Any]]:
    """Per-item cost at the largest size against the cost at the smallest non-empty one, each over the empty run
    (wall and CPU in microseconds, RSS in KiB, per item; the ratio is 1 when growth is linear)."""
    sizes = sorted(size for size in results if size > 0)
    if 0 not in results or len(sizes) < 2:
        return []
    small, large = sizes[0], sizes[-1]
    metrics: tuple[tuple[str, str, Callable[[Sample], float]], ...] = (
        ("wall", "us", lambda s: s.wall * 1e6),
        ("CPU", "us", lambda s: s.cpu * 1e6),
        ("RSS", "KiB", lambda s: float(s.rss_kib)),
    )
    out = []
    for metric, unit_name, get in metrics:
        for tool in ("wmap", "kli"):
            picked = [getattr(results[size], tool) for size in (0, small, large)]
            if any(sample is None for sample in picked):
                continue
            empty, lo, hi = picked
            out.append(
                row(
                    f"{label} ({tool}): {metric} per {unit} at {large:,} (vs at {small:,}; linear = 1)",
                    (get(hi) - get(empty)) / large,
                    (get(lo) - get(empty)) / small,
                    None,
                    f"{unit_name}/{unit}",
                    digits=2,
                )
            )
    return out


def measure_get(
    server: Any, env: dict[str, str], kli: str | None, sizes: list[int], rounds: int = ROUNDS
) -> tuple[dict[int, Compared], dict[int, Compared]]:
    """`get deployments` and `get --all-types` (kli: `get deployments`) for the empty namespace and each size."""
    wmap = wmap_executable()
    plain: dict[int, Compared] = {}
    every: dict[int, Compared] = {}
    for count in [0, *sizes]:
        namespace = deployments_namespace(count)
        theirs = [kli, "get", "deployments", "-n", namespace] if kli else None
        plain[count] = compare([wmap, "get", "deployments", "-n", namespace], theirs, env, server, rounds)
        every[count] = compare([wmap, "get", "--all-types", "-n", namespace], theirs, env, server, rounds)
    return plain, every


def get_rows(server: Any, env: dict[str, str], kli: str | None, sizes: list[int]) -> list[dict[str, Any]]:
    plain, every = measure_get(server, env, kli, sizes)
    out: list[dict[str, Any]] = []
    for count in plain:
        out += _rows_of(f"get deployments, {count:,} workloads", plain[count], count)
        out += _rows_of(f"get --all-types, {count:,} workloads (kli: get deployments)", every[count], count)
    return out + _linear("get deployments", plain, "workload") + _linear("get --all-types", every, "workload")


def measure_describe(
    server: Any, env: dict[str, str], kli: str | None, sizes: list[int], rounds: int = ROUNDS
) -> dict[int, Compared]:
    """`describe pytorchjob/big` of the job with no pods and with each number of pods."""
    wmap = wmap_executable()
    results: dict[int, Compared] = {}
    for count in [0, *sizes]:
        namespace = pods_namespace(count)
        theirs = [kli, "describe", "pytorchjob/big", "-n", namespace] if kli else None
        results[count] = compare([wmap, "describe", "pytorchjob/big", "-n", namespace], theirs, env, server, rounds)
    return results


def describe_rows(server: Any, env: dict[str, str], kli: str | None, sizes: list[int]) -> list[dict[str, Any]]:
    results = measure_describe(server, env, kli, sizes)
    out: list[dict[str, Any]] = []
    for count, result in results.items():
        out += _rows_of(f"describe pytorchjob, {count:,} pods", result, count)
    return out + _linear("describe pytorchjob", results, "pod")


# --- the watch ----------------------------------------------------------------------------------------------------


@dataclass
class WatchRun:
    """What one paced watch run saw."""

    changes: int
    documents: int
    last_seen: bool
    lag_ms: float | None
    cpu: float
    rss_early_kib: int
    rss_end_kib: int
    peak_kib: int
    requests: int | None
    seconds: float


def _rss_kib(pid: int, field: str = "VmRSS") -> int:
    """A process's resident set now (`VmRSS`) or at its peak (`VmHWM`, which, unlike `ru_maxrss`, starts afresh
    at exec), in KiB; 0 when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        return 0
    return 0


def watch_set_up(server: Any, namespace: str, pods: int) -> list[str]:
    """A Deployment `web` with a ReplicaSet and `pods` pods in `namespace` (made when missing); the pod names."""
    from tests.e2e.test_live_support import create_pod, deployment_body, replicaset_body

    with server.client() as kube:
        live_data.ensure_namespace(kube, namespace)
        found = kube.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/web")
    names = [f"web-5d8f9-{index}" for index in range(pods)]
    if found.status_code == 200:
        return names
    from tests.e2e.test_live_support import create

    web = create(server, deployment_body("web", replicas=pods), namespace=namespace)
    rs = create(server, replicaset_body(web, "5d8f9"), namespace=namespace)
    labels = rs["spec"]["template"]["metadata"]["labels"]
    live_data.concurrently(lambda i: create_pod(server, namespace, names[i], owner=rs, labels=labels), range(pods))
    return names


def paced_watch(
    server: Any, env: dict[str, str], namespace: str, pods: list[str], rate: int, seconds: float
) -> WatchRun:
    """`wmap watch deployment/web -o json` while `rate` changes a second are made for `seconds`: nine in ten flip a
    pod's readiness, one in ten changes the Deployment's replicas. The last change is a replicas value no earlier
    change had, so whether the watch caught up at the end can be told from its last document."""
    command = [wmap_executable(), "watch", "deployment/web", "-o", "json", "-n", namespace]
    mark = server.audit_mark()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    lines: queue.Queue[tuple[float, str]] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put((time.perf_counter(), line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    lines.get(timeout=120)  # the first view
    deployment = f"/apis/apps/v1/namespaces/{namespace}/deployments/web"
    pod_path = f"/api/v1/namespaces/{namespace}/pods"
    total = int(rate * seconds)
    final_replicas = len(pods) + 7
    ticks: queue.Queue[int | None] = queue.Queue(maxsize=rate)

    def change(kube: Any, index: int) -> None:
        if index == total - 1:
            body: Any = {"spec": {"replicas": final_replicas}}
            answer = kube.patch(deployment, json=body, headers=live_data.MERGE)
        elif index % 10 == 0:
            body = {"spec": {"replicas": len(pods) + (index // 10) % 2}}
            answer = kube.patch(deployment, json=body, headers=live_data.MERGE)
        else:
            ready = "True" if (index // len(pods)) % 2 else "False"
            body = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": ready}]}}
            answer = kube.patch(f"{pod_path}/{pods[index % len(pods)]}/status", json=body, headers=live_data.MERGE)
        answer.raise_for_status()

    def worker() -> None:
        with server.client() as kube:
            while (index := ticks.get()) is not None:
                change(kube, index)

    workers = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
    for thread in workers:
        thread.start()
    began = time.perf_counter()
    rss_early = 0
    last_sent = began
    for index in range(total):
        due = began + index / rate
        now = time.perf_counter()
        if due > now:
            time.sleep(due - now)
        if not rss_early and now - began >= 10:
            rss_early = _rss_kib(process.pid)
        ticks.put(index)
        last_sent = time.perf_counter()
    for _ in workers:
        ticks.put(None)
    for thread in workers:
        thread.join()
    elapsed = time.perf_counter() - began
    documents = 0
    lag: float | None = None
    last_seen = False
    deadline = time.perf_counter() + 30
    while time.perf_counter() < deadline:
        try:
            at, line = lines.get(timeout=max(0.1, deadline - time.perf_counter()))
        except queue.Empty:
            break
        documents += 1
        view = json.loads(line)
        if view["components"][0]["replicas"]["desired"] == final_replicas:
            last_seen, lag = True, (at - last_sent) * 1e3
            break
    documents += lines.qsize()
    rss_end = _rss_kib(process.pid)
    peak = _rss_kib(process.pid, "VmHWM")
    process.terminate()
    _, _, usage = os.wait4(process.pid, 0)
    reader.join(timeout=10)
    documents += lines.qsize()
    requests = _requests(server, mark, "wmap/")
    return WatchRun(
        total,
        documents,
        last_seen,
        lag,
        usage.ru_utime + usage.ru_stime,
        rss_early,
        rss_end,
        peak,
        requests,
        elapsed,
    )


def watch_rows(server: Any, env: dict[str, str], rate: int, seconds: float) -> list[dict[str, Any]]:
    namespace = "bench-scale-watch"
    pods = watch_set_up(server, namespace, WATCH_PODS)
    run_command([wmap_executable(), "get", "deployments", "-n", namespace], env)  # warms the discovery cache
    run = paced_watch(server, env, namespace, pods, rate, seconds)
    label = f"watch, {rate} changes/s for {seconds:g} s ({WATCH_PODS} pods)"
    note = f"{run.changes} changes sent in {run.seconds:.1f} s; last change seen: {run.last_seen}"
    return [
        row(
            f"{label}: documents printed (vs changes sent)",
            run.documents,
            run.changes,
            None,
            "documents",
            digits=0,
            note=note,
        ),
        row(f"{label}: last change to its document", run.lag_ms, None, None, "ms", digits=1, note=note),
        row(f"{label}: client CPU per change", run.cpu / run.changes * 1e3, None, None, "ms", digits=3),
        row(
            f"{label}: RSS at the end (vs after 10 s)",
            run.rss_end_kib / 1024,
            run.rss_early_kib / 1024,
            None,
            "MiB",
            digits=1,
        ),
        row(f"{label}: peak RSS", run.peak_kib / 1024, None, None, "MiB", digits=1),
        row(f"{label}: requests over the run (vs changes)", run.requests, run.changes, None, "requests", digits=0),
    ]


# --- the informer cache's memory (a child process) ----------------------------------------------------------------


def _informer_child(namespace: str) -> None:
    """Print {"rss_before", "rss_after", "workloads", "listed", "json_bytes"} (KiB, KiB, counts, bytes) for a
    LiveWatch of the namespace's Deployments and pods, measured in this process; the JSON size is read after."""
    from workload_map.cluster import Cluster, ConnectionSettings
    from workload_map.cluster.aio import AsyncApiClient
    from workload_map.cluster.informer import WatchedResource
    from workload_map.cluster.informer_aio import LiveWatch

    settings = ConnectionSettings(kubeconfig=os.environ["KUBECONFIG"], namespace=namespace)
    with Cluster(settings, cache_dir=None) as cluster:
        discovery = cluster.discovery_document()
        context = cluster.context
    resource = discovery.preferred("apps", "Deployment")
    assert resource is not None

    async def main(where: str) -> dict[str, Any]:
        client = AsyncApiClient(context)
        watch = LiveWatch(client, discovery, WatchedResource.of(resource, where), pods=WatchedResource.pods(where))
        gc.collect()
        before = _rss_kib(os.getpid())
        async for update in watch.updates():
            assert update.initial
            break
        gc.collect()
        after = _rss_kib(os.getpid())
        cached = len(watch.workloads.store)
        await watch.aclose()
        await client.aclose()
        return {"rss_before": before, "rss_after": after, "workloads": cached}

    asyncio.run(main(deployments_namespace(0)))  # imports and first-use costs, so they are not counted below
    measured = asyncio.run(main(namespace))
    with Cluster(settings, cache_dir=None) as cluster:  # the JSON as the server sends it
        items = cluster.client.get(resource.collection_path(namespace))["items"]
    measured["listed"] = len(items)
    measured["json_bytes"] = sum(len(json.dumps(item, separators=(",", ":"))) for item in items)
    print(json.dumps(measured))


def measure_informer(env: dict[str, str], count: int) -> dict[str, Any]:
    """The child's measurement of a LiveWatch over the Deployments of the `count` data set."""
    done = subprocess.run(
        [sys.executable, __file__, "--informer-child", deployments_namespace(count)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the informer child failed: {done.stderr.strip()[-300:]}")
    measured: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return measured


def informer_rows(env: dict[str, str], sizes: list[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for count in sizes:
        measured = measure_informer(env, count)
        assert measured["workloads"] == measured["listed"] == count, measured
        per_workload = (measured["rss_after"] - measured["rss_before"]) * 1024 / count
        out.append(
            row(
                f"informer cache, {count:,} Deployments: RSS growth per cached workload (vs its JSON)",
                per_workload,
                measured["json_bytes"] / count,
                3,
                "bytes",
                digits=0,
                note="store and index of a LiveWatch of the Deployments and the (empty) pods of their namespace",
            )
        )
    return out


def rows() -> list[dict[str, Any]]:
    server = server_from_env()
    if server is None:
        return [row("live scale", None, None, None, "ms", note='needs eval "$(scripts/test-cluster.sh env)"')]
    kli = os.environ.get("KLI") or None
    workloads = _sizes("WMAP_BENCH_LIVE_SIZES", "2000,20000")
    pods = _sizes("WMAP_BENCH_LIVE_PODS", "1000,10000")
    rate, _, seconds = os.environ.get("WMAP_BENCH_LIVE_WATCH", "100x60").partition("x")
    set_up(server, workloads, pods)
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as home:
        env = tool_env(server, home)
        out += get_rows(server, env, kli, workloads)
        out += describe_rows(server, env, kli, pods)
        out += watch_rows(server, env, int(rate), float(seconds))
        out += informer_rows(env, workloads)
    return out


def _print(items: list[dict[str, Any]]) -> None:
    for item in items:
        print(json.dumps(item))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--informer-child"]:
        _informer_child(sys.argv[2])
    elif sys.argv[1:2] == ["--set-up"]:
        found = server_from_env()
        assert found is not None, "no test API server (WMAP_TEST_KUBECONFIG)"
        set_up(found, _sizes("WMAP_BENCH_LIVE_SIZES", "2000,20000"), _sizes("WMAP_BENCH_LIVE_PODS", "1000,10000"))
    else:
        _print(rows())
