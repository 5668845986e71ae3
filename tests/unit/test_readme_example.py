"""The README's "The library in a minute" example type-checks under `mypy --strict`, runs, and says true things.

Test design: the ```python block under the heading is taken from README.md as it stands and written to a temporary
directory holding the files it reads (`examples/pytorchjob.yaml`, and a catalog definition as
`my-definition.yaml`). It is checked with the repository's mypy configuration plus `--strict`, run as a script,
and run once more with each `expression  # value` line (a JSON value after the `#`) turned into an assertion, so
the phase, replica count, GPU total and merge patch the README states are what the code gives.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
HEADING = "## The library in a minute"
DEFINITION = REPO / "src" / "workload_map" / "catalog" / "definitions" / "kubeflow-org-pytorchjob-v1.yaml"

# `expression   # value  (remark)`: a value is a JSON string, number or object.
CLAIM = re.compile(r"^(?P<expr>\S.*?)\s{2,}# (?P<value>\"[^\"]*\"|-?\d+|\{.*\})(?:\s|$)")


def example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split(f"\n{HEADING}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"^```python\n(.*?)^```$", section, re.DOTALL | re.MULTILINE)
    assert match is not None, f"no ```python block under {HEADING!r} in README.md"
    return match.group(1)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A directory holding the example and the files it reads, by the relative paths it uses."""
    (tmp_path / "examples").mkdir()
    shutil.copy(REPO / "examples" / "pytorchjob.yaml", tmp_path / "examples" / "pytorchjob.yaml")
    shutil.copy(DEFINITION, tmp_path / "my-definition.yaml")
    (tmp_path / "example.py").write_text(example(), encoding="utf-8")
    return tmp_path


def _environment() -> dict[str, str]:
    # The repository's sources first, whether or not the package is installed from them.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    env["MYPYPATH"] = str(REPO / "src")
    return env


def test_the_example_passes_mypy_strict(workdir: Path) -> None:
    command = [sys.executable, "-m", "mypy", "--strict", "--no-incremental"]
    command += ["--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(workdir / ".mypy_cache")]
    result = subprocess.run(
        [*command, "example.py"], cwd=workdir, env=_environment(), capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_example_runs(workdir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "example.py"], cwd=workdir, env=_environment(), capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_the_values_the_example_states_are_what_it_gives(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines, claims = [], []
    for number, line in enumerate(example().splitlines(), start=1):
        claim = CLAIM.match(line)
        if claim is None or "=" in claim.group("expr").replace("==", ""):
            lines.append(line)
            continue
        expected = json.loads(claim.group("value"))
        claims.append(expected)
        lines.append(f"assert ({claim.group('expr')}) == {expected!r}, {(number, claim.group('expr'))!r}")
    assert "Running" in claims
    assert 4 in claims
    assert 33 in claims
    assert {"spec": {"runPolicy": {"suspend": True}}} in claims
    monkeypatch.chdir(workdir)
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile("\n".join(lines), str(workdir / "example.py"), "exec"), namespace)
    assert namespace["view"].resources.gpus == 33
    assert namespace["karta"].name == "kubeflow-org-pytorchjob-v1"
