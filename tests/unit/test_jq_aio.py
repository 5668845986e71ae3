"""The async worker pool (`workload_map.jq.aio.WorkerPool`, issue 18): evaluations in flight at once, each under its
own deadline, cancellation kills the worker running it, errors are the sync API's."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import pytest

from workload_map.errors import WorkloadMapError
from workload_map.jq import EvaluationPolicy, JqLimitError, JqRuntimeError, evaluate
from workload_map.jq.aio import WorkerPool

SPIN = "last(range(infinite))"  # runs until it is stopped
COUNT = 50


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_results_and_errors_are_the_sync_apis() -> None:
    policy = EvaluationPolicy("worker", deadline=10.0)
    obj = {"spec": {"replicas": 3, "items": [{"n": 1}, {"n": 2}]}}

    async def main() -> None:
        async with WorkerPool(size=2) as pool:
            for expr in ("[.spec.items[] | .n * 2]", ".spec.replicas | tostring", "{a: .spec.replicas}"):
                assert await pool.evaluate(expr, obj, policy=policy) == evaluate(expr, obj, policy=policy)
            with pytest.raises(JqRuntimeError) as caught:
                await pool.evaluate(".spec.replicas[]", obj, policy=policy, field_path="spec.x")
            with pytest.raises(JqRuntimeError) as sync:
                evaluate(".spec.replicas[]", obj, policy=policy, field_path="spec.x")
            assert isinstance(caught.value, WorkloadMapError)
            assert str(caught.value) == str(sync.value)
            many = await pool.evaluate_many(
                [".spec.replicas", ".spec.replicas[]", "[.spec.items[].n]"], obj, policy=policy
            )
            assert many[0] == [3] and isinstance(many[1], JqRuntimeError) and many[2] == [[1, 2]]
            assert await pool.paths(".spec.items[].n", obj, policy=policy) == [
                ["spec", "items", 0, "n"],
                ["spec", "items", 1, "n"],
            ]

    asyncio.run(main())


def test_fifty_concurrent_evaluations_finish_in_about_the_time_of_the_slowest() -> None:
    """50 evaluations, each stopped by its own deadline (0.5 s to 1.5 s): in flight at once over the pool, they end
    in a few times one evaluation of the slowest, not in the sum (about 50 s, which taking turns would cost)."""
    stops: list[JqLimitError] = []
    deadlines = [0.5 + i / (COUNT - 1) for i in range(COUNT)]
    policies = [EvaluationPolicy("worker", deadline=d, memory_mb=512, stops=stops) for d in deadlines]
    slowest = policies[-1]

    async def main() -> tuple[float, float, list[object]]:
        async with WorkerPool(size=COUNT) as pool:
            await pool.start(COUNT, memory_mb=512)  # start-up is not evaluation: the workers are started first
            began = time.perf_counter()
            with pytest.raises(JqLimitError):
                await pool.evaluate(SPIN, {}, policy=slowest)
            single = time.perf_counter() - began
            await pool.start(COUNT, memory_mb=512)  # replace the worker that deadline killed
            began = time.perf_counter()
            results = await asyncio.gather(*(pool.evaluate_many([SPIN], {}, policy=p) for p in policies))
            return single, time.perf_counter() - began, [r[0] for r in results]

    single, elapsed, results = asyncio.run(main())
    assert all(isinstance(r, JqLimitError) for r in results)
    assert sorted(str(r) for r in results) == sorted(
        f"jq limit exceeded in '{SPIN}': evaluation exceeded the {d:g} s deadline" for d in deadlines
    )
    assert len(stops) == COUNT + 1
    assert elapsed < 6 * single, f"50 concurrent took {elapsed:.2f} s, one of the slowest {single:.2f} s"


def test_cancelling_an_evaluation_kills_its_worker_and_leaves_the_others_alone() -> None:
    long = EvaluationPolicy("worker", deadline=60.0)

    async def main() -> None:
        async with WorkerPool(size=3) as pool:
            doomed = asyncio.create_task(pool.evaluate(SPIN, {}, policy=long))
            while not pool.pids()["busy"]:
                await asyncio.sleep(0.01)
            (pid,) = pool.pids()["busy"]
            others = [asyncio.create_task(pool.evaluate("[range(200000)] | length", {}, policy=long)) for _ in range(2)]
            await asyncio.sleep(0.3)  # the doomed one is deep inside libjq
            doomed.cancel()
            with pytest.raises(asyncio.CancelledError):
                await doomed
            assert _gone(pid), "the cancelled evaluation's worker still runs"
            assert await asyncio.gather(*others) == [[200000], [200000]]
            assert pid not in pool.pids()["idle"] + pool.pids()["busy"]
            # a timeout is a cancellation too: asyncio.timeout kills the worker and raises TimeoutError
            task = asyncio.create_task(pool.evaluate(SPIN, {}, policy=long))
            while len(pool.pids()["busy"]) < 1:
                await asyncio.sleep(0.01)
            (busy,) = pool.pids()["busy"]
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert _gone(busy)
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.5):
                    await pool.evaluate(SPIN, {}, policy=long)
            assert pool.pids()["busy"] == []
            assert await pool.evaluate(".a", {"a": 1}, policy=long) == [1]  # the pool goes on

    asyncio.run(main())


def test_the_memory_cap_applies_per_policy() -> None:
    capped = EvaluationPolicy("worker", deadline=30.0, memory_mb=256)

    async def main() -> None:
        async with WorkerPool(size=2) as pool:
            with pytest.raises(JqLimitError, match="256 MiB memory cap"):
                await pool.evaluate('[range(100000000)] | map(tostring) | join(",") | length', {}, policy=capped)
            assert await pool.evaluate(".a", {"a": 2}, policy=capped) == [2]

    if sys.platform != "linux":
        pytest.skip("RLIMIT_AS is enforced on Linux")
    asyncio.run(main())


def test_the_sync_cli_never_imports_an_event_loop_for_offline_commands() -> None:
    code = (
        "import sys\n"
        "from workload_map.cli.main import run\n"
        "assert run(['--version']) == 0\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('asyncio', 'anyio', 'trio') "
        "or m.endswith('.aio') or m == 'workload_map.asyncio')\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
