"""Reading a manifest: the fast YAML reader (`workload_map.model.yaml_subset`, issue 19) against the PyYAML path it
stands in front of (libyaml's CSafeLoader with our builder, `model.pyyaml_reader`), in process, interleaved.

Rows (microseconds per read; the baseline is the PyYAML path on the same text, so ratio < 1 is faster):
* `examples/pytorchjob.yaml` (1.6 KB) through `yamlio.parse_documents_each` (the fast reader) and through the PyYAML
  path;
* a 20 KB JobSet written by PyYAML's block-style dumper, likewise;
* the price of a decline: the fast reader's time on a 20 KB text it declines near the end (an anchor in its last
  line), against the PyYAML path on it.

Plus, once per process, the import of PyYAML's modules that a read no longer needs (`import yaml` in a fresh
interpreter against `python -c pass`).

Run alone: ``python benchmarks/bench_yaml.py``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from _common import interleaved, row
from workload_map.model import pyyaml_reader, yaml_subset, yamlio

REPO = Path(__file__).resolve().parents[1]


def _jobset(size: int) -> str:
    """A JobSet of about `size` characters, as PyYAML's block-style dumper writes it."""
    jobs: list[dict[str, Any]] = []
    manifest = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "train", "namespace": "ml", "labels": {"app": "train", "team": "ml"}},
        "spec": {"replicatedJobs": jobs, "suspend": False},
    }
    while len(yaml.safe_dump(manifest, sort_keys=False)) < size:
        number = len(jobs)
        jobs.append(
            {
                "name": f"workers-{number}",
                "replicas": 2,
                "template": {
                    "spec": {
                        "parallelism": 4,
                        "completions": 4,
                        "backoffLimit": 0,
                        "template": {
                            "metadata": {"labels": {"role": "worker", "index": str(number)}},
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [
                                    {
                                        "name": "main",
                                        "image": "ghcr.io/example/train:2.4",
                                        "command": ["torchrun", "--nnodes=8", "train.py"],
                                        "env": [{"name": "RANK", "value": "0"}, {"name": "LR", "value": "0.5"}],
                                        "resources": {
                                            "requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": 8},
                                            "limits": {"nvidia.com/gpu": 8},
                                        },
                                    }
                                ],
                            },
                        },
                    }
                },
            }
        )
    return yaml.safe_dump(manifest, sort_keys=False)


def _pair(name: str, text: str, rounds: int) -> dict[str, Any]:
    assert yaml_subset.read_stream(text) is not None, name
    fast, slow = interleaved(
        lambda: yamlio.parse_documents_each(text),
        lambda: pyyaml_reader.parse_stream(text, "<text>"),
        rounds=rounds,
        round_time=0.2,
        gc_off=True,
    )
    return row(f"read {name}: fast reader / PyYAML path", fast * 1e6, slow * 1e6, None, "us")


def _import_yaml_ms() -> tuple[float, float]:
    def run(code: str) -> float:
        best = float("inf")
        for _ in range(7):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            best = min(best, time.perf_counter() - start)
        return best * 1000

    return run("import yaml"), run("pass")


def rows(rounds: int = 7) -> list[dict[str, Any]]:
    pytorchjob = (REPO / "examples" / "pytorchjob.yaml").read_text(encoding="utf-8")
    jobset = _jobset(20_000)
    declined = jobset + "extra: &anchor x\n"
    assert yaml_subset.read_stream(declined) is None
    out = [_pair("examples/pytorchjob.yaml", pytorchjob, rounds), _pair("a 20 KB JobSet", jobset, rounds)]
    decline, slow = interleaved(
        lambda: yaml_subset.read_stream(declined),
        lambda: pyyaml_reader.parse_stream(declined, "<text>"),
        rounds=rounds,
        round_time=0.2,
        gc_off=True,
    )
    out.append(row("decline a 20 KB text at its last line / PyYAML path", decline * 1e6, slow * 1e6, None, "us"))
    imported, baseline = _import_yaml_ms()
    out.append(row("python -c 'import yaml' / python -c pass", imported, baseline, None, "ms"))
    return out


if __name__ == "__main__":
    for item in rows():
        print(item)
