"""`check_files` and `validate_documents`: what `wmap validate FILE...` prints and the exit code it returns.

Test design: real files in tmp_path; each test asserts the printed lines or the exit code a user sees
(0 valid, warnings allowed; 1 an invalid definition or a file without one; 2 a file that cannot be read).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from workload_map.validation import check_files, validate_documents

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "definitions"
GOOD = (FIXTURES / "valid" / "pyflow.yaml").read_text(encoding="utf-8")
WARNS = (FIXTURES / "warnings" / "cannot-work.yaml").read_text(encoding="utf-8")
BAD = (FIXTURES / "invalid" / "cycle.yaml").read_text(encoding="utf-8")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_valid_files_print_ok_per_definition_and_exit_0() -> None:
    report = check_files([FIXTURES / "valid" / "others-everything.yaml", FIXTURES / "valid" / "pyflow.yaml"])
    assert report.lines() == ["OK: fleet", "OK: fleet-kai", "OK: pyflow"]
    assert report.exit_code == 0
    assert report.valid


def test_warnings_are_printed_under_ok_and_exit_0(tmp_path: Path) -> None:
    report = check_files([write(tmp_path, "w.yaml", WARNS)])
    lines = report.lines()
    assert lines[0] == "OK: cannot-work"
    assert len(lines) == 6
    assert all(line.startswith("  warning: spec.") for line in lines[1:])
    assert report.exit_code == 0


def test_an_invalid_definition_prints_every_finding_and_exits_1(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", GOOD + "---\n" + BAD)
    report = check_files([path])
    assert report.lines() == [
        "OK: pyflow",
        f"INVALID: cycle ({path} (document 2))",
        "  error: spec.structureDefinition.childComponents[0].ownerRef: ownership cycle detected involving "
        "component a (a -> c -> b -> a)",
    ]
    assert report.exit_code == 1
    (bad,) = [d for d in report.definitions if not d.valid]
    assert bad.karta is not None
    assert bad.errors[0].rule == "ownership-cycle"


def test_a_definition_that_does_not_load_is_invalid_with_its_path(tmp_path: Path) -> None:
    path = write(tmp_path, "typo.yaml", GOOD.replace("podSelector:", "podSelektor:", 1))
    report = check_files([path])
    (line1, line2) = report.lines()
    assert line1 == f"INVALID: {path}"
    assert line2.startswith("  error: spec.structureDefinition.childComponents[0].podSelektor: unknown field")
    assert "did you mean 'podSelector'?" in line2
    assert report.exit_code == 1
    assert report.definitions[0].karta is None


def test_a_file_that_is_not_yaml_exits_2(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.yaml", "spec: [\n")
    report = check_files([path])
    assert report.lines() == [f"error: {path}: invalid YAML at line 2, column 1: did not find expected node content"]
    assert report.exit_code == 2


def test_a_missing_file_exits_2_even_with_invalid_definitions(tmp_path: Path) -> None:
    report = check_files([write(tmp_path, "bad.yaml", BAD), tmp_path / "missing.yaml"])
    assert report.lines()[-1] == f"error: {tmp_path / 'missing.yaml'}: no such file"
    assert report.exit_code == 2


def test_an_empty_file_has_no_definitions_and_exits_1(tmp_path: Path) -> None:
    path = write(tmp_path, "empty.yaml", "# nothing here\n")
    report = check_files([path])
    assert report.lines() == [f"error: {path}: no definitions found (the file is empty)"]
    assert report.exit_code == 1


def test_a_directory_is_expanded_to_its_definition_files(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", GOOD)
    write(tmp_path, "b.yml", WARNS)
    write(tmp_path, "README.md", "# not a definition")
    report = check_files([tmp_path])
    assert [f.path for f in report.files] == [str(tmp_path / "a.yaml"), str(tmp_path / "b.yml")]
    assert report.exit_code == 0


def test_a_directory_without_definition_files_exits_1(tmp_path: Path) -> None:
    report = check_files([tmp_path])
    assert report.lines() == [f"error: {tmp_path}: no *.yaml, *.yml or *.json files in the directory"]
    assert report.exit_code == 1


def test_standard_input_is_read_for_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD.encode())))
    report = check_files(["-"])
    assert report.lines() == ["OK: pyflow"]
    assert report.files[0].path == "<stdin>"


def test_validate_documents_reports_each_definition_of_a_cluster_list() -> None:
    import yaml

    good = yaml.safe_load(GOOD)
    bad = yaml.safe_load(BAD)
    broken = {**good, "spec": {"structureDefinition": {"rootComponent": {"name": 3}}}}
    reports = validate_documents([good, bad, broken])
    assert [(r.name, r.valid) for r in reports] == [("pyflow", True), ("cycle", False), ("<item 3>", False)]
    assert reports[2].findings[0].rule == "load"
    assert reports[2].findings[0].path == "spec.structureDefinition.rootComponent.name"
