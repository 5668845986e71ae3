"""The evaluation policy is explicit: the library evaluates where its caller's `EvaluationPolicy` says, and nowhere
else; it never reads `WMAP_JQ_*` (the CLI does) and keeps no process-wide mode.

The slow expression here is hostile but passes the static safety check (three nested iterations over 1,000 items:
10^9 steps, minutes in process), so only the worker's deadline stands between it and the caller.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from workload_map.jq import INPROCESS, EvaluationPolicy, JqLimitError, check_safety, evaluate, worker
from workload_map.model import load_definition
from workload_map.pods import PodQuerier
from workload_map.resolve import ExtractionError, Workload

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the jq worker tests need POSIX")

SRC = Path(__file__).resolve().parents[2] / "src"
SLOW = "reduce (.spec.points[] as $x | .spec.points[] as $y | .spec.points[]) as $z (0; . + 1) > 0"
KARTA = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "example-com-crunch-v1"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "crunch",
                "kind": {"group": "example.com", "version": "v1", "kind": "Crunch"},
                "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                "statusDefinition": {
                    "statusMappings": {"running": [{"byExpression": {"expression": SLOW, "expectedResult": "true"}}]}
                },
            }
        }
    },
}
CRUNCH = {
    "apiVersion": "example.com/v1",
    "kind": "Crunch",
    "metadata": {"name": "big", "namespace": "ml"},
    "spec": {
        "points": list(range(1000)),
        "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}},
    },
}
JQ_VARIABLES = ("WMAP_JQ_MODE", "WMAP_JQ_DEADLINE", "WMAP_JQ_MEMORY_MB")


@pytest.fixture
def no_jq_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in JQ_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    try:
        yield
    finally:
        worker.shutdown()


def test_the_slow_expression_is_one_the_safety_check_lets_through() -> None:
    assert check_safety(SLOW) == []


def test_an_explicit_worker_policy_stops_a_slow_safe_expression_at_its_deadline(no_jq_environment: None) -> None:
    stops: list[JqLimitError] = []
    policy = EvaluationPolicy("worker", deadline=1.0, stops=stops)
    started = time.monotonic()
    with pytest.raises(JqLimitError, match="evaluation exceeded the 1 s deadline"):
        evaluate(SLOW, CRUNCH, policy=policy)
    assert time.monotonic() - started < 30
    assert [stop.expression for stop in stops] == [SLOW]


def test_a_workload_evaluates_its_definition_under_its_policy(no_jq_environment: None) -> None:
    stops: list[JqLimitError] = []
    policy = EvaluationPolicy("worker", deadline=1.0, stops=stops)
    workload = Workload(load_definition(KARTA), CRUNCH, policy=policy)
    assert workload.policy is policy
    started = time.monotonic()
    with pytest.raises(ExtractionError, match="evaluation exceeded the 1 s deadline"):
        _ = workload.status
    assert time.monotonic() - started < 30
    assert [stop.expression for stop in stops] == [SLOW]
    assert Workload(load_definition(KARTA), CRUNCH).policy is INPROCESS  # no policy: in process


def test_pod_selectors_run_under_the_policy_they_are_given(no_jq_environment: None) -> None:
    pod = {"metadata": {"name": "p", "labels": {"role": "worker"}}}
    expr = '$ENV | has("PATH") and (keys | length) <= 2'  # the worker's environment holds PATH (and SYSTEMROOT)
    assert PodQuerier(pod, policy=EvaluationPolicy("worker")).evaluate(expr) == [True]
    assert PodQuerier(pod).evaluate('$ENV | has("WMAP_TEST_MARKER") | not') == [True]


def _run(script: str, env: dict[str, str]) -> str:
    """Run `script` in a fresh interpreter with `env` (and KARTA, CRUNCH defined); its stdout."""
    base = {key: value for key, value in os.environ.items() if key not in JQ_VARIABLES}
    prelude = "import json, sys\nKARTA, CRUNCH = json.loads(sys.argv[1])\n"
    result = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(script), json.dumps([KARTA, CRUNCH])],
        env={**base, "PYTHONPATH": str(SRC), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_environment_does_not_change_where_the_library_evaluates() -> None:
    """`WMAP_JQ_MODE=worker` (with a deadline and a cap that would stop anything) is the CLI's business: the library
    still evaluates compiled expressions in process (no worker started), libjq in the worker under the default
    policy's deadline and cap, and warns about nothing."""
    out = _run(
        """
        import warnings
        warnings.simplefilter("error")
        from workload_map.jq import Document, evaluate, worker
        from workload_map.model import load_definition
        from workload_map.resolve import Workload

        assert worker.worker_pids() == {}, "importing started a worker"
        assert Document({"a": [1, 2]}).evaluate(".a | add") == [3]
        karta = load_definition(KARTA)
        workload = Workload(karta, {**CRUNCH, "spec": {**CRUNCH["spec"], "points": [1, 2]}})
        assert workload.status.phase == "Running", workload.status
        assert worker.worker_pids() == {}, "compiled expressions started a worker"
        # $ENV is libjq's (not compiled): it runs in the worker, whose environment holds PATH alone, under the
        # default policy's deadline (not 0.001 s) and cap (1024 MiB, not 'abc')
        assert evaluate("$ENV.WMAP_JQ_MODE", {}) == [None]
        assert list(worker.worker_pids()) == [1024]
        print("in process")
        """,
        env={"WMAP_JQ_MODE": "worker", "WMAP_JQ_DEADLINE": "0.001", "WMAP_JQ_MEMORY_MB": "abc"},
    )
    assert out == "in process\n"


def test_importing_the_library_starts_no_worker() -> None:
    out = _run(
        """
        import threading
        import workload_map, workload_map.jq, workload_map.resolve, workload_map.view, workload_map.gang
        from workload_map.jq import worker
        print(worker.worker_pids(), threading.active_count())
        """,
        env={},
    )
    assert out == "{} 1\n"


def test_the_library_outside_the_cli_never_names_the_jq_environment_variables() -> None:
    package = SRC / "workload_map"
    readers = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "cli" not in path.relative_to(package).parts and any(name in path.read_text() for name in JQ_VARIABLES)
    ]
    assert readers == []
