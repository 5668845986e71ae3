"""CI's smoke run of the live scale benchmark (`benchmarks/bench_live_scale.py`, issue 21) at <= 200 workloads, on
the suite's API server: the benchmark's own set-up and measurements run, and what they saw is checked (rows printed,
pods described, requests that do not grow with the data, a paced watch that catches up, the informer's count).
Timings are measured by the benchmark but never asserted here."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO_ROOT, ApiServer

WORKLOADS = 150
PODS = 120


@pytest.fixture(scope="module")
def bench(api_server: ApiServer) -> Iterator[Any]:
    """The benchmark module (benchmarks/ on sys.path, as a direct run has it) with its data sets made."""
    directory = str(REPO_ROOT / "benchmarks")
    sys.path.insert(0, directory)
    try:
        import bench_live_scale

        bench_live_scale.set_up(api_server, [WORKLOADS], [PODS])
        yield bench_live_scale
    finally:
        sys.path.remove(directory)


@pytest.fixture
def env(bench: Any, api_server: ApiServer, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    result: dict[str, str] = bench.tool_env(api_server, str(home))
    return result


def _lines(sample: Any) -> list[str]:
    return [line for line in sample.stdout.splitlines() if line.strip()]


def test_get_rows_and_requests(bench: Any, api_server: ApiServer, env: dict[str, str]) -> None:
    plain, every = bench.measure_get(api_server, env, None, [WORKLOADS], rounds=1)
    for results in (plain, every):
        header, *table = _lines(results[WORKLOADS].wmap)
        assert header.split()[0] == "NAME"
        names = [line.split()[0] for line in table]
        if results is every:
            assert {line.split()[1] for line in table} == {"Deployment"}  # the TYPE column
        assert sorted(names) == sorted(f"serve-{i:05d}" for i in range(WORKLOADS)), names[:3]
        assert _lines(results[0].wmap) == []  # an empty namespace: no rows (the message goes to stderr)
        # one page either way: the same requests for 0 and for 150 workloads, none per workload
        assert results[WORKLOADS].wmap.requests == results[0].wmap.requests
        assert results[0].wmap.requests is not None and results[0].wmap.requests >= 2
        assert results[WORKLOADS].kli is None


def test_describe_lists_every_pod_without_a_request_per_pod(
    bench: Any, api_server: ApiServer, env: dict[str, str]
) -> None:
    results = bench.measure_describe(api_server, env, None, [PODS], rounds=1)
    described = results[PODS].wmap.stdout
    assert sum(f"big-worker-{i} " in described or described.endswith(f"big-worker-{i}") for i in range(PODS)) == PODS
    assert "big-worker-" not in results[0].wmap.stdout
    assert results[PODS].wmap.requests == results[0].wmap.requests  # the pods come in one LIST page


def test_a_paced_watch_catches_up_without_a_request_per_change(
    bench: Any, api_server: ApiServer, env: dict[str, str]
) -> None:
    namespace = api_server.create_namespace("wmap-e2e-scale-watch")
    pods = bench.watch_set_up(api_server, namespace, 20)
    run = bench.paced_watch(api_server, env, namespace, pods, rate=20, seconds=3)
    assert run.changes == 60
    assert run.last_seen, run  # the last change (a replicas value no other change had) reached the output
    assert 1 <= run.documents <= run.changes + 1
    assert run.requests is not None and run.requests < 20, run  # lists and watches, not a request per change
    assert run.peak_kib > 0 and run.cpu > 0


def test_the_informer_cache_holds_every_workload(bench: Any, env: dict[str, str]) -> None:
    measured = bench.measure_informer(env, WORKLOADS)
    assert measured["workloads"] == measured["listed"] == WORKLOADS
    assert measured["json_bytes"] > 0
    rows = bench.informer_rows(env, [WORKLOADS])
    assert rows[0]["baseline"] == pytest.approx(measured["json_bytes"] / WORKLOADS, abs=1)
