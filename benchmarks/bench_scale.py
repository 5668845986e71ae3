"""Many distinct workloads, as `wmap get` resolves them (issue 19): the cost per workload must not grow with the count.

Rows (each against `json.loads` of the same workloads' JSON text, measured in the same run):

* `wmap get` rows (`get.make_rows`: status only) and `-o wide` rows (status and totals: the view of each workload)
  for 100 and for 10,000 distinct ~20 KB JobSets, time per workload (the median over batches of 100, each timed
  next to its own baseline; 100: the median of 5 such runs); the workloads are made batch by batch outside the
  timed part, so the 10,000 never sit in memory at once;
* the per-workload time at 10,000 over that at 100 (target <= 1.2: flat);
* memory: the allocations made while the wide rows of 1,000 workloads are built (tracemalloc, which slows the run:
  not timed), peak and still held by the rows, per workload, against the size of one decoded workload.

Run alone: `python benchmarks/bench_scale.py` (about a minute; WMAP_BENCH_SCALE=N changes the 10,000).
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

from _common import row
from bench_resolve import jobset
from workload_map.catalog import builtin_registry
from workload_map.cli.commands.get import make_rows

BATCH = 100


def _batches(count: int, start: int) -> Iterator[list[dict[str, Any]]]:
    for first in range(start, start + count, BATCH):
        yield [jobset(first + i) for i in range(min(BATCH, start + count - first))]


def _per_workload(count: int, start: int, *, wide: bool) -> tuple[float, float]:
    """Seconds per workload for make_rows and for json.loads of the same objects' text: the medians over the
    batches of 100 (each batch timed right after its own baseline, so a load spike on this shared machine moves
    one batch, not the figure)."""
    registry = builtin_registry()
    resolve_s: list[float] = []
    loads_s: list[float] = []
    for batch in _batches(count, start):
        definition = registry.for_object(batch[0])
        assert definition is not None
        texts = [json.dumps(obj) for obj in batch]
        gc.collect()
        began = time.perf_counter()
        for text in texts:
            json.loads(text)
        loads_s.append((time.perf_counter() - began) / len(batch))
        began = time.perf_counter()
        rows, warnings = make_rows(batch, definition, "JobSet", wide=wide)
        resolve_s.append((time.perf_counter() - began) / len(batch))
        assert len(rows) == len(batch) and not warnings, warnings
    return statistics.median(resolve_s), statistics.median(loads_s)


def _size_of(value: Any) -> int:
    """Bytes of a decoded JSON value (containers and scalars, shared strings counted once per place)."""
    seen = 0
    stack = [value]
    while stack:
        item = stack.pop()
        seen += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return seen


def rows() -> list[dict[str, Any]]:
    large = int(os.environ.get("WMAP_BENCH_SCALE", "10000"))
    out: list[dict[str, Any]] = []
    for wide, label in ((False, "get (status)"), (True, "get -o wide (status and totals)")):
        small = [_per_workload(BATCH, 1_000_000 + 1000 * r, wide=wide) for r in range(5)]
        small_s = statistics.median(s for s, _ in small)
        small_base = statistics.median(b for _, b in small)
        big_s, big_base = _per_workload(large, 2_000_000, wide=wide)
        out.append(
            row(
                f"{label}: 100 distinct JobSets, per workload (vs json.loads)",
                small_s * 1e6,
                small_base * 1e6,
                None,
                "us",
                digits=1,
            )
        )
        out.append(
            row(
                f"{label}: {large:,} distinct JobSets, per workload (vs json.loads)",
                big_s * 1e6,
                big_base * 1e6,
                None,
                "us",
                digits=1,
            )
        )
        # each size relative to its own json.loads, so a load spike in one part does not read as growth
        out.append(
            row(
                f"{label}: cost per workload at {large:,} over 100, each vs json.loads (flat = 1)",
                big_s / big_base,
                small_s / small_base,
                1.2,
                "x json.loads",
                digits=3,
            )
        )

    count = 1000
    objects = [obj for batch in _batches(count, 3_000_000) for obj in batch]
    definition = builtin_registry().for_object(objects[0])
    assert definition is not None
    gc.collect()
    tracemalloc.start()
    built, _ = make_rows(objects, definition, "JobSet", wide=True)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(built) == count
    decoded = _size_of(objects[0])
    out.append(
        row(
            f"get -o wide rows of {count:,} JobSets: memory held per workload (vs one decoded JobSet)",
            held / count,
            decoded,
            None,
            "bytes",
            digits=0,
        )
    )
    out.append(
        row(
            f"get -o wide rows of {count:,} JobSets: peak memory per workload (vs one decoded JobSet)",
            peak / count,
            decoded,
            None,
            "bytes",
            digits=0,
        )
    )
    return out


if __name__ == "__main__":
    for item in rows():
        print(item)
