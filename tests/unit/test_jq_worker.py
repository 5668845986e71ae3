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
    mode_scope,
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


def test_auto_in_the_environment_is_the_library_default_without_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WMAP_JQ_MODE", "auto")
    monkeypatch.delenv("WMAP_JQ_DEADLINE", raising=False)
    monkeypatch.delenv("WMAP_JQ_MEMORY_MB", raising=False)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert worker._from_environment() == worker.EvaluationMode()


# --- mode_scope -------------------------------------------------------------------------------------------------


def test_a_mode_scope_contains_a_runaway_expression_and_records_the_stop() -> None:
    before = get_mode()
    try:
        with mode_scope("worker", deadline=1.0, memory_mb=256) as scope:
            assert get_mode() == worker.EvaluationMode("worker", 1.0, 256)
            results = Document(OBJ).evaluate_many([RUNS_FOR_MINUTES, ".spec.items | add", "nope(1)"])
        assert isinstance(results[0], JqLimitError) and "exceeded the 1 s deadline" in results[0].message
        assert results[1] == [6]
        assert isinstance(results[2], JqCompileError)  # an ordinary error is not a stop
        assert [stop.expression for stop in scope.stopped] == [RUNS_FOR_MINUTES]
    finally:
        worker.shutdown()
    assert get_mode() == before  # leaving the scope restores the settings in force outside


def test_mode_scopes_nest_and_a_stop_is_recorded_in_every_enclosing_scope() -> None:
    try:
        with mode_scope("worker", deadline=1.0, memory_mb=256) as outer:
            with mode_scope("inprocess") as inner:
                assert get_mode().mode == "inprocess" and get_mode().deadline == 1.0
                assert evaluate(".spec.items | length", OBJ) == [3]
            assert get_mode().mode == "worker"
            with mode_scope(deadline=1.0) as again, pytest.raises(JqLimitError):
                evaluate(RUNS_FOR_MINUTES, OBJ)
        assert inner.stopped == []
        assert len(again.stopped) == 1 and outer.stopped == again.stopped
    finally:
        worker.shutdown()


def test_a_mode_scope_does_not_leak_into_other_threads() -> None:
    import threading

    seen: list[str] = []
    with mode_scope("worker", deadline=3.0):
        thread = threading.Thread(target=lambda: seen.append(get_mode().mode))
        thread.start()
        thread.join()
    assert seen == [get_mode().mode]


def test_set_mode_inside_a_scope_changes_the_process_setting_not_the_scope() -> None:
    before = get_mode()
    try:
        with mode_scope("worker", deadline=4.0):
            set_mode("inprocess", deadline=7.0)
            assert get_mode() == worker.EvaluationMode("worker", 4.0, before.memory_mb)
        assert get_mode() == worker.EvaluationMode("inprocess", 7.0, before.memory_mb)
    finally:
        set_mode(before.mode, deadline=before.deadline, memory_mb=before.memory_mb)


def test_mode_scope_refuses_unknown_modes_and_bad_limits() -> None:
    with pytest.raises(ValueError, match="unknown jq evaluation mode"), mode_scope("auto"):
        pass
    with pytest.raises(ValueError, match="deadline"), mode_scope("worker", deadline=0):
        pass
    with pytest.raises(ValueError, match="memory cap"), mode_scope(memory_mb=-1):
        pass
