"""The installed executables (`wmap`, `kubectl-wmap`, `kubectl_complete-wmap`, `python -m workload_map`) run as a
user runs them: each bad input gives one clear `error:` line, the right exit code, nothing misleading on stdout and
never a traceback. (`pip install -e . --no-deps` installs the scripts.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import REPO, Result, clean_env, executable, run_installed
from workload_map import __version__

FLINK = """\
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: etl}
spec:
  podTemplate:
    spec:
      containers: [{name: flink, image: flink:1.19}]
"""
BAD_DEFINITION = """\
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: broken}
spec:
  structureDefinition:
    rootComponent:
      name: r
      kind: {group: a.io, version: v1, kind: Foo}
      specDefinition: {podSpecPath: .spec.template.spec}
"""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inputs")
    (root / "invalid.yaml").write_text("apiVersion: v1\nkind: [Pod\n")
    (root / "nokind.yaml").write_text("metadata: {name: x}\nspec: {replicas: 2}\n")
    (root / "flink.yaml").write_text(FLINK)
    (root / "bad-definition.yaml").write_text(BAD_DEFINITION)
    (root / "configs").mkdir()
    (root / "configs" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")
    (root / "configs" / "svc.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: {name: web}\n")
    return root


def one_error(result: Result, code: int, needle: str) -> None:
    assert result.code == code, (result.code, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and needle in errors[0], result.stderr
    assert "Traceback" not in result.stderr


def test_version(tmp_path: Path) -> None:
    assert run_installed(["--version"], home=tmp_path) == Result(0, f"{__version__}\n", "")


def test_the_readme_first_command(tmp_path: Path) -> None:
    result = run_installed(["describe", "-f", "examples/pytorchjob.yaml"], home=tmp_path)
    assert result.code == 0 and result.stderr == ""
    assert "Phase: Running" in result.stdout  # followed by the reason behind it
    assert result.stdout.splitlines()[-1].split() == ["TOTAL", "5", "33", "20", "80Gi"]


@pytest.mark.parametrize(
    ("args", "code", "needle", "stdout"),
    [
        (["describe", "-f", "missing.yaml"], 1, "missing.yaml: no such file or directory", ""),
        (["describe", "-f", "{in}/invalid.yaml"], 2, "invalid YAML at line", ""),
        (["describe", "-f", "{in}/nokind.yaml"], 2, "declares no apiVersion and kind", ""),
        (["describe", "-f", "{in}/flink.yaml"], 4, "no definition covers flink.apache.org/v1beta1/FlinkDeployment", ""),
        (
            ["describe", "-f", "examples/jobset.yaml", "--definitions", "{in}/bad-definition.yaml"],
            1,
            "definition 'broken' is invalid",
            "",
        ),
        (["describe", "-f", "{in}/configs"], 4, "no workloads in", ""),
        (["describe", "-f", "examples/jobset.yaml", "-o", "wide"], 2, "must be one of", ""),
        (["validate", "{in}/invalid.yaml"], 2, "invalid YAML", ""),
        (["nosuchcommand"], 2, 'unknown command "nosuchcommand"', ""),
    ],
)
def test_bad_input_gives_one_error_line_and_the_right_exit_code(
    tmp_path: Path, inputs: Path, args: list[str], code: int, needle: str, stdout: str
) -> None:
    result = run_installed([arg.replace("{in}", str(inputs)) for arg in args], home=tmp_path)
    one_error(result, code, needle)
    assert result.stdout == stdout


def test_uncovered_type_under_json_prints_the_machine_error_object(tmp_path: Path, inputs: Path) -> None:
    result = run_installed(["describe", "-f", str(inputs / "flink.yaml"), "-o", "json"], home=tmp_path)
    one_error(result, 4, "no definition covers")
    assert json.loads(result.stdout)["error"] == "no_definition_for_type"


def test_stdin_stream_from_helm_template(tmp_path: Path, inputs: Path) -> None:
    stream = (inputs / "configs" / "cm.yaml").read_text() + "---\n" + (REPO / "examples" / "jobset.yaml").read_text()
    result = run_installed(["describe", "-f", "-", "-o", "json"], home=tmp_path, stdin=stream)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["count"] == 1
    assert result.stderr == "skipped 1 document: ConfigMap/settings\n"


def test_kubectl_wmap_and_python_m_run_the_same_cli(tmp_path: Path) -> None:
    plugin = run_installed(["--help"], home=tmp_path, name="kubectl-wmap")
    assert plugin.code == 0 and plugin.stdout.startswith("Usage: kubectl wmap")
    module = subprocess.run(
        [sys.executable, "-m", "workload_map", "describe", "-f", "nope.yaml"],
        capture_output=True,
        text=True,
        env=clean_env(tmp_path),
        cwd=REPO,
        check=False,
    )
    assert module.returncode == 1 and module.stderr.startswith("error: nope.yaml")


def test_kubectl_complete_executable_answers_in_cobras_protocol(tmp_path: Path) -> None:
    result = run_installed(["describe", "-o", "j"], home=tmp_path, name="kubectl_complete-wmap")
    assert result == Result(0, "json\n:4\n", "")


def test_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    command = f"{executable()} describe -f examples/ | head -1"
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=clean_env(tmp_path), cwd=REPO, check=False
    )
    assert done.stdout.startswith("DynamoGraphDeployment/") and "Traceback" not in done.stderr
