"""wmap serve at scale (issue 23), run by hand, never in CI: 20,000 workloads (the PyTorchJob and JobSet catalog
fixtures with their pods, renamed) in the store; the time of one /metrics render and of a dashboard page of the
JSON API (50 rows, with and without a filter), and the series count.

    python3 benchmarks/bench_serve.py [N]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import msgspec
from tests.unit.test_serve_metrics import fixture_view

from workload_map.serve import api
from workload_map.serve.metrics import WorkloadCollector
from workload_map.serve.store import Store


def timed(label: str, run: Callable[[], object], repeat: int = 3) -> None:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    print(f"{label}: {best * 1000:.0f} ms (best of {repeat})")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    templates = [fixture_view(name)[0] for name in ("kubeflow-org-pytorchjob-v1", "jobset-x-k8s-io-jobset-v1alpha2")]
    store = Store(synced=True)
    for index in range(count):
        template = templates[index % 2]
        view = msgspec.structs.replace(template, name=f"{template.name}-{index}", namespace=f"team-{index % 200}")
        store.put(str(index), view)
    collector = WorkloadCollector(store, max_series=10_000_000)
    text = collector.render()
    lines = text.count(b"\n")
    print(f"{count} workloads, {lines} lines, {len(text) / 2**20:.1f} MiB of metrics")
    timed("/metrics render, nothing changed", collector.render)

    def one_changed() -> None:
        uid, view = next(iter(store.views.items()))
        store.put(uid, msgspec.structs.replace(view, phase="Failed"))
        collector.render()

    timed("/metrics render, one workload changed", one_changed)
    timed("/metrics render, every workload new", lambda: WorkloadCollector(store, max_series=10_000_000).render(), 1)
    timed("/api/v1/workloads?limit=50", lambda: api.workloads(store, {"limit": "50"}))
    timed(
        "/api/v1/workloads?limit=50&kind=jobset&q=17",
        lambda: api.workloads(store, {"limit": "50", "kind": "jobset", "q": "17"}),
    )
    timed("one workload", lambda: api.workload(store, "team-17", "JobSet", f"{templates[1].name}-17"))


if __name__ == "__main__":
    main()
