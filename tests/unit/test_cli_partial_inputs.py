"""Partial results (issue 16): what cannot be read is named and ends the command with exit 1 (docs/cli.md, "A
partial result is exit 1"), and the rest is still checked or planned.

* `wmap validate DIR` with a subdirectory that cannot be listed: a warning naming it, the rest validated, exit 1.
  The subdirectory is really unreadable (chmod 000): the tests run as root here, so the command runs with the
  capabilities that let root read anything (`CAP_DAC_OVERRIDE`, `CAP_DAC_READ_SEARCH`) dropped, through
  `setpriv`; as another user chmod alone does it.
* `wmap gang -f` of a workload nothing of which can be read (every pod spec fails): the plan is printed, exit 1
  with the message `describe` gives.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.helpers import EXAMPLES, REPO, Result, Wmap, clean_env, executable, write

CATALOG = REPO / "src" / "workload_map" / "catalog" / "definitions"
_DROP = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def _unprivileged(argv: list[str], home: Path) -> Result:
    """Run `argv` where a chmod 000 directory cannot be listed: without root's DAC capabilities."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: an unreadable directory cannot be made")
        prefix = _DROP
    done = subprocess.run(
        [*prefix, *argv], capture_output=True, text=True, env=clean_env(home), cwd=REPO, timeout=120, check=False
    )
    return Result(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def locked_tree(tmp_path: Path) -> Iterator[Path]:
    """A directory holding one valid definition and a subdirectory (with a definition in it) mode 000."""
    tree = tmp_path / "definitions"
    locked = tree / "locked"
    locked.mkdir(parents=True)
    shutil.copy(CATALOG / "batch-job-v1.yaml", tree / "batch-job-v1.yaml")
    shutil.copy(CATALOG / "apps-deployment-v1.yaml", locked / "apps-deployment-v1.yaml")
    locked.chmod(0)
    try:
        yield tree
    finally:
        locked.chmod(0o755)


def test_the_locked_directory_really_cannot_be_listed(locked_tree: Path, tmp_path: Path) -> None:
    result = _unprivileged(["ls", str(locked_tree / "locked")], tmp_path)
    assert result.code != 0 and "Permission denied" in result.stderr


def test_validate_names_an_unreadable_subdirectory_and_exits_1(locked_tree: Path, tmp_path: Path) -> None:
    result = _unprivileged([executable(), "validate", str(locked_tree)], tmp_path)
    assert result.code == 1, result.output
    assert result.stdout == "OK: batch-job-v1\n"  # the readable definition is still validated
    locked = locked_tree / "locked"
    assert result.stderr.splitlines() == [
        f"warning: {locked}: cannot be read: Permission denied (a directory: not searched)",
        "error: the result is partial: 1 directory could not be searched (see the warnings)",
    ]


def test_validate_of_an_unreadable_subdirectory_and_an_invalid_definition_names_both(
    locked_tree: Path, tmp_path: Path
) -> None:
    write(locked_tree / "broken.yaml", "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: broken}\nspec: {}\n")
    result = _unprivileged([executable(), "validate", str(locked_tree)], tmp_path)
    assert result.code == 1, result.output
    assert f"warning: {locked_tree / 'locked'}: cannot be read: Permission denied" in result.stderr
    assert result.stderr.splitlines()[-1] == f"error: definition '{locked_tree / 'broken.yaml'}' is invalid (1 error)"


def test_check_files_reports_the_directory_it_could_not_search(locked_tree: Path, tmp_path: Path) -> None:
    script = (
        "import json, sys; from workload_map.validation import check_files; r = check_files([sys.argv[1]]); "
        "print(json.dumps([r.exit_code, [[f.path, f.problem, f.partial] for f in r.files]]))"
    )
    result = _unprivileged([sys.executable, "-c", script, str(locked_tree)], tmp_path)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout) == [
        1,
        [
            [str(locked_tree / "locked"), "cannot be read: Permission denied (a directory: not searched)", True],
            [str(locked_tree / "batch-job-v1.yaml"), None, False],
        ],
    ]


def test_gang_of_a_workload_nothing_of_which_can_be_read_is_exit_1(wmap: Wmap, tmp_path: Path) -> None:
    path = write(
        tmp_path / "hollow.yaml",
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: x}\nspec:\n  pytorchReplicaSpecs:\n"
        '    Master: {replicas: 1, template: 5}\n    Worker: {replicas: 2, template: "x"}\n',
    )
    result = wmap("gang", "-f", path, "-o", "yaml")
    assert result.code == 1, result.output
    assert "schemaVersion:" in result.stdout  # the plan is still printed
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        "error: nothing of PyTorchJob/x could be read: every component's pod spec or replicas failed (see the warnings)"
    ]
    assert "Traceback" not in result.output


def test_gang_of_a_readable_workload_is_still_exit_0(wmap: Wmap) -> None:
    result = wmap("gang", "-f", str(EXAMPLES / "pytorchjob.yaml"), "-o", "yaml")
    assert result.code == 0, result.output


@pytest.mark.parametrize("target", ["loop.yaml", "missing.yaml"], ids=["a symbolic link loop", "a dangling link"])
def test_a_broken_link_in_a_directory_is_named_and_the_rest_checked(wmap: Wmap, tmp_path: Path, target: str) -> None:
    directory = tmp_path / "defs"
    directory.mkdir()
    shutil.copy(REPO / "src" / "workload_map" / "catalog" / "definitions" / "batch-job-v1.yaml", directory)
    (directory / "loop.yaml").symlink_to(target)
    result = wmap("validate", str(directory))
    assert result.code == 1, result.output
    assert "OK: batch-job-v1" in result.stdout
    assert f"warning: {directory / 'loop.yaml'}: " in result.stderr
    described = wmap("describe", "-f", str(directory), "-o", "json")  # a directory of definitions, not workloads
    assert "loop.yaml" in described.stderr and "Traceback" not in described.output
