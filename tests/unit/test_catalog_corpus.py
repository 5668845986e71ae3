"""A corpus of real example manifests from the frameworks' own repositories (tests/fixtures/corpus/<case>.yaml).

Each file names where the manifest comes from (`source`: repository, path, commit), holds the manifest as
collected (`object`; a placeholder such as an image tag filled in where noted) and what a reader of that manifest
counts by hand (`expected`: the pods the operator runs, the GPUs they request, per component, and accelerators that
are not GPUs). The built-in definition of the manifest's kind must give the same figures in its view. No status,
no live pods: this checks structure, replicas and resources, not phases.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import DefinitionRegistry, builtin_registry
from workload_map.resolve import Workload
from workload_map.view import ComponentView, build_view

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus"
FILES = sorted(CORPUS.glob("*.yaml"))


@cache
def _registry() -> DefinitionRegistry:
    return builtin_registry()


def _load(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        data: dict[str, Any] = yaml.safe_load(handle)
    return data


def _walk(nodes: tuple[ComponentView, ...] | list[ComponentView], out: dict[str, list[int]]) -> None:
    for node in nodes:
        label = f"{node.component}[{node.instance}]" if node.instance else node.component
        gpus = node.resources.gpus
        out[label] = [node.replicas.desired, int(gpus)]
        _walk(node.children, out)


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_a_real_manifest_resolves_to_the_pods_and_gpus_counted_by_hand(path: Path) -> None:
    data = _load(path)
    obj, expected = data["object"], data["expected"]
    resolved = _registry().for_object(obj)
    assert resolved is not None and resolved.exact, f"no built-in definition for {obj['apiVersion']} {obj['kind']}"
    resolution = Workload(resolved.karta, obj).resolve()
    assert not resolution.errors, [str(error) for error in resolution.errors]
    view = build_view(resolution, None, origin=resolved.origin)
    components: dict[str, list[int]] = {}
    _walk(view.components, components)
    assert (view.replicas.desired, view.resources.gpus) == (expected["pods"], expected["gpus"])
    assert components == expected["components"]
    accelerators = {name: str(count) for name, count in view.resources.accelerators.items()}
    assert accelerators == expected.get("accelerators", {})


@pytest.mark.parametrize("path", FILES, ids=[path.stem for path in FILES])
def test_each_manifest_records_where_it_comes_from(path: Path) -> None:
    source = _load(path)["source"]
    assert set(source) == {"repository", "path", "commit"}
    assert len(source["commit"]) == 40 and int(source["commit"], 16) >= 0


def test_the_corpus_covers_most_of_the_catalog() -> None:
    definitions = set()
    for path in FILES:
        resolved = _registry().for_object(_load(path)["object"])
        assert resolved is not None
        definitions.add(resolved.karta.name)
    assert len(FILES) >= 25 and len(definitions) >= 15
