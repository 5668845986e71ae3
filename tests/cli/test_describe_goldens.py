"""Golden text of `wmap describe` for every catalog fixture (tests/fixtures/catalog/<definition>/ and its
variants): the tree from the manifest alone (`wmap describe -f workload.yaml`, run in process) and the live tree
with the fixture's pods and owners attributed (the renderer `wmap describe TYPE/NAME` prints with, at a fixed
time). A change to any text output shows up here as a diff to review.

Goldens live in tests/cli/golden/catalog/; after an intended change regenerate them with
`WMAP_UPDATE_GOLDEN=1 python3 -m pytest -q tests/cli/test_describe_goldens.py` and review `git diff`
(docs/testing.md, "Golden outputs").
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import GOLDEN, REPO, invoke
from workload_map.catalog import builtin_registry
from workload_map.cli.pipeline import ResolvedWorkload
from workload_map.cli.render.text import plain
from workload_map.cli.render.tree import TreeOptions, render_workload
from workload_map.cli.views import tree_origin, view_of
from workload_map.resolve import Workload

FIXTURES = REPO / "tests" / "fixtures" / "catalog"
CATALOG_GOLDEN = GOLDEN / "catalog"
NOW = datetime.datetime(2026, 9, 15, 12, 0, tzinfo=datetime.timezone.utc)


def _fixture_dirs() -> list[Path]:
    found = []
    for directory in sorted(FIXTURES.iterdir()):
        if (directory / "workload.yaml").exists():
            found.append(directory)
        variants = directory / "variants"
        if variants.is_dir():
            found += sorted(v for v in variants.iterdir() if (v / "workload.yaml").exists())
    return found


def _golden_name(directory: Path) -> str:
    relative = directory.relative_to(FIXTURES).parts
    return "--".join(part for part in relative if part != "variants")


DIRS = _fixture_dirs()
IDS = [_golden_name(d) for d in DIRS]


def _compare(actual: str, golden: Path) -> None:
    if os.environ.get("WMAP_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
    assert golden.exists(), f"no {golden.relative_to(REPO)}: run with WMAP_UPDATE_GOLDEN=1 and review it"
    assert actual == golden.read_text(encoding="utf-8")


def _load(path: Path) -> Any:
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.mark.parametrize("directory", DIRS, ids=IDS)
def test_describe_of_the_manifest_matches_its_golden_text(
    directory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    path = str((directory / "workload.yaml").relative_to(REPO))
    result = invoke(["describe", "-f", path], home=tmp_path)
    assert result.code == 0, result.stderr
    for line in result.stdout.splitlines():
        assert len(line) <= 80 or line.startswith("file: "), line  # a long path is one field, never cut
    _compare(result.stdout, CATALOG_GOLDEN / f"{_golden_name(directory)}.txt")


@pytest.mark.parametrize("directory", [d for d in DIRS if (d / "pods.yaml").exists()], ids=_golden_name)
def test_live_tree_with_the_fixture_pods_matches_its_golden_text(directory: Path) -> None:
    obj = _load(directory / "workload.yaml")
    pods = _load(directory / "pods.yaml")["items"]
    owners = _load(directory / "owners.yaml")["items"] if (directory / "owners.yaml").exists() else []
    resolved = builtin_registry().for_object(obj)
    assert resolved is not None
    workload = Workload(resolved.karta, obj)
    found = ResolvedWorkload(f"{obj['kind']}/{obj['metadata']['name']}", workload.resolve(), resolved.origin, workload)
    view = view_of(found, pods, owners)
    lines = render_workload(view, TreeOptions(now=NOW), tree_origin(found))
    text = "".join(plain(line).rstrip() + "\n" for line in lines)
    _compare(text, CATALOG_GOLDEN / f"{_golden_name(directory)}.live.txt")
