"""Helpers the bench_*.py files share: timing loops, the `json.loads` baseline and the row dict.

`benchmarks/run.py` puts this directory on `sys.path` before it loads a bench file, and a bench run directly
(`python benchmarks/bench_x.py`) has it there as the script's own directory, so each bench says `import _common`.

Timing: `per_call` times one round of calls; `best` keeps the best of several rounds, `interleaved` the best of a
function and of its baseline in alternate rounds (a load spike on a shared machine hits both), `median` and
`medians` the median of rounds (the latter interleaving several self-timed calls). Every figure a bench reports is
set against a baseline measured in the same run, and `row` builds the dict `run.py` expects.
"""

from __future__ import annotations

import functools
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[1]
"""The repository's root."""

K = TypeVar("K")
T = TypeVar("T")


def wmap_executable() -> str:
    """The installed `wmap` console script next to this interpreter (not a pyenv shim), else `wmap` on PATH."""
    beside = Path(sys.executable).parent / "wmap"
    return str(beside) if beside.exists() else "wmap"


def python_pass() -> list[str]:
    """The start-up baseline command: `python -c pass` with this interpreter."""
    return [sys.executable, "-c", "pass"]


def per_call(
    fn: Callable[[], object], number: int = 1, *, collect: bool = False, gc_off: bool = False, cpu: bool = False
) -> float:
    """Seconds per call over one round of `number` calls of `fn`.

    collect: a full garbage collection before the round (not timed); gc_off: the collector off during the round, as
    `timeit` does; cpu: this process's CPU time (`time.process_time`: other processes' load does not count) rather
    than the wall clock (`time.perf_counter`).
    """
    clock = time.process_time if cpu else time.perf_counter
    if collect:
        gc.collect()
    was_enabled = gc.isenabled()
    if gc_off:
        gc.disable()
    try:
        started = clock()
        for _ in range(number):
            fn()
        return (clock() - started) / number
    finally:
        if gc_off and was_enabled:
            gc.enable()


def calibrate(fn: Callable[[], object], round_time: float) -> int:
    """How many calls of `fn` make a round of at least `round_time` seconds (after one warm-up call)."""
    fn()
    number = 1
    while True:
        if per_call(fn, number) * number >= round_time:
            return number
        number *= 2


def best(
    fn: Callable[[], object],
    *,
    repeat: int,
    number: int = 1,
    round_time: float | None = None,
    collect: bool = False,
    gc_off: bool = False,
    cpu: bool = False,
) -> float:
    """Seconds per call: the best of `repeat` rounds of `number` calls each, or, with `round_time`, of as many calls
    as take that long (`calibrate`). The timing options are `per_call`'s."""
    if round_time is not None:
        number = calibrate(fn, round_time)
    return min(per_call(fn, number, collect=collect, gc_off=gc_off, cpu=cpu) for _ in range(repeat))


def interleaved(
    fn: Callable[[], object],
    baseline: Callable[[], object],
    *,
    rounds: int,
    round_time: float | None = None,
    collect: bool = False,
    gc_off: bool = False,
    cpu: bool = False,
) -> tuple[float, float]:
    """Seconds per call of `fn` and of `baseline`, each the best of `rounds` rounds taken alternately (the baseline
    first), so a load spike on this shared machine hits both. A round is one call, or with `round_time` as many
    calls as take that long (calibrated for each function). The timing options are `per_call`'s."""
    number = calibrate(fn, round_time) if round_time is not None else 1
    base_number = calibrate(baseline, round_time) if round_time is not None else 1
    best_fn = best_base = float("inf")
    for _ in range(rounds):
        best_base = min(best_base, per_call(baseline, base_number, collect=collect, gc_off=gc_off, cpu=cpu))
        best_fn = min(best_fn, per_call(fn, number, collect=collect, gc_off=gc_off, cpu=cpu))
    return best_fn, best_base


def median(fn: Callable[[], object], *, repeat: int) -> float:
    """Seconds of one call of `fn`: the median of `repeat` calls (wall clock)."""
    return statistics.median(per_call(fn) for _ in range(repeat))


def round_robin(calls: Mapping[K, Callable[[], T]], rounds: int) -> dict[K, list[T]]:
    """Every call once per round, in turn, for `rounds` rounds (interleaved, so load on a shared machine hits every
    call alike); what each returned, per key."""
    results: dict[K, list[T]] = {key: [] for key in calls}
    for _ in range(rounds):
        for key, call in calls.items():
            results[key].append(call())
    return results


def medians(calls: Mapping[K, Callable[[], float]], rounds: int) -> dict[K, float]:
    """The median of each call's returned seconds over `rounds` interleaved rounds (`round_robin`)."""
    return {key: statistics.median(values) for key, values in round_robin(calls, rounds).items()}


def json_loads_baseline(text: str) -> Callable[[], Any]:
    """The usual baseline: `json.loads` of the measured object's JSON text (what decoding it costs anyway)."""
    return functools.partial(json.loads, text)


def _rounded(value: float | None, digits: int | None) -> float | None:
    return value if value is None or digits is None else round(value, digits)


def row(
    name: str,
    figure: float | None,
    baseline: float | None,
    target: float | str | None,
    unit: str,
    *,
    digits: int | None = 3,
    ratio_digits: int | None = 2,
    note: str | None = None,
) -> dict[str, Any]:
    """One row for `run.py`: figure and baseline in `unit`, rounded to `digits` (None: as they are), and their
    ratio (rounded to `ratio_digits`; None when either is missing or the baseline is not positive). A non-empty
    `note` is kept as the row's "note"."""
    ratio: float | None = None
    if figure is not None and baseline is not None and baseline > 0:
        ratio = _rounded(figure / baseline, ratio_digits)
    out: dict[str, Any] = {
        "name": name,
        "figure": _rounded(figure, digits),
        "baseline": _rounded(baseline, digits),
        "ratio": ratio,
        "target": target,
        "unit": unit,
    }
    if note:
        out["note"] = note
    return out
