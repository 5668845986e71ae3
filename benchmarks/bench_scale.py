"""Many distinct workloads, as `wmap get` resolves them (issue 19): the cost per workload must not grow with the count.

Every workload is a distinct ~21 KB JobSet (`bench_resolve.jobset`) of one shape and one size: the indices start at
1,000,000, so every generated name, label and value has the same width and workload 9,999 is byte for byte as long
as workload 0 (checked: all JSON texts have one length). Times are this process's CPU time (`time.process_time`:
the machine is shared), the `status` rows are `wmap get` (`get.make_rows`: status only), the `wide` rows `-o wide`
(status and totals: the view of each workload). Rows:

* held (what `wmap get TYPE` does): a fresh process per command, as the console script runs one: its start-up
  objects frozen (`cli.resume_gc`), the N workloads' JSON as LIST pages of 500 decoded with the collector paused (as
  `workload_map.cluster` decodes them; the `json.loads` baseline is that decode), then the rows of all N built from
  the decoded items at once (`make_rows(..., listed=True)`), CPU time per workload; 100 and 10,000 workloads,
  alternated over rounds (3 commands of 100 per command of 10,000), medians; the ratio 10,000 / 100 of the CPU
  time per workload (target <= 1.2), the same ratio each against its own decode, and the resident memory per
  held workload (the decoded item and its row: peak RSS of the 10,000 minus that of the 100, per workload);
* streamed (the resolution alone, in this process, nothing held): batches of 100 decoded workloads, each timed
  next to the `json.loads` of its own batch; per-workload time (median over batches) at 10,000 against the median
  of 5 batches of 100: whether anything of ours grows with the number of workloads seen;
* memory: what building the `-o wide` rows of 1,000 workloads allocates (tracemalloc, not timed): still held by the
  rows after a collection, and the peak, per workload, against the size of one decoded workload.

Run alone: `python benchmarks/bench_scale.py` (about three minutes; the held 10,000 take ~1.6 GB of memory each;
WMAP_BENCH_SCALE=N changes the 10,000, WMAP_BENCH_SCALE_ROUNDS the 3 rounds).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

from _common import row
from bench_resolve import jobset
from workload_map.catalog import Resolved, builtin_registry
from workload_map.cli.commands.get import make_rows
from workload_map.cluster.core import gc_paused

BATCH = 100
PAGE = 500  # a LIST page (`--chunk-size`'s default)
FIRST = 1_000_000  # every index of one width: every workload of one size
MODES = (("status", False, "get (status)"), ("wide", True, "get -o wide (status and totals)"))


def _texts(count: int, start: int) -> list[str]:
    texts = [json.dumps(jobset(start + i)) for i in range(count)]
    assert len({len(text) for text in texts}) == 1, "workloads of different sizes"
    return texts


def _definition() -> Resolved:
    definition = builtin_registry().for_object(jobset(FIRST))
    assert definition is not None
    return definition


def _warm_up(definition: Resolved, *, wide: bool) -> None:
    """One workload resolved before anything is timed: the definition compiled, the modules imported."""
    made, _ = make_rows([json.loads(json.dumps(jobset(FIRST - 1)))], definition, "JobSet", wide=wide, listed=True)
    assert len(made) == 1


def _held_child(count: int, *, wide: bool) -> dict[str, float]:
    """One `wmap get` of `count` workloads, in this (fresh) process: CPU seconds per workload to decode the LIST
    pages and to build the rows from all of them, and the peak RSS."""
    definition = _definition()
    _warm_up(definition, wide=wide)
    gc.collect()
    gc.freeze()  # the console script's start-up (cli.resume_gc): what the rows are built in
    texts = _texts(count, FIRST)
    pages = ["[" + ",".join(texts[i : i + PAGE]) + "]" for i in range(0, count, PAGE)]
    del texts
    items: list[dict[str, Any]] = []
    began = time.process_time()
    for page in pages:
        with gc_paused():
            items.extend(json.loads(page))
    decode = time.process_time() - began
    del pages
    collections = sum(stat["collections"] for stat in gc.get_stats())
    began = time.process_time()
    made, warnings = make_rows(items, definition, "JobSet", wide=wide, listed=True)
    build = time.process_time() - began
    assert len(made) == count and not warnings, warnings
    return {
        "build": build / count,
        "decode": decode / count,
        "collections": sum(stat["collections"] for stat in gc.get_stats()) - collections,
        "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


def _held(count: int, *, mode: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--held", str(count), mode], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"held {mode} {count}: {done.stderr.strip()[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def _batches(count: int, start: int) -> Iterator[list[str]]:
    for first in range(start, start + count, BATCH):
        yield _texts(min(BATCH, start + count - first), first)


def _streamed(definition: Resolved, count: int, start: int, *, wide: bool) -> tuple[float, float]:
    """CPU seconds per workload for make_rows of decoded workloads and for json.loads of their text: the medians over
    batches of 100, each timed right after its own decode."""
    build_s: list[float] = []
    decode_s: list[float] = []
    for texts in _batches(count, start):
        gc.collect()
        began = time.process_time()
        batch = [json.loads(text) for text in texts]
        decode_s.append((time.process_time() - began) / len(batch))
        began = time.process_time()
        made, warnings = make_rows(batch, definition, "JobSet", wide=wide, listed=True)
        build_s.append((time.process_time() - began) / len(batch))
        assert len(made) == len(batch) and not warnings, warnings
        # nothing of this batch may outlive it: held while the next is timed, its ~150,000 containers would be
        # walked by that batch's collections (the earlier version of this benchmark kept the last batch's rows so,
        # which a lone batch of 100 never had)
        del batch, made
    return statistics.median(build_s), statistics.median(decode_s)


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


def _held_rows(large: int, rounds: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for mode, _, label in MODES:
        small: list[dict[str, float]] = []
        big: list[dict[str, float]] = []
        for _ in range(rounds):  # alternated, so a load spike on this shared machine lands on both sizes
            small.extend(_held(BATCH, mode=mode) for _ in range(3))
            big.append(_held(large, mode=mode))
        small_s = statistics.median(r["build"] for r in small)
        big_s = statistics.median(r["build"] for r in big)
        small_decode = statistics.median(r["decode"] for r in small)
        big_decode = statistics.median(r["decode"] for r in big)
        runs = f"{len(big)} commands of {large:,}, {len(small)} of 100"
        out.append(
            row(
                f"{label}, held: 100, CPU per workload (vs its json.loads)",
                small_s * 1e6,
                small_decode * 1e6,
                None,
                "us",
                digits=1,
            )
        )
        out.append(
            row(
                f"{label}, held: {large:,}, CPU per workload (vs its json.loads)",
                big_s * 1e6,
                big_decode * 1e6,
                None,
                "us",
                digits=1,
                note=f"{runs}; collections during the rows: {statistics.median(r['collections'] for r in big):.0f}",
            )
        )
        out.append(
            row(
                f"{label}, held: CPU per workload at {large:,} over 100",
                big_s * 1e6,
                small_s * 1e6,
                1.2,
                "us",
                digits=1,
                ratio_digits=3,
            )
        )
        out.append(
            row(
                f"{label}, held: at {large:,} over 100, each vs its json.loads",
                big_s / big_decode,
                small_s / small_decode,
                None,
                "x json.loads",
                digits=3,
                ratio_digits=3,
            )
        )
        rss = (statistics.median(r["rss"] for r in big) - statistics.median(r["rss"] for r in small)) / (large - BATCH)
        out.append(
            row(
                f"{label}, held: resident memory per workload (vs its JSON)",
                rss,
                len(_texts(1, FIRST)[0]),
                None,
                "bytes",
                digits=0,
            )
        )
    return out


def _streamed_rows(large: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    definition = _definition()
    for _, wide, label in MODES:
        _warm_up(definition, wide=wide)
        small = [_streamed(definition, BATCH, FIRST + BATCH * r, wide=wide) for r in range(5)]
        small_s = statistics.median(s for s, _ in small)
        small_decode = statistics.median(b for _, b in small)
        big_s, big_decode = _streamed(definition, large, FIRST, wide=wide)
        out.append(
            row(
                f"{label}, streamed: 100, CPU per workload (vs json.loads)",
                small_s * 1e6,
                small_decode * 1e6,
                None,
                "us",
                digits=1,
            )
        )
        out.append(
            row(
                f"{label}, streamed: {large:,}, CPU per workload (vs json.loads)",
                big_s * 1e6,
                big_decode * 1e6,
                None,
                "us",
                digits=1,
            )
        )
        out.append(
            row(
                f"{label}, streamed: CPU per workload at {large:,} over 100",
                big_s * 1e6,
                small_s * 1e6,
                None,
                "us",
                digits=1,
                ratio_digits=3,
            )
        )
        out.append(
            row(
                f"{label}, streamed: at {large:,} over 100, each vs json.loads",
                big_s / big_decode,
                small_s / small_decode,
                None,
                "x json.loads",
                digits=3,
                ratio_digits=3,
            )
        )
    return out


def _memory_rows() -> list[dict[str, Any]]:
    count = 1000
    definition = _definition()
    _warm_up(definition, wide=True)
    objects = [json.loads(text) for texts in _batches(count, FIRST) for text in texts]
    gc.collect()
    tracemalloc.start()
    built, _ = make_rows(objects, definition, "JobSet", wide=True, listed=True)
    peak = tracemalloc.get_traced_memory()[1]
    gc.collect()  # what is still allocated is what the rows hold, not garbage waiting for the collector
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(built) == count
    decoded = _size_of(objects[0])
    return [
        row(
            f"get -o wide rows of {count:,} JobSets: memory held per workload (vs one decoded JobSet)",
            held / count,
            decoded,
            None,
            "bytes",
            digits=0,
        ),
        row(
            f"get -o wide rows of {count:,} JobSets: peak memory per workload (vs one decoded JobSet)",
            peak / count,
            decoded,
            None,
            "bytes",
            digits=0,
        ),
    ]


def rows() -> list[dict[str, Any]]:
    large = int(os.environ.get("WMAP_BENCH_SCALE", "10000"))
    rounds = int(os.environ.get("WMAP_BENCH_SCALE_ROUNDS", "3"))
    return _held_rows(large, rounds) + _streamed_rows(large) + _memory_rows()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--held"]:
        print(json.dumps(_held_child(int(sys.argv[2]), wide=sys.argv[3] == "wide")))
    else:
        for item in rows():
            print(item)
