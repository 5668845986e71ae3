"""`wmap` start-up and throughput, as ratios against `python -c pass` measured in the same run.

Rows:
* ``wmap --version`` (target <= 6x): answered before click or any layer is imported.
* ``wmap describe -f examples/pytorchjob.yaml -o json`` (target <= 15x): the whole offline path (catalog, resolve,
  view, JSON) for one workload.
* a stream of PyTorchJob documents (``helm template``-sized): the cost per document at 50 and at 500 documents, each
  the extra time over describing one document divided by the extra documents; the 500 row's baseline is the 50
  row, so a ratio near 1 means the cost grows linearly (target <= 1.25). These run `wmap describe` in this process
  (`workload_map.cli.main.run`, stdout captured): a difference of two process start-ups on a loaded machine is
  noisier than the per-document cost itself.

Each command runs several times in interleaved rounds (so load on a shared machine hits every command alike) and
the median is kept. The installed console script next to this interpreter is timed (not a pyenv shim).

Run alone: ``python benchmarks/bench_cli.py``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "pytorchjob.yaml"
ROUNDS = 7
STREAM_ROUNDS = 3


def _wmap() -> str:
    beside = Path(sys.executable).parent / "wmap"
    return str(beside) if beside.exists() else "wmap"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WMAP_OUTPUT", "WMAP_CONFIG")}
    env["XDG_CONFIG_HOME"] = tempfile.gettempdir() + "/wmap-bench-no-config"
    return env


def _seconds(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(), cwd=REPO, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


def _medians(commands: dict[str, list[str]], rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            times[name].append(_seconds(command))
    return {name: statistics.median(values) for name, values in times.items()}


def _in_process(path: Path) -> float:
    import io

    from workload_map.cli.main import run

    saved, sys.stdout = sys.stdout, io.StringIO()
    try:
        start = time.perf_counter()
        code = run(["describe", "-f", str(path), "-o", "json"])
        elapsed = time.perf_counter() - start
    finally:
        sys.stdout = saved
    if code != 0:
        raise RuntimeError(f"wmap describe -f {path} exited {code}")
    return elapsed


def _stream(directory: Path, count: int) -> Path:
    base = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    documents = []
    for index in range(count):
        document = yaml.safe_load(yaml.safe_dump(base))
        document["metadata"]["name"] = f"llama-finetune-{index}"
        documents.append(document)
    path = directory / f"stream-{count}.yaml"
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False), encoding="utf-8")
    return path


def rows() -> list[dict[str, Any]]:
    wmap = _wmap()
    startup = _medians(
        {
            "pass": [sys.executable, "-c", "pass"],
            "version": [wmap, "--version"],
            "describe": [wmap, "describe", "-f", str(EXAMPLE), "-o", "json"],
        },
        ROUNDS,
    )
    with tempfile.TemporaryDirectory() as tmp:
        streams = {count: _stream(Path(tmp), count) for count in (1, 50, 500)}
        _in_process(streams[50])  # warm: catalog loaded, modules imported, validation cached
        times: dict[int, list[float]] = {count: [] for count in streams}
        for _ in range(STREAM_ROUNDS):
            for count, path in streams.items():
                times[count].append(_in_process(path))
        stream = {str(count): statistics.median(values) for count, values in times.items()}
    per_50 = (stream["50"] - stream["1"]) / 49
    per_500 = (stream["500"] - stream["1"]) / 499
    base_ms = startup["pass"] * 1000
    return [
        {
            "name": "wmap --version (vs python -c pass)",
            "figure": round(startup["version"] * 1000, 1),
            "baseline": round(base_ms, 1),
            "ratio": round(startup["version"] / startup["pass"], 2),
            "target": 6,
            "unit": "ms",
        },
        {
            "name": "wmap describe -f examples/pytorchjob.yaml -o json (vs python -c pass)",
            "figure": round(startup["describe"] * 1000, 1),
            "baseline": round(base_ms, 1),
            "ratio": round(startup["describe"] / startup["pass"], 2),
            "target": 15,
            "unit": "ms",
        },
        {
            "name": "describe -o json of a 50-document PyTorchJob stream, cost per document (vs python -c pass)",
            "figure": round(per_50 * 1000, 2),
            "baseline": round(base_ms, 1),
            "ratio": round(per_50 / startup["pass"], 3),
            "target": None,
            "unit": "ms",
        },
        {
            "name": "describe -o json of a 500-document stream, cost per document (vs per document at 50: linear ~ 1)",
            "figure": round(per_500 * 1000, 2),
            "baseline": round(per_50 * 1000, 2),
            "ratio": round(per_500 / per_50, 2) if per_50 > 0 else None,
            "target": 1.25,
            "unit": "ms",
        },
    ]


if __name__ == "__main__":
    for row in rows():
        print(row)
