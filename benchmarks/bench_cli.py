"""`wmap` start-up and throughput, as ratios against `python -c pass` measured in the same run.

Rows:
* ``wmap --version`` (target <= 2x, issue 19): answered before click or any layer is imported.
* ``wmap describe -f examples/pytorchjob.yaml -o json`` (target <= 4x, issue 19): the whole offline path (catalog,
  resolve, view, JSON) for one workload, with the catalog's precompiled blob already built (one untimed run builds it
  in a cache directory of the benchmark's own, which nothing else prunes).
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

import functools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from _common import REPO, medians, python_pass, row, wmap_executable

EXAMPLE = REPO / "examples" / "pytorchjob.yaml"
ROUNDS = 7
STREAM_ROUNDS = 3


_CACHE = tempfile.mkdtemp(prefix="wmap-bench-cli-cache-")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WMAP_OUTPUT", "WMAP_CONFIG", "WMAP_NO_CATALOG_CACHE")}
    env["XDG_CONFIG_HOME"] = tempfile.gettempdir() + "/wmap-bench-no-config"
    env["WMAP_CACHE_DIR"] = _CACHE
    return env


def _seconds(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(), cwd=REPO, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.decode(errors='replace')}")
    return elapsed


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
    wmap = wmap_executable()
    commands = {
        "pass": python_pass(),
        "version": [wmap, "--version"],
        "describe": [wmap, "describe", "-f", str(EXAMPLE), "-o", "json"],
    }
    _seconds(commands["describe"])  # builds the catalog blob, as the first run after an install does
    startup = medians({name: functools.partial(_seconds, command) for name, command in commands.items()}, ROUNDS)
    with tempfile.TemporaryDirectory() as tmp:
        streams = {count: _stream(Path(tmp), count) for count in (1, 50, 500)}
        _in_process(streams[50])  # warm: catalog loaded, modules imported, validation cached
        stream = medians(
            {count: functools.partial(_in_process, path) for count, path in streams.items()}, STREAM_ROUNDS
        )
    per_50 = (stream[50] - stream[1]) / 49
    per_500 = (stream[500] - stream[1]) / 499
    base_ms = startup["pass"] * 1000
    return [
        row("wmap --version (vs python -c pass)", startup["version"] * 1000, base_ms, 2, "ms", digits=1),
        row(
            "wmap describe -f examples/pytorchjob.yaml -o json (vs python -c pass)",
            startup["describe"] * 1000,
            base_ms,
            4,
            "ms",
            digits=1,
        ),
        row(
            "describe -o json of a 50-document PyTorchJob stream, cost per document (vs python -c pass)",
            per_50 * 1000,
            base_ms,
            None,
            "ms",
            digits=2,
            ratio_digits=3,
        ),
        row(
            "describe -o json of a 500-document stream, cost per document (vs per document at 50: linear ~ 1)",
            per_500 * 1000,
            per_50 * 1000,
            1.25,
            "ms",
            digits=2,
        ),
    ]


if __name__ == "__main__":
    for item in rows():
        print(item)
