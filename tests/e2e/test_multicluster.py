"""Across clusters (issue 24) against three real test API servers at once, started here with their own state
directories (`WMAP_TEST_CLUSTER_DIR=/tmp/wmap-cluster-mc1`, `...-mc2`, `...-mc3`) and stopped at the end; plus a
context whose server is gone and a context whose user may not list nodes (the restricted user of mc1).

The test creates Node objects (capacity and allocatable through the status subresource; labels, taints) and pods
bound with spec.nodeName; there is no scheduler or kubelet, so nothing moves. It asserts `wmap capacity`, `wmap
place -f` / `place TYPE/NAME` (fits, ranking, the first reason, topology, exit codes) and the multi-context
`wmap get` table and JSON, each unreachable or forbidden cluster a warning row with the others still shown.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import Result, invoke

from .conftest import SCRIPT, TEST_CRD_DIR, ApiServer, _parse_env, _server_from_env, expect, unavailable
from .test_live_support import deployment_body

pytestmark = pytest.mark.e2e

GPU = "nvidia.com/gpu"
MERGE = {"Content-Type": "application/merge-patch+json"}
INSTANCES = ("mc1", "mc2", "mc3")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WMAP_TEST_CLUSTER_DIR": f"/tmp/wmap-cluster-{name}"}
    return subprocess.run(
        ["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, ApiServer]]:
    started: list[str] = []
    out: dict[str, ApiServer] = {}
    try:
        for name in INSTANCES:  # one after the other: each picks its own free ports
            result = _script(name, "start")
            if result.returncode != 0:
                unavailable(f"{name}: {result.stderr.strip()[-400:]}")
            started.append(name)
            out[name] = _server_from_env(_parse_env(_script(name, "env").stdout), started_here=True)
        yield out
    finally:
        for name in started:
            _script(name, "stop")


def _node(
    server: ApiServer, name: str, gpus: int, labels: dict[str, str], taints: list[dict[str, str]] | None = None
) -> None:
    amounts = {"cpu": "96", "memory": "2Ti", GPU: str(gpus), "pods": "110"}
    body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    with server.client() as c:
        created = expect(c.post("/api/v1/nodes", json=body), 201)
        # the API server's admission taints a new node not-ready:NoSchedule, which the node lifecycle controller
        # lifts once the kubelet reports Ready; there is neither here, so the test plays both
        assert {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"} in created["spec"]["taints"]
        spec = json.dumps({"spec": {"taints": taints or None}})
        expect(c.patch(f"/api/v1/nodes/{name}", content=spec, headers=MERGE), 200)
        ready = {"type": "Ready", "status": "True", "reason": "KubeletReady"}
        status = {"status": {"capacity": amounts, "allocatable": amounts, "conditions": [ready]}}
        expect(c.patch(f"/api/v1/nodes/{name}/status", content=json.dumps(status), headers=MERGE), 200)


def _pod(server: ApiServer, namespace: str, name: str, node: str, gpus: int, phase: str | None = None) -> None:
    resources = {"requests": {"cpu": "4", GPU: str(gpus)}, "limits": {GPU: str(gpus)}}
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "busybox", "resources": resources}]},
    }
    with server.client() as c:
        expect(c.post(f"/api/v1/namespaces/{namespace}/pods", json=body), 201)
        if phase is not None:
            patch = json.dumps({"status": {"phase": phase}})
            expect(c.patch(f"/api/v1/namespaces/{namespace}/pods/{name}/status", content=patch, headers=MERGE), 200)


A100 = {"node.kubernetes.io/instance-type": "p4d.24xlarge", "nvidia.com/gpu.product": "A100"}
H100 = {"node.kubernetes.io/instance-type": "p5.48xlarge", "nvidia.com/gpu.product": "H100"}


@pytest.fixture(scope="module")
def clusters(servers: dict[str, ApiServer]) -> dict[str, Any]:
    """mc1: two 4-GPU A100 nodes, one with 2 GPUs taken. mc2: four 8-GPU H100 nodes in zones z1 (n1, n2) and z2
    (n3, n4); n4 is full, n3 has a finished pod (it takes nothing); a fifth node is tainted and offers 8 more.
    mc3: one 24-GPU node (a gang of two 8-GPU pods fits there, leaving it partly used: a worse score)."""
    mc1, mc2, mc3 = servers["mc1"], servers["mc2"], servers["mc3"]
    namespaces = {name: server.create_namespace("wmap-mc") for name, server in servers.items()}
    _node(mc1, "a-1", 4, A100)
    _node(mc1, "a-2", 4, A100)
    _pod(mc1, namespaces["mc1"], "running", "a-1", 2)
    for name, zone in (("h-1", "z1"), ("h-2", "z1"), ("h-3", "z2"), ("h-4", "z2")):
        _node(mc2, name, 8, {**H100, "zone": zone})
    _node(mc2, "h-reserved", 8, {**H100, "zone": "z3"}, taints=[{"key": "reserved", "effect": "NoSchedule"}])
    _pod(mc2, namespaces["mc2"], "full", "h-4", 8)
    _pod(mc2, namespaces["mc2"], "done", "h-3", 8, phase="Succeeded")
    _node(mc3, "big", 24, {"node.kubernetes.io/instance-type": "custom", "nvidia.com/gpu.product": "H200"})
    return {"namespaces": namespaces}


@pytest.fixture(scope="module")
def kubeconfig(servers: dict[str, ApiServer], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One kubeconfig with contexts mc1, mc2, mc3, mc1-restricted (may list nothing) and gone (no server there)."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": []}

    def add(context: str, path: Path) -> None:
        config = yaml.safe_load(path.read_text())
        current = next(c for c in config["contexts"] if c["name"] == config["current-context"])["context"]
        cluster = next(c for c in config["clusters"] if c["name"] == current["cluster"])
        user = next(u for u in config["users"] if u["name"] == current["user"])
        merged["clusters"].append({"name": context, "cluster": copy.deepcopy(cluster["cluster"])})
        merged["users"].append({"name": context, "user": copy.deepcopy(user["user"])})
        merged["contexts"].append({"name": context, "context": {"cluster": context, "user": context}})

    add("mc1", servers["mc1"].kubeconfig)
    add("mc2", servers["mc2"].kubeconfig)
    add("mc3", servers["mc3"].kubeconfig)
    restricted = servers["mc1"].restricted_kubeconfig
    assert restricted is not None
    add("mc1-restricted", restricted)
    merged["clusters"].append({"name": "gone", "cluster": {"server": "https://127.0.0.1:9"}})
    merged["users"].append({"name": "gone", "user": {"token": "x"}})
    merged["contexts"].append({"name": "gone", "context": {"cluster": "gone", "user": "gone"}})
    merged["current-context"] = "mc1"
    path = tmp_path_factory.mktemp("mc") / "kubeconfig"
    path.write_text(yaml.safe_dump(merged))
    return path


def wmap(kubeconfig: Path, tmp_path: Path, *args: str) -> Result:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"WMAP_CACHE_DIR": str(tmp_path / "cache")}
    return invoke([*args, "--kubeconfig", str(kubeconfig), "--request-timeout", "10s"], home=home, env=env)


def lws(tmp_path: Path, size: int, name: str = "serve") -> Path:
    """The LWS example as one group of `size` pods of 8 GPUs (a leader and size - 1 workers)."""
    obj = yaml.safe_load((EXAMPLES / "leaderworkerset.yaml").read_text())
    obj["metadata"] = {"name": name, "namespace": "default"}
    obj["spec"]["replicas"] = 1
    obj["spec"]["leaderWorkerTemplate"]["size"] = size
    obj.pop("status", None)
    path = tmp_path / f"lws-{size}.yaml"
    path.write_text(yaml.safe_dump(obj))
    return path


# --- wmap capacity ----------------------------------------------------------------------------------------------


def test_capacity_per_cluster_and_pool(clusters: Any, kubeconfig: Path, tmp_path: Path) -> None:
    result = wmap(kubeconfig, tmp_path, "capacity", "--context", "mc1", "--context", "mc2", "-o", "json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)["clusters"]
    assert data["mc1"]["resources"] == {GPU: {"allocatable": "8", "requested": "2", "free": "6"}}
    assert data["mc2"]["nodes"] == 5
    assert data["mc2"]["resources"] == {GPU: {"allocatable": "40", "requested": "8", "free": "32"}}
    assert data["mc2"]["pools"] == [
        {"labels": H100, "nodes": 5, "resources": {GPU: {"allocatable": "40", "requested": "8", "free": "32"}}}
    ]
    by_zone = wmap(kubeconfig, tmp_path, "capacity", "--context", "mc2", "--pool-label", "zone", "--resource", "cpu")
    assert by_zone.code == 0, by_zone.stderr
    lines = [line.split() for line in by_zone.stdout.splitlines()]
    assert lines[0] == ["CLUSTER", "POOL", "NODES", "RESOURCE", "ALLOCATABLE", "REQUESTED", "FREE"]
    assert ["mc2", "all", "5", "cpu", "480", "4", "476"] in lines
    assert ["mc2", "z2", "2", "cpu", "192", "4", "188"] in lines  # the finished pod on h-3 takes nothing
    memory = wmap(kubeconfig, tmp_path, "capacity", "--context", "mc2", "--resource", "memory")
    assert memory.code == 0, memory.stderr
    # issue 20: binary units with at most three significant digits in text (5 x 2Ti), the exact quantity in JSON
    assert ["mc2", "all", "5", "memory", "10Ti", "0", "10Ti"] in [line.split() for line in memory.stdout.splitlines()]


def test_capacity_shows_an_unreachable_and_a_forbidden_cluster_as_warning_rows(
    clusters: Any, kubeconfig: Path, tmp_path: Path
) -> None:
    result = wmap(kubeconfig, tmp_path, "capacity", "--all-contexts")
    assert result.code == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert set(rows) == {"mc1", "mc2", "mc3", "mc1-restricted", "gone"}
    assert "(not read:" in rows["gone"] and "(not read:" in rows["mc1-restricted"]
    assert "not allowed to list nodes (as user wmap-restricted)" in rows["mc1-restricted"]
    assert "warning: cluster gone:" in result.stderr
    all_gone = wmap(kubeconfig, tmp_path, "capacity", "--context", "gone")
    assert all_gone.code == 1
    assert "no cluster could be read" in all_gone.stderr


# --- wmap place ---------------------------------------------------------------------------------------------------


def test_place_ranks_the_clusters_that_fit_and_gives_the_first_reason(
    clusters: Any, kubeconfig: Path, tmp_path: Path
) -> None:
    two = lws(tmp_path, 2)
    contexts = ("--context", "mc1", "--context", "mc3", "--context", "mc2")
    result = wmap(kubeconfig, tmp_path, "place", "-f", str(two), *contexts, "-o", "json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["workloads"] == ["LeaderWorkerSet/serve"]
    assert data["ranked"] == ["mc2", "mc3"]  # mc3 fits too, but leaves its node with 8 GPUs free
    assert (data["clusters"]["mc3"]["score"], data["clusters"]["mc3"]["nodesUsed"]) == (1, 1)
    assert data["clusters"]["mc3"]["gangs"][0]["nodes"] == {"big": 2}
    assert data["clusters"]["mc2"]["fits"] is True
    assert data["clusters"]["mc2"]["score"] == 0
    assert data["clusters"]["mc2"]["gangs"][0]["nodes"] == {"h-1": 1, "h-2": 1}
    mc1 = data["clusters"]["mc1"]
    assert mc1["fits"] is False
    assert mc1["reason"] == (
        "LeaderWorkerSet/serve: gang serve-0, sub-group leader, role leader: needs 1 pod of 8 nvidia.com/gpu; "
        "the largest node has 4 free"
    )
    assert any("DRA" in item for item in data["notModelled"])

    table = wmap(kubeconfig, tmp_path, "place", "-f", str(two), *contexts)
    assert table.code == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["CLUSTER", "FITS", "SCORE", "NODES", "REASON"]
    assert lines[1].split() == ["mc2", "yes", "0", "2"]
    assert lines[2].split() == ["mc3", "yes", "1", "1"]
    assert lines[3].split()[:4] == ["mc1", "no", "-", "-"]
    assert lines[-1].startswith("Not modelled: quotas")


def test_place_with_a_topology_key_and_exit_1_when_nothing_fits(
    clusters: Any, kubeconfig: Path, tmp_path: Path
) -> None:
    three = lws(tmp_path, 3)
    spread = wmap(kubeconfig, tmp_path, "place", "-f", str(three), "--context", "mc2", "-o", "json")
    assert spread.code == 0, spread.stderr
    assert json.loads(spread.stdout)["clusters"]["mc2"]["gangs"][0]["nodes"] == {"h-1": 1, "h-2": 1, "h-3": 1}
    zoned = wmap(kubeconfig, tmp_path, "place", "-f", str(three), "--context", "mc2", "--topology-key", "zone")
    assert zoned.code == 1
    assert "no single zone value holds it" in zoned.stdout
    assert "error: no cluster can run LeaderWorkerSet/serve now" in zoned.stderr
    two = lws(tmp_path, 2)
    in_zone = wmap(
        kubeconfig, tmp_path, "place", "-f", str(two), "--context", "mc2", "--topology-key", "zone", "-o", "json"
    )
    assert json.loads(in_zone.stdout)["clusters"]["mc2"]["gangs"][0]["domain"] == "z1"


def test_place_skips_an_unreachable_cluster_with_a_warning(clusters: Any, kubeconfig: Path, tmp_path: Path) -> None:
    result = wmap(kubeconfig, tmp_path, "place", "-f", str(lws(tmp_path, 2)), "--context", "gone", "--context", "mc2")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["mc2", "yes", "0", "2"]
    assert lines[2].split()[:4] == ["gone", "?", "-", "-"]
    assert "warning: cluster gone:" in result.stderr


def test_place_escapes_what_it_quotes_from_the_manifest(clusters: Any, kubeconfig: Path, tmp_path: Path) -> None:
    """A reason quotes the manifest (its name, a nodeSelector): escaped in the table, never raw."""
    obj = yaml.safe_load(lws(tmp_path, 2).read_text())
    obj["metadata"]["name"] = "evil\x1b]0;pwned\x07"
    obj["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["nodeSelector"] = {"k\x1b[2J": "v\x9b"}
    path = tmp_path / "evil-lws.yaml"
    path.write_text(yaml.safe_dump(obj))
    result = wmap(kubeconfig, tmp_path, "place", "-f", str(path), "--context", "mc2")
    assert result.code == 1
    raw = [char for char in result.output if (ord(char) < 0x20 and char != "\n") or 0x7F <= ord(char) < 0xA0]
    assert not raw, result.output
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("mc2 ")]
    assert "LeaderWorkerSet/evil\\x1b]0;pwned\\x07: gang " in row
    assert "nodeSelector k\\x1b[2J=v\\x9b does not match on 4 nodes" in row


def test_place_a_workload_read_from_a_cluster(
    servers: dict[str, ApiServer], clusters: Any, kubeconfig: Path, tmp_path: Path
) -> None:
    mc1 = servers["mc1"]
    mc1.apply_crd_file(TEST_CRD_DIR / "leaderworkersets.leaderworkerset.x-k8s.io.yaml")
    obj = yaml.safe_load(lws(tmp_path, 2, name=f"live-{uuid.uuid4().hex[:6]}").read_text())
    obj["metadata"]["namespace"] = clusters["namespaces"]["mc1"]
    stored = mc1.apply(obj)
    result = wmap(
        kubeconfig,
        tmp_path,
        "place",
        f"leaderworkerset/{stored['metadata']['name']}",
        "-n",
        clusters["namespaces"]["mc1"],
        "--all-contexts",
        "-o",
        "json",
    )
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["ranked"] == ["mc2", "mc3"]
    assert data["clusters"]["mc1"]["fits"] is False
    assert set(data["clusters"]) == {"mc1", "mc2", "mc3", "mc1-restricted", "gone"}
    assert "error" in data["clusters"]["gone"]


def test_place_a_workload_without_a_gang_pod_by_pod(
    servers: dict[str, ApiServer], clusters: Any, kubeconfig: Path, tmp_path: Path
) -> None:
    """A Deployment needs no gang: each pod goes where it fits on its own. 3 pods of 2 GPUs fit mc1's two nodes
    (2 and 4 free) although no node holds them all; 4 pods of 4 GPUs do not (only 1 fits there), and the pods
    already placed in a file with their Deployment are not placed twice."""
    small = tmp_path / "web-small.yaml"
    small.write_text(yaml.safe_dump(deployment_body("web", replicas=3, gpus=2)))
    contexts = ("--context", "mc1", "--context", "mc2", "--context", "mc3", "--context", "gone")
    result = wmap(kubeconfig, tmp_path, "place", "-f", str(small), *contexts, "-o", "json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["ranked"] == ["mc1", "mc2", "mc3"]  # mc1 is left with nothing stranded; the others keep GPUs free
    mc1 = data["clusters"]["mc1"]
    assert (mc1["fits"], mc1["score"], mc1["nodesUsed"]) == (True, 0, 2)
    assert mc1["gangs"] == [
        {
            "workload": "Deployment/web",
            "gang": "pod by pod",
            "pods": 3,
            "fits": True,
            "podByPod": True,
            "nodes": {"a-1": 1, "a-2": 2},
        }
    ]
    assert data["clusters"]["mc2"]["score"] == 1 and data["clusters"]["mc3"]["score"] == 1
    assert "error" in data["clusters"]["gone"]

    large = deployment_body("web", replicas=4, gpus=4)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-1",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-x", "uid": "u", "controller": True}
            ],
        },
        "spec": large["spec"]["template"]["spec"],
    }
    both = tmp_path / "web-large.yaml"
    both.write_text(yaml.safe_dump_all([large, pod]))
    table = wmap(kubeconfig, tmp_path, "place", "-f", str(both), "--context", "mc1", "--context", "mc2")
    assert table.code == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[1].split() == ["mc2", "yes", "0", "2"]  # h-1 and h-2 filled (best fit), the owned Pod not counted
    assert lines[2].split()[:4] == ["mc1", "no", "-", "-"]
    assert lines[2].endswith(
        "Deployment/web: pod by pod, role deployment: needs 4 pods of 4 nvidia.com/gpu; "
        "only 1 fit on the 2 nodes that accept them"
    )
    assert "Placed pod by pod (no gang: each pod is scheduled on its own): Deployment/web." in lines
    none = wmap(kubeconfig, tmp_path, "place", "-f", str(both), "--context", "mc1")
    assert none.code == 1
    assert "error: no cluster can run Deployment/web now" in none.stderr

    mc3 = servers["mc3"]
    namespace = clusters["namespaces"]["mc3"]
    mc3.apply(deployment_body("live-web", replicas=2, gpus=8), namespace=namespace)
    live = wmap(
        kubeconfig,
        tmp_path,
        "place",
        "deployment/live-web",
        "-n",
        namespace,
        "--context",
        "mc3",
        "--context",
        "mc1",
        "-o",
        "json",
    )
    assert live.code == 0, live.stderr
    answer = json.loads(live.stdout)
    assert answer["ranked"] == ["mc3"]
    assert answer["clusters"]["mc3"]["gangs"][0]["nodes"] == {"big": 2}
    assert answer["clusters"]["mc1"]["reason"] == (
        "Deployment/live-web: pod by pod, role deployment: needs 2 pods of 8 nvidia.com/gpu; "
        "the largest node has 4 free"
    )


def test_place_a_trainjob_read_with_its_runtime(
    servers: dict[str, ApiServer], clusters: Any, kubeconfig: Path, tmp_path: Path
) -> None:
    """`place trainjob/NAME` reads the ClusterTrainingRuntime the TrainJob names (one GET, issue 25) and places its
    roles pod by pod (a TrainJob has no gang in the catalog): the runtime's dataset initializer too."""
    mc3 = servers["mc3"]
    for crd in ("trainjobs", "clustertrainingruntimes"):
        mc3.apply_crd_file(TEST_CRD_DIR / f"{crd}.trainer.kubeflow.org.yaml")
    references = Path(__file__).resolve().parents[1] / "fixtures" / "references"
    trainjob = yaml.safe_load(
        (
            Path(__file__).resolve().parents[1]
            / "fixtures"
            / "catalog"
            / "trainer-kubeflow-org-trainjob-v1alpha1"
            / "workload.yaml"
        ).read_text()
    )
    namespace = clusters["namespaces"]["mc3"]
    trainjob["metadata"] = {"name": "llama-ft", "namespace": namespace}
    trainjob.pop("status", None)
    runtime_name = f"torch-{uuid.uuid4().hex[:6]}"
    trainjob["spec"]["runtimeRef"]["name"] = runtime_name
    mc3.apply(trainjob, namespace=namespace)
    args = ("place", "trainjob/llama-ft", "-n", namespace, "--context", "mc3", "-o", "json")
    alone = wmap(kubeconfig, tmp_path, *args)
    assert alone.code == 0, alone.stderr
    assert json.loads(alone.stdout)["clusters"]["mc3"]["gangs"][0]["pods"] == 2  # the trainer nodes only
    assert f"ClusterTrainingRuntime {runtime_name} was not found" in alone.stderr
    runtime = yaml.safe_load((references / "torch-distributed.yaml").read_text())
    runtime["metadata"]["name"] = runtime_name
    mc3.apply(runtime)
    with_runtime = wmap(kubeconfig, tmp_path, *args)
    assert with_runtime.code == 0, with_runtime.stderr
    placed = json.loads(with_runtime.stdout)["clusters"]["mc3"]["gangs"][0]
    assert (placed["podByPod"], placed["pods"], placed["nodes"]) == (True, 3, {"big": 3})
    assert "reference runtime" not in with_runtime.stderr


# --- wmap get across contexts ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_namespace(servers: dict[str, ApiServer]) -> str:
    """One namespace name in both clusters, each with a Deployment named after its cluster."""
    name = f"wmap-mc-get-{uuid.uuid4().hex[:6]}"
    for cluster, server in servers.items():
        with server.client() as c:
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            expect(c.post("/api/v1/namespaces", json=body), 201)
        server.apply(deployment_body(f"web-{cluster}", replicas=1), namespace=name)
    return name


def test_get_across_contexts_is_one_table_with_a_cluster_column(
    shared_namespace: str, kubeconfig: Path, tmp_path: Path
) -> None:
    contexts = ("--context", "mc1", "--context", "gone", "--context", "mc2", "--context", "mc1-restricted")
    result = wmap(kubeconfig, tmp_path, "get", "deployments", "-n", shared_namespace, *contexts)
    assert result.code == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows[0] == ["CLUSTER", "NAME", "PHASE", "AGE"]
    assert [row[:2] for row in rows[1:]] == [
        ["mc1", "web-mc1"],
        ["gone", "(not"],
        ["mc2", "web-mc2"],
        ["mc1-restricted", "(not"],
    ]  # in the order the contexts were given
    lines = result.stdout.splitlines()
    assert "cannot reach https://127.0.0.1:9: connection refused" in lines[2]
    assert "not allowed to list" in lines[4] and "(as user wmap-restricted)" in lines[4]
    assert "warning: cluster gone: cannot reach https://127.0.0.1:9" in result.stderr
    assert "warning: cluster mc1-restricted: not allowed to list" in result.stderr


def _on_a_terminal(kubeconfig: Path, tmp_path: Path, args: list[str], columns: int) -> tuple[int, str, str]:
    """`wmap args` run by the installed executable with stdout on a pseudo-terminal `columns` wide."""
    import fcntl
    import pty
    import struct
    import termios

    from tests.cli.helpers import clean_env, executable

    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = clean_env(home, {"WMAP_CACHE_DIR": str(tmp_path / "cache")})
    env.pop("COLUMNS", None)
    command = [executable(), "--no-color", *args, "--kubeconfig", str(kubeconfig), "--request-timeout", "10s"]
    process = subprocess.Popen(command, stdout=child, stderr=subprocess.PIPE, env=env)
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    _, stderr = process.communicate(timeout=60)
    os.close(main)
    return process.returncode, b"".join(chunks).decode().replace("\r\n", "\n"), stderr.decode()


def test_get_across_contexts_on_a_terminal_keeps_the_warning_rows_out_of_the_columns(
    shared_namespace: str, kubeconfig: Path, tmp_path: Path
) -> None:
    """A cluster that could not be read is one line after its CLUSTER cell: it neither widens the NAME column nor
    (on a terminal, where the table is fitted to the width) breaks the fitting (an internal error before)."""
    args = ["get", "deployments", "-o", "wide", "-n", shared_namespace, "--context", "mc1", "--context", "gone"]
    code, stdout, stderr = _on_a_terminal(kubeconfig, tmp_path, args, 100)
    assert code == 0, stderr
    lines = stdout.splitlines()
    assert lines[0].split()[:3] == ["CLUSTER", "NAME", "PHASE"]
    assert lines[0].index("PHASE") - lines[0].index("NAME") == len("web-mc1   ")  # NAME as wide as its widest name
    assert lines[1].split()[:2] == ["mc1", "web-mc1"]
    assert lines[2].startswith("gone      (not read: cannot reach https://127.0.0.1:9")
    assert all(len(line) <= 100 for line in lines)  # the note cut to the width; stderr has it whole
    assert "warning: cluster gone: cannot reach https://127.0.0.1:9: connection refused (check" in stderr
    piped = wmap(kubeconfig, tmp_path, *args)
    assert piped.code == 0, piped.stderr
    header = piped.stdout.splitlines()[0]
    assert header.index("PHASE") - header.index("NAME") == len("web-mc1   ")  # NAME as wide as its widest name


def test_get_all_contexts_json_is_keyed_by_cluster(shared_namespace: str, kubeconfig: Path, tmp_path: Path) -> None:
    result = wmap(kubeconfig, tmp_path, "get", "deployments", "-n", shared_namespace, "--all-contexts", "-o", "json")
    assert result.code == 0, result.stderr
    clusters = json.loads(result.stdout)["clusters"]
    assert list(clusters) == ["mc1", "mc2", "mc3", "mc1-restricted", "gone"]  # the kubeconfig's order
    assert [item["name"] for item in clusters["mc1"]["items"]] == ["web-mc1"]
    assert [item["name"] for item in clusters["mc2"]["items"]] == ["web-mc2"]
    assert clusters["mc2"]["count"] == 1
    assert clusters["gone"]["error"].startswith("cannot reach https://127.0.0.1:9")
    assert "not allowed to list" in clusters["mc1-restricted"]["error"]


def test_get_across_contexts_runs_jsonpath_over_the_document_keyed_by_cluster(
    shared_namespace: str, kubeconfig: Path, tmp_path: Path
) -> None:
    template = "jsonpath={.clusters.mc1.items[*].name} {.clusters.mc2.items[*].name} {.clusters.gone.error}"
    contexts = ("--context", "mc1", "--context", "mc2", "--context", "gone")
    result = wmap(kubeconfig, tmp_path, "get", "deployments", "-n", shared_namespace, *contexts, "-o", template)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("web-mc1 web-mc2 cannot reach https://127.0.0.1:9")
    columns = wmap(kubeconfig, tmp_path, "get", "deployments", *contexts, "-o", "custom-columns=N:.name")
    assert columns.code == 2
    assert "reads one cluster: with several, use -o table, wide, json, yaml or jsonpath=..." in columns.stderr


def test_get_one_context_is_unchanged_and_several_refuse_watch(
    shared_namespace: str, kubeconfig: Path, tmp_path: Path
) -> None:
    one = wmap(kubeconfig, tmp_path, "get", "deployments", "-n", shared_namespace, "--context", "mc2")
    assert one.code == 0, one.stderr
    assert one.stdout.splitlines()[0].split() == ["NAME", "PHASE", "AGE"]
    assert one.stdout.splitlines()[1].split()[0] == "web-mc2"
    watch = wmap(kubeconfig, tmp_path, "get", "deployments", "-w", "--context", "mc1", "--context", "mc2")
    assert watch.code == 2
    assert "--watch reads one cluster" in watch.stderr
    nothing = wmap(kubeconfig, tmp_path, "get", "deployments", "--context", "gone", "--context", "gone2")
    assert nothing.code == 1


def test_get_across_contexts_names_the_cluster_of_every_warning(
    shared_namespace: str, kubeconfig: Path, tmp_path: Path
) -> None:
    """A type neither server serves: the same warning from each cluster, one line per cluster naming it (they
    were one unnamed line, deduplicated, before)."""
    contexts = ("--context", "mc2", "--context", "mc3", "--context", "gone")
    result = wmap(kubeconfig, tmp_path, "get", "jobsets", "-n", shared_namespace, *contexts)
    assert result.code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 3, result.stderr
    assert warnings[0].startswith("warning: cluster mc2: ") and "jobset" in warnings[0].lower()
    assert warnings[1] == warnings[0].replace("cluster mc2: ", "cluster mc3: ")
    assert warnings[2].startswith("warning: cluster gone: cannot reach https://127.0.0.1:9")
    assert all(line.startswith(("warning: cluster ", "error: cluster ")) for line in result.stderr.splitlines())
