"""Golden views of the built-in catalog: one pinned summary per definition, from its realistic fixture.

Test design: tests/fixtures/catalog/<definition>/ holds a mid-run workload with the status its operator writes, the
pods with the labels the operator sets, and the owners in between. The summary pinned in `golden-view.yaml` beside
them is what a user reads in `wmap describe`: the primary and matched phases, every component and instance with its
desired/current/ready replicas and GPU total, where each pod landed (component, instance, replica), and the
unclaimed pods. A change to a definition, the resolver or the view that moves any of these shows up as a diff.

Regenerate after an intended change with `WMAP_UPDATE_GOLDEN=1 pytest tests/unit/test_catalog_golden_views.py`,
then read the diff before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import builtin_registry
from workload_map.pods import attribute
from workload_map.resolve import Workload
from workload_map.view import ComponentView, build_view

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
GOLDEN = "golden-view.yaml"


def _load(path: Path) -> Any:
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _node(node: ComponentView) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "desired": node.replicas.desired,
        "current": node.replicas.current,
        "ready": node.replicas.ready,
        "gpus": node.resources.gpus,
    }
    if node.resources.accelerators:
        entry["accelerators"] = {name: str(count) for name, count in sorted(node.resources.accelerators.items())}
    if node.children:
        entry["children"] = {_label(child): _node(child) for child in node.children}
    return entry


def _label(node: ComponentView) -> str:
    return f"{node.component}[{node.instance}]" if node.instance else node.component


def summary(directory: Path) -> dict[str, Any]:
    obj = _load(directory / "workload.yaml")
    pods = _load(directory / "pods.yaml")["items"]
    owners = _load(directory / "owners.yaml")["items"] if (directory / "owners.yaml").exists() else []
    resolved = builtin_registry().for_object(obj)
    assert resolved is not None, f"no built-in definition for {obj['apiVersion']}/{obj['kind']}"
    resolution = Workload(resolved.karta, obj).resolve()
    view = build_view(resolution, attribute(resolution, pods, owners), origin=resolved.origin)
    placed: dict[str, str] = {}
    for _, node in view.walk():
        for pod in node.pods:
            where = _label(node)
            placed[pod.name] = f"{where} replica {pod.replica}" if pod.replica is not None else where
    return {
        "definition": view.definition,
        "phase": view.phase,
        "phases": list(view.phases),
        "replicas": {"desired": view.replicas.desired, "current": view.replicas.current, "ready": view.replicas.ready},
        "gpus": view.resources.gpus,
        "components": {_label(node): _node(node) for node in view.components},
        "pods": dict(sorted(placed.items())),
        "unclaimed": sorted(pod.name for pod in view.unclaimed_pods),
    }


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir() if (p / "workload.yaml").exists()))
def test_view_of_the_catalog_fixture_matches_its_golden_summary(name: str) -> None:
    directory = FIXTURES / name
    actual = summary(directory)
    golden = directory / GOLDEN
    if os.environ.get("WMAP_UPDATE_GOLDEN") == "1":
        golden.write_text(yaml.safe_dump(actual, sort_keys=False, width=120), encoding="utf-8")
    assert golden.exists(), f"no {GOLDEN} for {name}: run with WMAP_UPDATE_GOLDEN=1 and review it"
    assert actual == _load(golden)


VARIANTS = sorted(p for p in FIXTURES.glob("*/variants/*") if (p / "workload.yaml").exists())


@pytest.mark.parametrize("directory", VARIANTS, ids=[f"{p.parents[1].name}/{p.name}" for p in VARIANTS])
def test_view_of_a_fixture_variant_matches_its_golden_summary(directory: Path) -> None:
    """More fixtures of one definition (tests/fixtures/catalog/<definition>/variants/<case>/): a shape of the spec
    the main fixture does not have (a framework's resource shorthand, multi-node, groups), each with its view."""
    actual = summary(directory)
    assert actual["definition"] == directory.parents[1].name
    golden = directory / GOLDEN
    if os.environ.get("WMAP_UPDATE_GOLDEN") == "1":
        golden.write_text(yaml.safe_dump(actual, sort_keys=False, width=120), encoding="utf-8")
    assert golden.exists(), f"no {GOLDEN} for {directory}: run with WMAP_UPDATE_GOLDEN=1 and review it"
    assert actual == _load(golden)


def test_every_built_in_definition_has_a_fixture_with_a_golden_view() -> None:
    names = {entry.karta.name for entry in builtin_registry().all()}
    assert names == {p.name for p in FIXTURES.iterdir() if (p / GOLDEN).exists()}
