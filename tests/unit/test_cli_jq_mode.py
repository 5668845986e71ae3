"""`--jq-mode auto|inprocess|worker` and `--jq-deadline`: where a definition's jq expressions run.

`auto` (the default) runs the expressions of definitions read from a cluster in the jq worker under the deadline,
and local and built-in ones in process. A definition whose status expression would run for many minutes in process
(a triple loop over 1,000 items: 10^9 steps; a catastrophic regex is no good, oniguruma gives up on its own) is cut
off at the deadline: the command still prints what it has, then ends with one `error:` line naming the definition
and the deadline, exit 1. Those runs use the installed executable so a containment regression fails at the
helper's timeout instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import EXAMPLES, REPO, Result, Wmap, invoke, run_installed
from workload_map.cli import context
from workload_map.cli.jqmode import Stop, definition_policy, evaluation_mode, stopped_error
from workload_map.jq import JqLimitError, worker

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the jq worker tests need POSIX")

RUNS_FOR_MINUTES = "reduce (.spec.points[] as $x | .spec.points[] as $y | .spec.points[]) as $z (0; . + 1) > 0"
SLOW_KARTA = {
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
                    "statusMappings": {
                        "running": [{"byExpression": {"expression": RUNS_FOR_MINUTES, "expectedResult": "true"}}]
                    }
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


@pytest.fixture
def wmap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Wmap]:
    monkeypatch.chdir(REPO)

    def call(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> Result:
        return invoke(args, home=tmp_path, stdin=stdin, env=env)

    yield call
    worker.shutdown()


@pytest.fixture
def slow(tmp_path: Path) -> tuple[str, str]:
    """(definition file, manifest file) of a workload whose status expression runs for minutes in process."""
    karta, manifest = tmp_path / "crunch-karta.yaml", tmp_path / "crunch.yaml"
    karta.write_text(yaml.safe_dump(SLOW_KARTA))
    manifest.write_text(yaml.safe_dump(CRUNCH))
    return str(karta), str(manifest)


def _installed(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return run_installed(list(args), home=home, env={"WMAP_JQ_MODE": "", "WMAP_JQ_DEADLINE": "", **(env or {})})


def _assert_stopped_at_the_deadline(result: Result) -> None:
    assert result.code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert lines[-2] == (
        'error: definition "example-com-crunch-v1" (local): evaluation exceeded the 1 s deadline in '
        "'reduce (.spec.points[] as $x | .spec.points[] as $y | .sp...'"
    )
    assert lines[-1].startswith("hint: the output is incomplete; allow more time with --jq-deadline SECONDS")
    # what did resolve is still printed, and the failed field is named in a warning
    assert result.stdout.startswith("Crunch/big")
    assert any(
        line.startswith("warning: Crunch/big") and "statusMappings.running[0]" in line and "1 s deadline" in line
        for line in lines
    )


# --- the decision ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("origin", "mode", "where"),
    [
        ("cluster", "auto", "worker"),
        ("local", "auto", "inprocess"),
        ("catalog", "auto", "inprocess"),
        ("cluster", "inprocess", "inprocess"),
        ("local", "worker", "worker"),
        ("catalog", "worker", "worker"),
    ],
)
def test_auto_contains_cluster_definitions_only_and_the_other_modes_apply_to_all(
    origin: str, mode: str, where: str
) -> None:
    assert evaluation_mode(origin, mode) == where


def test_a_definition_policy_evaluates_where_the_run_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no config file
    monkeypatch.delenv("WMAP_CONFIG", raising=False)
    context.reset()
    policy = definition_policy("a-cluster-karta", "cluster")
    assert policy.mode == "worker"
    policy = definition_policy("a-local-karta", "local")
    assert policy.mode == "inprocess"
    state = context.reset()
    state.jq_mode, state.jq_deadline = "worker", 2.5
    policy = definition_policy("core-pod-v1", "catalog")
    assert (policy.mode, policy.deadline) == ("worker", 2.5)


def test_the_config_file_sets_the_mode_when_no_flag_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("jq-mode: worker\njq-deadline: 3\n")
    monkeypatch.setenv("WMAP_CONFIG", str(config))
    context.reset()
    policy = definition_policy("a-local-karta", "local")
    assert (policy.mode, policy.deadline) == ("worker", 3.0)
    state = context.reset()
    state.jq_mode = "inprocess"  # the flag wins; the deadline still comes from the file
    policy = definition_policy("a-cluster-karta", "cluster")
    assert (policy.mode, policy.deadline) == ("inprocess", 3.0)


def test_a_definition_policy_has_the_runs_memory_cap_and_records_its_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no config file
    monkeypatch.delenv("WMAP_CONFIG", raising=False)
    state = context.reset()
    policy = definition_policy("a-cluster-karta", "cluster")
    assert (policy.deadline, policy.memory_mb) == (10.0, 1024)  # the jq layer's defaults
    state.jq_memory_mb = 512
    policy = definition_policy("a-cluster-karta", "cluster")
    assert policy.memory_mb == 512
    stop = JqLimitError(".a", "evaluation exceeded the 10 s deadline")
    assert policy.stopped(stop) is stop
    assert state.jq_stops == [Stop("a-cluster-karta", "cluster", stop)]
    context.reset()


def test_a_memory_cap_stop_says_how_to_raise_the_cap() -> None:
    state = context.reset()
    state.jq_stops.append(
        Stop("x-v1", "cluster", JqLimitError('"x" * 1e9', "evaluation exceeded the 1024 MiB memory cap"))
    )
    state.jq_stops.append(Stop("x-v1", "cluster", JqLimitError(".a", "evaluation exceeded the 10 s deadline")))
    error = stopped_error()
    assert error is not None and error.exit_code == 1
    assert error.message == (
        'definition "x-v1" (cluster): evaluation exceeded the 1024 MiB memory cap in \'"x" * 1e9\' '
        "(and 1 more stopped evaluation)"
    )
    assert error.hint is not None and "WMAP_JQ_MEMORY_MB" in error.hint
    context.reset()


# --- the command line ----------------------------------------------------------------------------------------------


def test_worker_mode_stops_a_runaway_local_definition_at_the_deadline(tmp_path: Path, slow: tuple[str, str]) -> None:
    karta, manifest = slow
    result = _installed(
        tmp_path, "--jq-mode", "worker", "--jq-deadline", "1", "describe", "-f", manifest, "--definitions", karta
    )
    _assert_stopped_at_the_deadline(result)


def test_the_environment_chooses_the_mode_and_deadline_too(tmp_path: Path, slow: tuple[str, str]) -> None:
    karta, manifest = slow
    result = _installed(
        tmp_path,
        "describe",
        "-f",
        manifest,
        "--definitions",
        karta,
        env={"WMAP_JQ_MODE": "Worker", "WMAP_JQ_DEADLINE": "1"},
    )
    _assert_stopped_at_the_deadline(result)


def test_the_config_file_chooses_the_mode_and_deadline_too(tmp_path: Path, slow: tuple[str, str]) -> None:
    karta, manifest = slow
    config = tmp_path / "wmap.yaml"
    config.write_text("jq-mode: worker\njq-deadline: 1\n")
    result = _installed(tmp_path, "--config", str(config), "describe", "-f", manifest, "--definitions", karta)
    _assert_stopped_at_the_deadline(result)


def test_every_mode_gives_the_same_view_of_a_well_behaved_workload(wmap: Wmap) -> None:
    manifest = str(EXAMPLES / "jobset.yaml")
    views = {mode: wmap("--jq-mode", mode, "describe", "-f", manifest, "-o", "json") for mode in ("auto", "worker")}
    assert all(result.code == 0 and not result.stderr for result in views.values())
    assert json.loads(views["auto"].stdout) == json.loads(views["worker"].stdout)


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--jq-mode", "threads"], {}, "error: --jq-mode is 'threads'; use one of auto, inprocess, worker"),
        ([], {"WMAP_JQ_MODE": "fast"}, "error: $WMAP_JQ_MODE is 'fast'; use one of auto, inprocess, worker"),
        (["--jq-deadline", "0"], {}, "error: --jq-deadline is '0'; give a positive number of seconds"),
        (["--jq-deadline", "soon"], {}, "error: --jq-deadline is 'soon'; give a positive number of seconds"),
        ([], {"WMAP_JQ_DEADLINE": "-3"}, "error: $WMAP_JQ_DEADLINE is '-3'; give a positive number of seconds"),
        ([], {"WMAP_JQ_MEMORY_MB": "abc"}, "error: $WMAP_JQ_MEMORY_MB is 'abc'; give a whole number of MiB"),
        ([], {"WMAP_JQ_MEMORY_MB": "-1"}, "error: $WMAP_JQ_MEMORY_MB is '-1'; give a whole number of MiB"),
    ],
)
def test_a_bad_mode_or_deadline_is_a_usage_error(
    wmap: Wmap, args: list[str], env: dict[str, str], message: str
) -> None:
    result = wmap(*args, "describe", "-f", str(EXAMPLES / "jobset.yaml"), env=env)
    assert result.code == 2
    assert result.stderr.startswith(message)
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("jq-mode: threads\n", "jq-mode is 'threads'; use one of auto, inprocess, worker"),
        ("jq-deadline: 0\n", "jq-deadline is 0; give a positive number of seconds"),
        ("jq-deadline: soon\n", "jq-deadline is 'soon'; give a positive number of seconds"),
    ],
)
def test_a_bad_jq_setting_in_the_config_file_names_the_key(wmap: Wmap, tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    result = wmap("--config", str(config), "describe", "-f", str(EXAMPLES / "jobset.yaml"))
    assert result.code == 2
    assert message in result.stderr


def test_the_root_help_lists_the_jq_options_and_the_modes_complete(wmap: Wmap) -> None:
    result = wmap("--help")
    assert "--jq-mode [auto|inprocess|worker]" in result.stdout
    assert "--jq-deadline SECONDS" in result.stdout
    completed = wmap(env={"_WMAP_COMPLETE": "bash_complete", "COMP_WORDS": "wmap --jq-mode in", "COMP_CWORD": "2"})
    assert completed.code == 0
    assert completed.stdout.split() == ["plain,inprocess"]
