"""Containment: in mode "worker" a runaway expression costs its deadline or memory cap, never the caller's process.

The limits here are short (1 s deadline, 256 MiB) so the tests stay quick; the runaway expressions are ones the
static safety check would reject, because the engine must contain whatever it is given.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator

import pytest

from workload_map.jq import (
    Document,
    JqCompileError,
    JqLimitError,
    JqParseError,
    JqRuntimeError,
    evaluate,
    get_mode,
    set_mode,
    worker,
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the memory cap and kill tests need POSIX")

# plain paths (`.metadata.name`) run on the fast path in the calling process; the worker runs everything else
OBJ = {"metadata": {"name": "x"}, "spec": {"items": [1, 2, 3]}}
RUNS_FOR_MINUTES = "[limit(100000000; repeat(1))] | length"
NEEDS_GIGABYTES = '"x" * 1000000000 | length'


@pytest.fixture
def contained() -> Iterator[None]:
    before = get_mode()
    set_mode("worker", deadline=1.0, memory_mb=256)
    try:
        yield
    finally:
        set_mode(before.mode, deadline=before.deadline, memory_mb=before.memory_mb)
        worker.shutdown()


def test_worker_mode_gives_the_same_results_and_errors_as_in_process(contained: None) -> None:
    exprs = [".metadata.name", ".spec.items[]", ".spec.missing[]", "nope(1)", ".a[[", "range(5000)"]
    in_worker = Document(OBJ).evaluate_many(exprs)
    in_process = Document(OBJ, mode="inprocess").evaluate_many(exprs)
    assert [r if isinstance(r, list) else (type(r), r.message) for r in in_worker] == [
        r if isinstance(r, list) else (type(r), r.message) for r in in_process
    ]
    assert isinstance(in_worker[2], JqRuntimeError)
    assert isinstance(in_worker[3], JqCompileError)
    assert isinstance(in_worker[4], JqParseError)
    assert isinstance(in_worker[5], JqLimitError)


def test_the_worker_is_reused_across_calls(contained: None) -> None:
    evaluate(".metadata.name | ascii_upcase", OBJ)
    first = worker.worker_pid()
    evaluate(".spec.items | length", OBJ)
    assert first is not None and worker.worker_pid() == first


def test_an_expression_past_the_deadline_fails_and_the_caller_carries_on(contained: None) -> None:
    with pytest.raises(JqLimitError, match="evaluation exceeded the 1 s deadline") as caught:
        evaluate(RUNS_FOR_MINUTES, OBJ, field_path="spec.statusDefinition")
    assert caught.value.field_path == "spec.statusDefinition"
    assert evaluate(".metadata.name", OBJ) == ["x"]


def test_a_catastrophic_regex_is_contained(contained: None) -> None:
    with pytest.raises(JqRuntimeError):  # oniguruma's retry limit, or our deadline, whichever comes first
        evaluate('("a" * 30 + "!") | test("(a+)+$")', OBJ)
    assert evaluate(".spec.items | length", OBJ) == [3]


def test_an_expression_past_the_memory_cap_fails_and_the_caller_carries_on(contained: None) -> None:
    with pytest.raises(JqLimitError, match="256 MiB memory cap"):
        evaluate(NEEDS_GIGABYTES, OBJ)
    assert evaluate(".metadata.name", OBJ) == ["x"]


def test_in_a_batch_only_the_runaway_expression_reports_the_limit(contained: None) -> None:
    results = Document(OBJ).evaluate_many([".metadata.name", RUNS_FOR_MINUTES, ".spec.items[0]"])
    assert results[0] == ["x"]
    assert isinstance(results[1], JqLimitError)
    assert results[2] == [1]


def test_a_killed_worker_is_replaced_and_the_next_call_works(contained: None) -> None:
    evaluate(".metadata.name | ascii_upcase", OBJ)
    pid = worker.worker_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert evaluate(".spec.items[1] + 1", OBJ) == [3]
    assert worker.worker_pid() not in (None, pid)


def test_a_forked_child_gets_its_own_worker_and_leaves_the_parents_alone(contained: None) -> None:
    evaluate(".metadata.name | ascii_upcase", OBJ)
    parent_worker = worker.worker_pid()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        ok = evaluate(".spec.items | add", OBJ) == [6] and worker.worker_pid() not in (None, parent_worker)
        worker.shutdown()
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert worker.worker_pid() == parent_worker
    assert evaluate(".spec.items | length", OBJ) == [3]


def test_the_worker_does_not_see_the_callers_environment(contained: None, monkeypatch: pytest.MonkeyPatch) -> None:
    worker.shutdown()
    monkeypatch.setenv("WMAP_TEST_SECRET", "hunter2")
    assert evaluate('$ENV | has("WMAP_TEST_SECRET")', OBJ) == [False]
    assert evaluate('$ENV | has("WMAP_TEST_SECRET")', OBJ, mode="inprocess") == [True]


def test_write_back_runs_its_paths_in_the_worker_too(contained: None) -> None:
    doc = Document({"spec": {"items": [{"n": 1}, {"n": 2}]}})
    doc.assign_each(".spec.items[].n", [10, 20])
    assert doc.obj == {"spec": {"items": [{"n": 10}, {"n": 20}]}}
    with pytest.raises(JqRuntimeError, match="not a path expression"):
        doc.paths(".spec.items | map(.n)")


def test_a_worker_that_cannot_start_is_reported_for_every_expression(
    contained: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    worker.shutdown()
    monkeypatch.setattr(sys, "executable", "/bin/false")
    results = Document(OBJ).evaluate_many([".spec.items | add", ".metadata.name | length"])
    assert all(isinstance(r, JqRuntimeError) and "cannot start the jq worker process" in r.message for r in results)
    monkeypatch.undo()
    worker.shutdown()
    assert evaluate(".spec.items | add", OBJ) == [6]


# --- settings ---------------------------------------------------------------------------------------------------


def test_set_mode_refuses_unknown_modes_and_bad_limits() -> None:
    with pytest.raises(ValueError, match="unknown jq evaluation mode"):
        set_mode("threads")
    with pytest.raises(ValueError, match="deadline"):
        set_mode("worker", deadline=0)
    with pytest.raises(ValueError, match="memory cap"):
        set_mode("worker", memory_mb=-1)


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WMAP_JQ_MODE", "worker")
    monkeypatch.setenv("WMAP_JQ_DEADLINE", "2.5")
    monkeypatch.setenv("WMAP_JQ_MEMORY_MB", "512")
    assert worker._from_environment() == worker.EvaluationMode("worker", 2.5, 512)


def test_bad_environment_values_are_ignored_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WMAP_JQ_MODE", "fast")
    monkeypatch.setenv("WMAP_JQ_DEADLINE", "soon")
    with pytest.warns(RuntimeWarning) as warned:
        settings = worker._from_environment()
    assert settings == worker.EvaluationMode()
    assert sorted(str(w.message).split("=")[0] for w in warned) == ["WMAP_JQ_DEADLINE", "WMAP_JQ_MODE"]
