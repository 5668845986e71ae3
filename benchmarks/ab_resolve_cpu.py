"""Resolution and jq rows timed in CPU time, for A/B runs on a loaded machine (issue 19).

    /path/to/rev-a/.venv/bin/python benchmarks/ab_resolve_cpu.py 5 A
    /path/to/rev-b/.venv/bin/python benchmarks/ab_resolve_cpu.py 5 B      (alternate them a few times)

Each case is timed with `time.process_time` (the CPU this process used, not the wall clock: on a shared 2-core
machine with a load average near 10 the wall clock of one `json.loads` moved 80-1260 us between rounds, CPU time
by tens of percent), between two `json.loads` baselines of the same object's text; printed: the median ratio over
ROUNDS. Cases: complete resolution (`Workload(...).resolve().ok`) of bench_resolve's 19 KB JobSet and of one with 8
replicated jobs (38 KB, past 500 containers); its status alone (and, where the revision has it, the status and
the complete resolution with `from_json=True` on the object decoded from its JSON text, as the CLI gives listed
objects); bench_jq's 25
expressions through `Document.evaluate_many`; the public `jq.evaluate` on a deep plain path of a 9 KB object
(bench_jq_fastpath's row).
Run it with each revision's own venv python (`benchmarks/compare.py` makes them under /tmp/wmap-compare): the cases
import only what both revisions have. Not part of `run.py`.
"""

from __future__ import annotations

import inspect
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_jq
import workload_map
from bench_resolve import jobset
from workload_map.jq import Document, evaluate
from workload_map.model import load_definition
from workload_map.resolve import Workload

DEFINITION = Path(workload_map.__file__).parent / "catalog" / "definitions" / "jobset-x-k8s-io-jobset-v1alpha2.yaml"
DEEP = ".spec.replicatedJobs[0].template.spec.template.spec.containers[0].image"


def _cases() -> dict[str, tuple[Callable[[], object], Any]]:
    karta = load_definition(DEFINITION)
    obj, large, batch = jobset(0), jobset(1, worker_groups=7), bench_jq.jobset()
    small = bench_jq.jobset()
    small["spec"]["replicatedJobs"] = small["spec"]["replicatedJobs"][:1]

    def complete(item: dict[str, Any]) -> None:
        resolution = Workload(karta, item).resolve()
        assert resolution.ok, resolution.errors

    cases: dict[str, tuple[Callable[[], object], Any]] = {
        "complete 19KB": (lambda: complete(obj), obj),
        "complete 38KB": (lambda: complete(large), large),
        "status 19KB": (lambda: Workload(karta, obj).status.phase, obj),
        "25 exprs evaluate_many": (lambda: Document(batch).evaluate_many(bench_jq.DEFINITION), batch),
        "public evaluate 9KB": (lambda: evaluate(DEEP, small), small),
    }
    if "from_json" in inspect.signature(Workload).parameters:  # since issue 19's getspeed work: a decoder's output
        decoded = json.loads(json.dumps(obj))
        cases["status 19KB from_json"] = (lambda: Workload(karta, decoded, from_json=True).status.phase, decoded)

        def complete_decoded() -> None:  # what the CLI and the informer pass: a decoder's output
            resolution = Workload(karta, decoded, from_json=True).resolve()
            assert resolution.ok, resolution.errors

        cases["complete 19KB from_json"] = (complete_decoded, decoded)
    return cases


def _cpu_per_call(function: Callable[[], object], seconds: float = 0.05) -> float:
    calls = 0
    began = time.process_time()
    while True:
        function()
        calls += 1
        spent = time.process_time() - began
        if spent >= seconds:
            return spent / calls


def main(rounds: int, label: str) -> None:
    cases = _cases()
    ratios: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (function, obj) in cases.items():
            text = json.dumps(obj)
            before = _cpu_per_call(lambda text=text: json.loads(text))  # type: ignore[misc]
            spent = _cpu_per_call(function)
            after = _cpu_per_call(lambda text=text: json.loads(text))  # type: ignore[misc]
            ratios[name].append(spent / ((before + after) / 2))
    print(label, {name: round(statistics.median(values), 3) for name, values in ratios.items()}, flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5, sys.argv[2] if len(sys.argv) > 2 else "")
