"""Status bugs of the built-in catalog (issue 15), one fixture each, written from the framework's own examples.

Each file in tests/fixtures/status/ is named `<definition>__<case>.yaml` and holds `expected` (the primary phase,
and the controller code it follows) and `object`: a workload whose spec comes from an example manifest of the
framework and whose status is what its controller writes at that step (read from the controller's code). The object
must resolve through the built-in registry to the definition its file name names, and give the expected phase.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import DefinitionRegistry, builtin_registry
from workload_map.resolve import Workload

STATUS_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "status"
FILES = sorted(STATUS_FIXTURES.glob("*.yaml"))


@cache
def _registry() -> DefinitionRegistry:
    return builtin_registry()


def _load(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        data: dict[str, Any] = yaml.safe_load(handle)
    return data


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_status_fixture_reads_the_phase_its_controller_means(path: Path) -> None:
    data = _load(path)
    slug = path.stem.split("__", 1)[0]
    resolved = _registry().for_object(data["object"])
    assert resolved is not None and resolved.exact, f"no built-in definition for {path.name}"
    assert resolved.karta.name == slug
    status = Workload(resolved.karta, data["object"]).status
    assert status.phase == data["expected"]["phase"], f"{path.name}: matched {status.phases}"


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_status_fixture_names_the_controller_code_it_follows(path: Path) -> None:
    expected = _load(path)["expected"]
    assert set(expected) <= {"phase", "source"}
    assert "@" in expected["source"], "source: <repository> <file> <function> @ <version or commit>"


def test_there_are_status_fixtures() -> None:
    assert FILES
