"""`wmap validate`: OK lines, every finding with its YAML path, exit codes 0/1/2, and the --against loop."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.cli.helpers import REPO, Wmap

FIXTURES = REPO / "tests" / "fixtures" / "definitions"


def pytorchjob_definition(wmap: Wmap, tmp_path: Path, worker_replicas_path: str | None = None) -> str:
    """The built-in PyTorchJob definition as a file, optionally with another replicasPath for the workers."""
    karta = yaml.safe_load(wmap("definitions", "kubeflow-org-pytorchjob-v1", "-o", "yaml").stdout)
    if worker_replicas_path is not None:
        for child in karta["spec"]["structureDefinition"]["childComponents"]:
            if child["name"] == "worker":
                child["scaleDefinition"]["replicasPath"] = worker_replicas_path
    path = tmp_path / "pytorchjob.yaml"
    path.write_text(yaml.safe_dump(karta))
    return str(path)


def test_valid_definitions_print_ok_and_exit_0(wmap: Wmap) -> None:
    result = wmap("validate", str(FIXTURES / "valid"))
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() and all(line.startswith("OK: ") for line in result.stdout.splitlines())
    assert result.stderr == ""


def test_warnings_go_to_stderr_and_keep_exit_0(wmap: Wmap) -> None:
    result = wmap("validate", str(FIXTURES / "warnings"))
    assert result.code == 0
    assert result.stdout == "OK: cannot-work\n"
    assert "warning: cannot-work: spec.structureDefinition" in result.stderr


def test_every_finding_is_printed_with_its_yaml_path_and_exit_1(wmap: Wmap) -> None:
    result = wmap("validate", str(FIXTURES / "invalid" / "duplicate-names.yaml"))
    assert result.code == 1
    assert result.stdout.splitlines()[0].startswith("INVALID: duplicates (")
    assert "  error: spec.structureDefinition.childComponents[1].name: component name worker is not unique" in (
        result.stdout
    )
    assert result.stderr.strip().splitlines()[-1] == "error: definition 'duplicates' is invalid (2 errors)"


def test_a_file_that_is_not_yaml_or_cannot_be_read_is_exit_2(wmap: Wmap, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("spec: [1, 2\n")
    result = wmap("validate", str(bad))
    assert result.code == 2 and "invalid YAML at line" in result.stderr and "Traceback" not in result.stderr
    missing = wmap("validate", str(tmp_path / "nope.yaml"))
    assert missing.code == 2 and "no such file" in missing.stderr and missing.stdout == ""


def test_stdin_is_read_with_a_dash(wmap: Wmap) -> None:
    text = wmap("definitions", "core-pod-v1", "-o", "yaml").stdout
    assert wmap("validate", "-", stdin=text).stdout == "OK: core-pod-v1\n"


def test_against_a_sample_shows_components_statuses_and_the_view(wmap: Wmap, tmp_path: Path) -> None:
    result = wmap("validate", pytorchjob_definition(wmap, tmp_path), "--against", "examples/pytorchjob.yaml")
    assert result.code == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0] == "OK: kubeflow-org-pytorchjob-v1"
    assert "Against examples/pytorchjob.yaml: PyTorchJob/llama-finetune" in out
    assert ["worker", "1", "template", "4"] in [line.split() for line in out]
    assert "  Running       matches (primary)" in out
    assert "  Failed        no match" in out
    assert "Extraction: no errors" in out
    assert out[-1].split() == ["TOTAL", "5", "33", "20", "80Gi"]


def test_against_reports_extraction_errors_and_exits_1(wmap: Wmap, tmp_path: Path) -> None:
    broken = pytorchjob_definition(wmap, tmp_path, ".spec.pytorchReplicaSpecs.Worker.template")
    result = wmap("validate", broken, "--against", "examples/pytorchjob.yaml")
    assert result.code == 1
    assert "Extraction errors (1):" in result.stdout
    assert "component 'worker', scaleDefinition.replicasPath" in result.stdout
    assert "does not resolve cleanly" in result.stderr


def test_against_an_object_of_another_kind_is_exit_4(wmap: Wmap, tmp_path: Path) -> None:
    result = wmap("validate", pytorchjob_definition(wmap, tmp_path), "--against", "examples/jobset.yaml")
    assert result.code == 4
    assert "no definition given covers jobset.x-k8s.io/v1alpha2/JobSet" in result.stderr
