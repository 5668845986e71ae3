"""`wmap get` against upstream's `kli get` on the same test API server and the same 2,000 workloads (issue 19).

Needs a running test API server (`scripts/test-cluster.sh start`, `WMAP_TEST_KUBECONFIG` set from its `env`) and
kli (`KLI=/path/to/kli`, e.g. `../shared/tools/kli`); without either every row has `figure: None` and a note. The
set-up creates namespace `bench-kli-get` holding 2,000 Deployments (1-8 GPUs each, a few replicas; the test server
runs no controllers, so they only sit there) once, and reuses it on later runs.

Rows, medians of interleaved rounds (wmap, kli, wmap, ...), each tool a fresh process with HOME in a temporary
directory (wmap's discovery cache warmed by one untimed run, as kli has none to warm):
* client CPU (user + sys of the child, from `wait4`) of `wmap get deployments -n bench-kli-get` against kli's
  (target <= 0.5x);
* wall time of the same against kli's (target <= 1x);
* both for `-o wide` too (kli's `-o wide` adds the definition's origin; ours adds pods, GPUs and components), with no
  target: the tools compute different columns.

Run alone: ``python benchmarks/bench_kli_get.py``.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import row, wmap_executable

NAMESPACE = "bench-kli-get"
COUNT = 2000
ROUNDS = 7


def _deployment(index: int) -> dict[str, Any]:
    gpus = 1 + index % 8
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"serve-{index:05d}", "namespace": NAMESPACE, "labels": {"app": f"serve-{index}"}},
        "spec": {
            "replicas": 1 + index % 4,
            "selector": {"matchLabels": {"app": f"serve-{index}"}},
            "template": {
                "metadata": {"labels": {"app": f"serve-{index}"}},
                "spec": {
                    "containers": [
                        {
                            "name": "server",
                            "image": "nvcr.io/nim/meta/llama:1.0",
                            "resources": {
                                "requests": {"cpu": "4", "memory": "32Gi"},
                                "limits": {"nvidia.com/gpu": str(gpus)},
                            },
                        }
                    ]
                },
            },
        },
    }


def _kubectl(kubeconfig: str, *args: str, data: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", kubeconfig, *args], input=data, capture_output=True, text=True, check=False
    )


def _set_up(kubeconfig: str) -> str | None:
    """Create the namespace and its Deployments unless they are there; a note when that fails."""
    found = _kubectl(kubeconfig, "get", "deployments", "-n", NAMESPACE, "-o", "name")
    have = len(found.stdout.split()) if found.returncode == 0 else 0
    if have >= COUNT:
        return None
    _kubectl(kubeconfig, "create", "namespace", NAMESPACE)
    for first in range(0, COUNT, 250):
        items = [_deployment(i) for i in range(first, min(first + 250, COUNT))]
        done = _kubectl(
            kubeconfig, "apply", "-f", "-", data=json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        )
        if done.returncode != 0:
            return f"kubectl apply failed: {done.stderr.strip()[:300]}"
    return None


def _run(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, child CPU seconds, stdout) of one run."""
    with tempfile.TemporaryFile() as out:
        began = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - began
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    if process.returncode != 0:
        raise RuntimeError(f"{command[0]} exited {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, text


def _none(name: str, note: str) -> dict[str, Any]:
    return row(name, None, None, None, "ms", note=note)


def rows() -> list[dict[str, Any]]:
    kubeconfig = os.environ.get("WMAP_TEST_KUBECONFIG")
    kli = os.environ.get("KLI")
    names = [
        f"wmap get deployments ({COUNT:,}): client CPU, user + sys (vs kli's)",
        f"wmap get deployments ({COUNT:,}): wall time (vs kli's)",
        f"wmap get deployments -o wide ({COUNT:,}): client CPU, user + sys (vs kli's)",
        f"wmap get deployments -o wide ({COUNT:,}): wall time (vs kli's)",
    ]
    if not kubeconfig or not kli:
        note = "needs WMAP_TEST_KUBECONFIG (scripts/test-cluster.sh env) and KLI=/path/to/kli"
        return [_none(name, note) for name in names]
    problem = _set_up(kubeconfig)
    if problem:
        return [_none(name, problem) for name in names]
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if k not in ("WMAP_OUTPUT", "WMAP_CONFIG")}
        env.update(KUBECONFIG=kubeconfig, HOME=home, XDG_CONFIG_HOME=str(Path(home) / ".config"))
        env.pop("WMAP_CACHE_DIR", None)
        env.pop("XDG_CACHE_HOME", None)
        for wide, (cpu_name, wall_name) in ((False, names[:2]), (True, names[2:])):
            extra = ["-o", "wide"] if wide else []
            ours = [wmap_executable(), "get", "deployments", "-n", NAMESPACE, *extra]
            theirs = [kli, "get", "deployments", "-n", NAMESPACE, *extra]
            _, _, first = _run(ours, env)  # warms the discovery cache
            _, _, their_first = _run(theirs, env)
            lines, their_lines = len(first.splitlines()), len(their_first.splitlines())
            samples: dict[str, list[tuple[float, float]]] = {"wmap": [], "kli": []}
            for _ in range(ROUNDS):
                samples["wmap"].append(_run(ours, env)[:2])
                samples["kli"].append(_run(theirs, env)[:2])
            wall = {k: statistics.median(w for w, _ in v) * 1e3 for k, v in samples.items()}
            cpu = {k: statistics.median(c for _, c in v) * 1e3 for k, v in samples.items()}
            note = f"lines printed: wmap {lines}, kli {their_lines}"
            target_cpu, target_wall = (None, None) if wide else (0.5, 1)
            out.append(row(cpu_name, cpu["wmap"], cpu["kli"], target_cpu, "ms", digits=1, note=note))
            out.append(row(wall_name, wall["wmap"], wall["kli"], target_wall, "ms", digits=1, note=note))
    return out


if __name__ == "__main__":
    for item in rows():
        print(item)
