"""The PromQL recipes of docs/serve.md, run on Prometheus's own engine (promqltest, tests/promql/) over what
`wmap serve` really exports: the catalog fixtures' metrics as rendered by the collector, plus DCGM-exporter series
for their pods (one or two GPUs each, known utilisation), as DCGM-exporter labels them (`pod`/`namespace`) and as
a scrape without honorLabels renames them (`exported_pod`/`exported_namespace`).

The expected figures are computed here from the views' trees (which pod is whose), not from the metrics code.
Needs a Go toolchain (the e2e API server's build needs one too); skipped, saying so, when there is none.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from workload_map.serve.metrics import WorkloadCollector, render
from workload_map.serve.store import Store
from workload_map.view import WorkloadView

from .test_serve_metrics import fixture_view

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "tests" / "promql"
DOC = ROOT / "docs" / "serve.md"
JOBSET = "jobset-x-k8s-io-jobset-v1alpha2"
STEPS = 70  # samples one minute apart: the recipes are evaluated at 60m, avg_over_time's [1h] sees them all


def recipe(*must: str, without: tuple[str, ...] = ()) -> str:
    """The one ```promql block of docs/serve.md containing every `must` and no `without`, on one line."""
    blocks = re.findall(r"```promql\n(.*?)```", DOC.read_text(), re.S)
    found = [b for b in blocks if all(m in b for m in must) and not any(w in b for w in without)]
    assert len(found) == 1, (must, found)
    return " ".join(found[0].split())


def labels_text(labels: dict[str, str]) -> str:
    inner = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    return "{" + inner + "}"


def load_lines(samples: list[Sample]) -> list[str]:
    return [f"  {s.name}{labels_text(s.labels)} {s.value:g}x{STEPS}" for s in samples]


def util_of(pod: str) -> int:
    return 10 + sum(map(ord, pod)) % 80  # a fixed, different-enough figure per pod


def pods_of(view: WorkloadView) -> list[str]:
    return sorted({pod.name for _, node in view.walk() for pod in node.pods} | {p.name for p in view.unclaimed_pods})


@pytest.fixture(scope="module")
def go() -> str:
    found = shutil.which("go")
    if found is None:
        pytest.skip("no Go toolchain on PATH: the PromQL recipes are checked on Prometheus's engine through Go")
    return found


def _test_binary(go: str) -> Path:
    """The recipes' test binary, built once per version of the module (its go.mod, go.sum and source) into the
    project's cache (`WMAP_CACHE_DIR`, else ~/.cache/workload-map) and reused: Prometheus's engine is compiled once
    per machine, not once per run (CI has a time budget)."""
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "recipes_test.go"):
        digest.update((MODULE / name).read_bytes())
    cache = Path(os.environ.get("WMAP_CACHE_DIR") or Path.home() / ".cache" / "workload-map")
    binary = cache / f"promql-recipes-{digest.hexdigest()[:16]}" / "recipes.test"
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    partial = binary.with_suffix(".partial")
    done = subprocess.run(
        [go, "test", "-c", "-o", str(partial), "."],
        cwd=MODULE,
        env={**os.environ, "GOFLAGS": "-mod=mod"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    partial.replace(binary)  # only a whole build is ever found in the cache
    return binary


def run(go: str, script: str, tmp_path: Path) -> None:
    path = tmp_path / "recipes.test"
    path.write_text(script)
    done = subprocess.run(
        [str(_test_binary(go)), "-test.count=1"],
        cwd=MODULE,
        env={**os.environ, "RECIPES": str(path)},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_dcgm_utilisation_per_workload_and_gpus_waiting(go: str, tmp_path: Path) -> None:
    # the PyTorchJob's last worker is gone: it holds 2 GPUs fewer than it requests
    views = [fixture_view("kubeflow-org-pytorchjob-v1", drop_last_pod=True)[0], fixture_view(JOBSET)[0]]
    store = Store(synced=True)
    for view in views:
        store.put(view.uid or view.name, view)
    text = render(WorkloadCollector(store)).decode()
    exported = [s for family in text_string_to_metric_families(text) for s in family.samples]

    direct: list[str] = []
    renamed: list[str] = []
    expected: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for view in views:
        for index, pod in enumerate(pods_of(view)):
            gpus = 2 if index == 0 else 1  # one pod with two GPUs: the average is over GPUs
            for gpu in range(gpus):
                util = util_of(pod) + gpu
                expected[(view.namespace, view.kind, view.name)].append(util)
                ident = {"pod": pod, "namespace": view.namespace, "gpu": str(gpu), "Hostname": "node-01"}
                direct.append(f"  DCGM_FI_DEV_GPU_UTIL{labels_text(ident)} {util}x{STEPS}")
                scraped = {
                    "exported_pod": pod,
                    "exported_namespace": view.namespace,
                    "pod": "dcgm-exporter-abc12",
                    "namespace": "gpu-operator",
                    "gpu": str(gpu),
                    "Hostname": "node-01",
                }
                renamed.append(f"  DCGM_FI_DEV_GPU_UTIL{labels_text(scraped)} {util}x{STEPS}")
    assert len(expected) == 2 and all(expected.values())

    def results(per: dict[tuple[str, str, str], list[int]]) -> list[str]:
        return [
            "  "
            + labels_text({"namespace": ns, "workload_kind": kind, "workload_name": name})
            + f" {sum(utils) / len(utils):.12g}"
            for (ns, kind, name), utils in sorted(per.items())
        ]

    by_workload = recipe(
        "avg by (namespace, workload_kind, workload_name)", "DCGM_FI_DEV_GPU_UTIL", without=("label_replace",)
    )
    by_workload_exported = recipe("exported_pod", "DCGM_FI_DEV_GPU_UTIL", without=("avg_over_time",))
    waiting = recipe("wmap_workload_gpus_requested - wmap_workload_gpus_held")
    gpus = {
        (s.labels["namespace"], s.labels["kind"], s.labels["name"]): s.value
        for s in exported
        if s.name in ("wmap_workload_gpus_requested",)
    }
    held = {
        (s.labels["namespace"], s.labels["kind"], s.labels["name"]): s.value
        for s in exported
        if s.name == "wmap_workload_gpus_held"
    }
    short = [
        "  " + labels_text({"namespace": k[0], "kind": k[1], "name": k[2]}) + f" {gpus[k] - held[k]:g}"
        for k in sorted(gpus)
        if gpus[k] - held[k] > 0
    ]
    assert short == ['  {kind="PyTorchJob",name="bert-finetune",namespace="ml-team"} 2']
    script = "\n".join(
        [
            "load 1m",
            *load_lines(exported),
            *direct,
            "",
            f"eval instant at 60m {by_workload}",
            *results(expected),
            "",
            f"eval instant at 60m {waiting}",
            *short,
            "",
            "clear",
            "",
            "load 1m",
            *load_lines(exported),
            *renamed,
            "",
            f"eval instant at 60m {by_workload_exported}",
            *results(expected),
            "",
        ]
    )
    (tmp_path / "last.test").write_text(script)
    run(go, script, tmp_path)


def test_a_wrong_expectation_fails(go: str, tmp_path: Path) -> None:
    """The harness can fail: a script whose expected value is wrong is not a pass."""
    script = "\n".join(
        [
            "load 1m",
            '  wmap_workload_gpus_held{name="x"} 4x10',
            "",
            "eval instant at 5m wmap_workload_gpus_held",
            '  wmap_workload_gpus_held{name="x"} 5',
            "",
        ]
    )
    with pytest.raises(AssertionError, match="expected 5"):
        run(go, script, tmp_path)
