"""Stopped evaluations in a command (issue 16).

* Nothing in process can be crashed: a local definition (evaluated "inprocess" by default) whose expression would
  segfault libjq or allocate gigabytes ends `wmap` with exit 1 and one `error:` line naming the definition, whether
  the compiler covers it (its step budget and output depth stop it) or not (libjq runs it in the worker, which
  dies). Those runs use the installed executable, a child process: a regression is its exit -11, not ours.
* A definition stopped once is not evaluated again in the command, within one workload too: 40 pods against a
  hostile keyPath cost one evaluation, not 40 (counted, not timed).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import REPO, Result, run_installed, write
from tests.unit.test_cli_jq_mode import CRUNCH, SLOW_KARTA
from workload_map.cli import context
from workload_map.cli.jqmode import definition_policy, stopped_error
from workload_map.jq import document, worker
from workload_map.model import load_definition
from workload_map.pods import attribute
from workload_map.resolve import Workload

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the jq worker tests need POSIX")

NESTS_TWO_TO_THE_20 = "def f: (.,.); def g: f|f|f|f|f|f|f|f|f|f; reduce (g|g) as $x (null; [.])"
HUGE_ERROR = 'error("x"*300000000)'
NOT_COMPILED = '("x" | test("x")) as $t | '  # a regex: the compiler leaves the expression to libjq
HOSTILE_KEY_PATH = "[.spec.points[] as $x | .spec.points[] as $y | .spec.points[]] | length | tostring"


@pytest.fixture
def fresh_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[context.State]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no config file
    monkeypatch.delenv("WMAP_CONFIG", raising=False)
    worker.shutdown()
    try:
        yield context.reset()
    finally:
        context.reset()
        worker.shutdown()


def _definition(tmp_path: Path, status_expression: str) -> str:
    karta = copy.deepcopy(SLOW_KARTA)
    root = karta["spec"]["structureDefinition"]["rootComponent"]
    root["statusDefinition"]["statusMappings"]["running"][0]["byExpression"]["expression"] = status_expression
    return write(tmp_path / "crunch-karta.yaml", yaml.safe_dump(karta))


def _installed(tmp_path: Path, *args: str) -> Result:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return run_installed(list(args), home=home, cwd=REPO)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (NESTS_TWO_TO_THE_20, "evaluation exceeded the step budget (1000000 steps)"),
        (HUGE_ERROR, "evaluation exceeded the step budget (1000000 steps)"),
        (NOT_COMPILED + NESTS_TWO_TO_THE_20, "the jq worker process died during the evaluation"),
        (NOT_COMPILED + HUGE_ERROR, "the jq worker process died during the evaluation"),
    ],
)
@pytest.mark.parametrize("mode", [None, "inprocess"])
def test_a_crashing_local_definition_is_exit_1_naming_it(
    tmp_path: Path, expression: str, message: str, mode: str | None
) -> None:
    karta = _definition(tmp_path, expression)
    manifest = write(tmp_path / "crunch.yaml", yaml.safe_dump({**CRUNCH, "spec": {**CRUNCH["spec"], "points": [1]}}))
    flags = ["--jq-mode", mode] if mode else []
    result = _installed(tmp_path, *flags, "describe", "-f", manifest, "--definitions", karta)
    assert result.code == 1, result.output
    assert "Traceback" not in result.output
    assert result.stdout.startswith("Crunch/big")  # what resolved is still shown
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1
    assert errors[0].startswith(f'error: definition "example-com-crunch-v1" (local): {message}')


def _hostile_workload(points: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    karta = copy.deepcopy(SLOW_KARTA)
    root = karta["spec"]["structureDefinition"]["rootComponent"]
    root["statusDefinition"]["statusMappings"]["running"][0]["byExpression"]["expression"] = ".spec.points | length > 0"
    root["podSelector"] = {"componentTypeSelector": {"keyPath": HOSTILE_KEY_PATH, "value": "x"}}
    obj = copy.deepcopy(CRUNCH)
    obj["metadata"]["uid"] = "uid-big"
    owner = {"apiVersion": "example.com/v1", "kind": "Crunch", "name": "big", "uid": "uid-big", "controller": True}
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"big-{index}", "namespace": "ml", "ownerReferences": [owner]},
            "spec": {"points": list(range(points)), "containers": [{"name": "main", "image": "busybox"}]},
        }
        for index in range(40)
    ]
    return karta, pods


def test_forty_pods_against_a_hostile_key_path_cost_one_worker_evaluation(
    fresh_run: context.State, monkeypatch: pytest.MonkeyPatch
) -> None:
    karta, pods = _hostile_workload(points=1000)
    fresh_run.jq_mode, fresh_run.jq_deadline = "worker", 1.0
    requests: list[list[str]] = []
    real_request = worker._Process.request

    def counted(self: worker._Process, payload: dict[str, Any], deadline: float) -> dict[str, Any]:
        requests.append(payload["exprs"])
        return real_request(self, payload, deadline)

    monkeypatch.setattr(worker._Process, "request", counted)
    policy = definition_policy("example-com-crunch-v1", "local")
    resolution = Workload(
        load_definition(karta), CRUNCH | {"metadata": {**CRUNCH["metadata"], "uid": "uid-big"}}, policy=policy
    ).resolve()
    result = attribute(resolution, pods)
    assert [exprs for exprs in requests if HOSTILE_KEY_PATH in exprs] == [[HOSTILE_KEY_PATH]]  # once, not 40 times
    assert len(fresh_run.jq_stops) == 1
    assert "1 s deadline" in fresh_run.jq_stops[0].error.message
    assert len(result.pods) == 40  # every pod was still placed (the sole pod-bearing component takes it)
    refusal = policy.refusal(HOSTILE_KEY_PATH)
    assert refusal is not None and "was stopped earlier in this command" in refusal.message
    error = stopped_error()
    assert error is not None and error.message.startswith('definition "example-com-crunch-v1" (local)')


def test_forty_pods_against_a_hostile_key_path_cost_one_compiled_evaluation(
    fresh_run: context.State, monkeypatch: pytest.MonkeyPatch
) -> None:
    karta, pods = _hostile_workload(points=200)  # 8 million steps: past the budget, in process
    runs: list[str] = []
    real_run_fast = document._run_fast

    def counted(info: Any, tree: Any, max_results: int) -> Any:
        runs.append(info.expression)
        return real_run_fast(info, tree, max_results)

    monkeypatch.setattr(document, "_run_fast", counted)
    policy = definition_policy("example-com-crunch-v1", "local")
    assert policy.mode == "inprocess"
    resolution = Workload(
        load_definition(karta), CRUNCH | {"metadata": {**CRUNCH["metadata"], "uid": "uid-big"}}, policy=policy
    ).resolve()
    result = attribute(resolution, pods)
    assert runs.count(HOSTILE_KEY_PATH) == 1
    assert [stop.error.message for stop in fresh_run.jq_stops] == [
        "evaluation exceeded the step budget (1000000 steps)"
    ]
    assert len(result.pods) == 40
    assert worker.worker_pids() == {}  # the hostile expression never needed libjq


def test_the_commands_budget_counts_the_time_of_every_worker_request(
    fresh_run: context.State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Evaluations that each finish inside the deadline still spend the command's budget: once it is spent,
    nothing more is evaluated, in this workload or another."""
    fresh_run.jq_mode, fresh_run.jq_budget = "worker", 5.0
    policy = definition_policy("example-com-crunch-v1", "local")
    assert policy.refusal(".a") is None
    policy.spent(4.0)
    assert policy.refusal(".a") is None
    policy.spent(1.5)
    refusal = policy.refusal(".a")
    assert refusal is not None
    assert "the command's time budget for contained jq evaluation (5 s) is spent" in refusal.message
    other = definition_policy("another-v1", "catalog")
    assert other.refusal(".b") is not None
