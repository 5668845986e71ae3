"""Containment: under a "worker" policy a runaway expression costs its deadline or memory cap, never the caller's
process.

The limits here are short (1 s deadline, 256 MiB) so the tests stay quick; the runaway expressions are ones the
static safety check would reject, because the engine must contain whatever it is given. Every evaluation names its
`EvaluationPolicy`; there is no process-wide mode to set.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator

import pytest

from workload_map.jq import (
    INPROCESS,
    Document,
    EvaluationPolicy,
    JqCompileError,
    JqLimitError,
    JqParseError,
    JqRuntimeError,
    evaluate,
    worker,
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the memory cap and kill tests need POSIX")

# plain paths (`.metadata.name`) run on the fast path in the calling process; the worker runs everything else
OBJ = {"metadata": {"name": "x"}, "spec": {"items": [1, 2, 3]}}
RUNS_FOR_MINUTES = "[limit(100000000; repeat(1))] | length"
NEEDS_GIGABYTES = '"x" * 1000000000 | length'
WORKER = EvaluationPolicy("worker", deadline=1.0, memory_mb=256)


@pytest.fixture
def contained() -> Iterator[EvaluationPolicy]:
    try:
        yield WORKER
    finally:
        worker.shutdown()


def test_worker_mode_gives_the_same_results_and_errors_as_in_process(contained: EvaluationPolicy) -> None:
    exprs = [".metadata.name", ".spec.items[]", ".spec.missing[]", "nope(1)", ".a[[", "range(5000)"]
    in_worker = Document(OBJ, policy=contained).evaluate_many(exprs)
    in_process = Document(OBJ, policy=INPROCESS).evaluate_many(exprs)
    assert [r if isinstance(r, list) else (type(r), r.message) for r in in_worker] == [
        r if isinstance(r, list) else (type(r), r.message) for r in in_process
    ]
    assert isinstance(in_worker[2], JqRuntimeError)
    assert isinstance(in_worker[3], JqCompileError)
    assert isinstance(in_worker[4], JqParseError)
    assert isinstance(in_worker[5], JqLimitError)


def test_the_worker_is_reused_across_calls(contained: EvaluationPolicy) -> None:
    evaluate(".metadata.name | ascii_upcase", OBJ, policy=contained)
    first = worker.worker_pid(contained)
    evaluate(".spec.items | length", OBJ, policy=contained)
    assert first is not None and worker.worker_pid(contained) == first


def test_an_expression_past_the_deadline_fails_and_the_caller_carries_on(contained: EvaluationPolicy) -> None:
    with pytest.raises(JqLimitError, match="evaluation exceeded the 1 s deadline") as caught:
        evaluate(RUNS_FOR_MINUTES, OBJ, field_path="spec.statusDefinition", policy=contained)
    assert caught.value.field_path == "spec.statusDefinition"
    assert evaluate(".metadata.name", OBJ, policy=contained) == ["x"]


def test_a_catastrophic_regex_is_contained(contained: EvaluationPolicy) -> None:
    with pytest.raises(JqRuntimeError):  # oniguruma's retry limit, or our deadline, whichever comes first
        evaluate('("a" * 30 + "!") | test("(a+)+$")', OBJ, policy=contained)
    assert evaluate(".spec.items | length", OBJ, policy=contained) == [3]


def test_an_expression_past_the_memory_cap_fails_and_the_caller_carries_on(contained: EvaluationPolicy) -> None:
    with pytest.raises(JqLimitError, match="256 MiB memory cap"):
        evaluate(NEEDS_GIGABYTES, OBJ, policy=contained)
    assert evaluate(".metadata.name", OBJ, policy=contained) == ["x"]


def test_in_a_batch_only_the_runaway_expression_reports_the_limit(contained: EvaluationPolicy) -> None:
    results = Document(OBJ, policy=contained).evaluate_many([".metadata.name", RUNS_FOR_MINUTES, ".spec.items[0]"])
    assert results[0] == ["x"]
    assert isinstance(results[1], JqLimitError)
    assert results[2] == [1]


def test_a_killed_worker_is_replaced_and_the_next_call_works(contained: EvaluationPolicy) -> None:
    evaluate(".metadata.name | ascii_upcase", OBJ, policy=contained)
    pid = worker.worker_pid(contained)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert evaluate(".spec.items[1] + 1", OBJ, policy=contained) == [3]
    assert worker.worker_pid(contained) not in (None, pid)


def test_a_forked_child_gets_its_own_worker_and_leaves_the_parents_alone(contained: EvaluationPolicy) -> None:
    evaluate(".metadata.name | ascii_upcase", OBJ, policy=contained)
    parent_worker = worker.worker_pid(contained)
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        ok = evaluate(".spec.items | add", OBJ, policy=contained) == [6]
        ok = ok and worker.worker_pid(contained) not in (None, parent_worker)
        worker.shutdown()
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert worker.worker_pid(contained) == parent_worker
    assert evaluate(".spec.items | length", OBJ, policy=contained) == [3]


def test_the_worker_does_not_see_the_callers_environment(
    contained: EvaluationPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    worker.shutdown()
    monkeypatch.setenv("WMAP_TEST_SECRET", "hunter2")
    assert evaluate('$ENV | has("WMAP_TEST_SECRET")', OBJ, policy=contained) == [False]
    # libjq never runs in the calling process: under INPROCESS too, $ENV is the worker's
    assert evaluate('$ENV | has("WMAP_TEST_SECRET")', OBJ, policy=INPROCESS) == [False]


def test_write_back_runs_its_paths_in_the_worker_too(contained: EvaluationPolicy) -> None:
    doc = Document({"spec": {"items": [{"n": 1}, {"n": 2}]}}, policy=contained)
    doc.assign_each(".spec.items[].n", [10, 20])
    assert doc.obj == {"spec": {"items": [{"n": 10}, {"n": 20}]}}
    with pytest.raises(JqRuntimeError, match="not a path expression"):
        doc.paths(".spec.items | map(.n)")


def test_a_worker_that_cannot_start_is_reported_for_every_expression(
    contained: EvaluationPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    worker.shutdown()
    monkeypatch.setattr(sys, "executable", "/bin/false")
    results = Document(OBJ, policy=contained).evaluate_many([".spec.items | add", ".metadata.name | length"])
    assert all(isinstance(r, JqRuntimeError) and "cannot start the jq worker process" in r.message for r in results)
    monkeypatch.undo()
    worker.shutdown()
    assert evaluate(".spec.items | add", OBJ, policy=contained) == [6]


# --- the policy ---------------------------------------------------------------------------------------------


def test_a_policy_refuses_unknown_modes_and_bad_limits() -> None:
    with pytest.raises(ValueError, match="unknown jq evaluation mode"):
        EvaluationPolicy("threads")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown jq evaluation mode"):
        EvaluationPolicy("auto")  # type: ignore[arg-type]  # auto is the CLI's choice by origin, not a mode
    with pytest.raises(ValueError, match="deadline"):
        EvaluationPolicy("worker", deadline=0)
    with pytest.raises(ValueError, match="deadline"):
        EvaluationPolicy("worker", deadline=float("inf"))
    with pytest.raises(ValueError, match="memory cap"):
        EvaluationPolicy("worker", memory_mb=-1)


def test_the_documented_defaults() -> None:
    assert INPROCESS == EvaluationPolicy() == EvaluationPolicy("inprocess", deadline=10.0, memory_mb=1024)
    assert Document(OBJ).policy is INPROCESS


def test_a_policy_records_the_stops_in_the_callers_recorder_and_nothing_else() -> None:
    stops: list[JqLimitError] = []
    policy = EvaluationPolicy("worker", deadline=1.0, memory_mb=256, stops=stops)
    assert policy == WORKER  # the recorder is not part of the policy's equality
    try:
        results = Document(OBJ, policy=policy).evaluate_many([RUNS_FOR_MINUTES, ".spec.items | add", "nope(1)"])
        assert isinstance(results[0], JqLimitError) and "exceeded the 1 s deadline" in results[0].message
        assert results[1] == [6]
        assert isinstance(results[2], JqCompileError)  # an ordinary error is not a stop
        assert [stop.expression for stop in stops] == [RUNS_FOR_MINUTES]
        with pytest.raises(JqLimitError):  # the same worker, without a recorder: nothing recorded anywhere
            evaluate(RUNS_FOR_MINUTES, OBJ, policy=WORKER)
        assert len(stops) == 1
    finally:
        worker.shutdown()


def test_policies_with_one_memory_cap_share_a_worker_and_keep_their_own_deadlines() -> None:
    quick, patient = EvaluationPolicy("worker", deadline=1.0), EvaluationPolicy("worker", deadline=30.0)
    try:
        assert evaluate(".spec.items | add", OBJ, policy=patient) == [6]
        pid = worker.worker_pid(patient)
        with pytest.raises(JqLimitError, match="exceeded the 1 s deadline"):
            evaluate(RUNS_FOR_MINUTES, OBJ, policy=quick)
        assert worker.worker_pid(quick) not in (None, pid)  # replaced after the stop
        assert worker.worker_pid(quick) == worker.worker_pid(patient)
        assert evaluate(".spec.items | length", OBJ) == [3]  # no policy: in process, whatever ran before
        assert list(worker.worker_pids()) == [1024]
    finally:
        worker.shutdown()
    assert worker.worker_pids() == {}


def test_a_policy_is_not_a_string() -> None:
    with pytest.raises(TypeError, match="EvaluationPolicy"):
        Document(OBJ, policy="worker")  # type: ignore[arg-type]
