"""Nothing in process can be crashed (issue 16): under the default policy (`INPROCESS`) only plain paths and the
compiled evaluator run in the calling process, bounded by the step budget and the output depth; whatever the
compiler does not cover runs in the jq worker, so an expression that segfaults libjq kills only the worker.

The crashing cases run in a child interpreter: if containment regressed, the child dies (a segfault, exit -11)
instead of the test process, and the assertion on its exit code fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from workload_map.jq import INPROCESS, Document, EvaluationPolicy, JqLimitError, engine, evaluate, paths, worker
from workload_map.jq.compiler import InProcessStopError, covered

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the jq worker tests need POSIX")

SRC = Path(__file__).resolve().parents[2] / "src"
# the issue's expression: arrays nested 2^20 deep; libjq's binding segfaults converting the result
NESTS_TWO_TO_THE_20 = "def f: (.,.); def g: f|f|f|f|f|f|f|f|f|f; reduce (g|g) as $x (null; [.])"
HUGE_ERROR = 'error("x"*300000000)'
# the same two with a regular expression in front: the compiler does not cover `test`, so libjq runs them
UNCOMPILED_NESTS = f'("x" | test("x")) as $t | {NESTS_TWO_TO_THE_20}'
UNCOMPILED_HUGE_ERROR = f'("x" | test("x")) as $t | {HUGE_ERROR}'
# 2^16 levels within the step budget: the output itself is too deep for whatever reads it
DEEP_OUTPUT = "def f: (.,.); def g: f|f|f|f|f|f|f|f|f|f|f|f|f|f|f|f; reduce g as $x (null; [.])"


@pytest.fixture
def fresh_workers() -> Iterator[None]:
    worker.shutdown()
    try:
        yield
    finally:
        worker.shutdown()


def _in_child(expression: str) -> dict[str, str]:
    """Evaluate `expression` on `{}` under the default policy in a fresh interpreter: what it raised."""
    script = textwrap.dedent(
        """
        import json, sys
        from workload_map.jq import evaluate
        try:
            outputs = evaluate(sys.argv[1], {})
        except Exception as exc:
            print(json.dumps({"class": type(exc).__name__, "message": exc.message}))
        else:
            print(json.dumps({"class": None, "message": repr(outputs)[:200]}))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", script, expression], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, f"the child died ({done.returncode}): {done.stderr[-2000:]}"
    result: dict[str, str] = json.loads(done.stdout)
    return result


def test_the_issues_expressions_are_compiled_so_they_run_in_process_under_the_budget() -> None:
    assert covered(NESTS_TWO_TO_THE_20)
    assert covered(HUGE_ERROR)
    assert not covered(UNCOMPILED_NESTS)
    assert not covered(UNCOMPILED_HUGE_ERROR)


@pytest.mark.parametrize(
    ("expression", "error_class", "message"),
    [
        (NESTS_TWO_TO_THE_20, "InProcessStopError", "evaluation exceeded the step budget (1000000 steps)"),
        (HUGE_ERROR, "InProcessStopError", "evaluation exceeded the step budget (1000000 steps)"),
        (DEEP_OUTPUT, "InProcessStopError", "an output is nested more than 500 levels deep"),
        (UNCOMPILED_NESTS, "JqLimitError", "the jq worker process died during the evaluation"),
        (UNCOMPILED_HUGE_ERROR, "JqLimitError", "the jq worker process died during the evaluation"),
    ],
)
def test_a_crashing_expression_is_a_clean_error_under_the_default_policy(
    expression: str, error_class: str, message: str
) -> None:
    raised = _in_child(expression)
    assert raised["class"] == error_class
    assert raised["message"].startswith(message)


def test_libjq_is_never_called_in_the_calling_process(fresh_workers: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("libjq ran in the calling process")

    monkeypatch.setattr(engine, "run_batch", refuse)
    monkeypatch.setattr(engine, "run_one", refuse)
    obj = {"spec": {"items": [{"n": 1}, {"n": 2}], "name": "abc"}}
    # not covered by the compiler (a regex, $ENV, a recursive builtin, a path): the worker answers
    assert evaluate('.spec.name | test("b")', obj) == [True]
    assert evaluate("[.spec | .. | numbers]", obj) == [[1, 2]]
    assert paths(".spec.items[].n", obj) == [["spec", "items", 0, "n"], ["spec", "items", 1, "n"]]
    assert worker.worker_pid(INPROCESS) is not None
    # covered ones run in process
    assert evaluate(".spec.items | map(.n) | add", obj) == [3]


def test_the_default_policys_deadline_bounds_what_libjq_runs(fresh_workers: None) -> None:
    stops: list[JqLimitError] = []
    policy = EvaluationPolicy(deadline=1.0, stops=stops)  # mode "inprocess"
    slow = '[limit(100000000; repeat("x"))] | map(test("y")) | length'
    with pytest.raises(JqLimitError, match="evaluation exceeded the 1 s deadline"):
        evaluate(slow, {}, policy=policy)
    assert [stop.expression for stop in stops] == [slow]


def test_an_in_process_stop_is_recorded_but_the_output_cap_is_not() -> None:
    stops: list[JqLimitError] = []
    policy = EvaluationPolicy(stops=stops)
    results = Document({}, policy=policy).evaluate_many([HUGE_ERROR, "[range(2000)][]", DEEP_OUTPUT])
    assert isinstance(results[0], InProcessStopError)
    assert isinstance(results[1], JqLimitError) and not isinstance(results[1], InProcessStopError)
    assert isinstance(results[2], InProcessStopError)
    assert [stop.expression for stop in stops] == [HUGE_ERROR, DEEP_OUTPUT]


def test_a_shallow_result_of_a_reduction_is_not_refused() -> None:
    assert evaluate("reduce range(499) as $x (null; [.]) | [paths] | length", {}) == [499]
    deep = evaluate("reduce range(499) as $x (null; [.])", {})[0]
    levels = 0
    while isinstance(deep, list):
        deep, levels = deep[0] if deep else None, levels + 1
    assert levels == 499


class _RefusesAfterOneStop(list[JqLimitError]):
    """A recorder that refuses every evaluation once one was stopped (as the CLI's does per definition)."""

    def refuse(self, expression: str) -> JqLimitError | None:
        return JqLimitError(expression, "refused: stopped before") if self else None


def test_a_recorder_can_refuse_evaluations_after_a_stop() -> None:
    stops = _RefusesAfterOneStop()
    policy = EvaluationPolicy(stops=stops)
    with pytest.raises(InProcessStopError):
        evaluate(HUGE_ERROR, {}, policy=policy)
    with pytest.raises(JqLimitError, match="refused: stopped before"):
        evaluate(".a", {"a": 1}, policy=policy)
    with pytest.raises(JqLimitError, match="refused: stopped before"):
        paths(".a", {"a": 1}, policy=policy)
    assert len(stops) == 1
