"""Round trip: extracting every field of every component and writing the same values back leaves the object equal
as JSON (`merge_patch() == {}`), for the built-in definitions and our fixtures.

Test design: the objects are real ones (the conformance recordings, read from the shared directory, the example
manifests and our fixtures), each paired with its definition; hypothesis then damages them (drops keys, nulls or
empties values, adds labels) so the round trip also holds for objects that lack fields the definition reads. A
field whose extraction fails on a damaged object is skipped (it cannot be read, so it is not written); a write
that fails after a successful read is a failure of the property, except through a read-only path (one a definition
computes, such as NIMCache's resources), which cannot be written by design: the object must still be unchanged.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures.resolve import NAMES, karta, obj
from workload_map.catalog import DefinitionRegistry, builtin_definitions
from workload_map.model import Karta
from workload_map.resolve import ExtractionError, UpdateError, Workload
from workload_map.resolve._json import jq_json

REPO = Path(__file__).resolve().parents[2]


def _conformance_dir() -> Path:
    override = os.environ.get("WMAP_CONFORMANCE_DIR")
    return Path(override) if override else REPO.parent / "shared" / "conformance"


def _load_yaml(path: Path) -> list[Any]:
    with path.open(encoding="utf-8") as handle:
        return [doc for doc in yaml.load_all(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if doc]


@cache
def _registry() -> DefinitionRegistry:
    return DefinitionRegistry([("catalog", builtin_definitions())])


@cache
def cases() -> list[tuple[str, Karta, dict[str, Any]]]:
    """(label, definition, object): our fixtures, the catalog fixtures, examples, manifests and a few states of every
    recording."""
    out: list[tuple[str, Karta, dict[str, Any]]] = [(name, karta(name), obj(name)) for name in NAMES]
    candidates: list[tuple[str, Any]] = []
    for path in sorted((REPO / "examples").glob("*.yaml")):
        candidates += [(f"examples/{path.name}", doc) for doc in _load_yaml(path)]
    for path in sorted((REPO / "tests" / "fixtures" / "catalog").glob("*/workload.yaml")):
        candidates += [(f"catalog-fixtures/{path.parent.name}", doc) for doc in _load_yaml(path)]
    conformance = _conformance_dir()
    for path in sorted((conformance / "manifests").glob("*.yaml")):
        candidates += [(f"manifests/{path.name}", doc) for doc in _load_yaml(path)]
    for path in sorted((conformance / "recordings").glob("*.yaml")):
        (recording,) = _load_yaml(path)
        states = [event["object"] for event in recording.get("events") or [] if event.get("kind") == "STATE"]
        picked = {0: states[0], len(states) // 2: states[len(states) // 2], -1: states[-1]} if states else {}
        candidates += [(f"recordings/{path.name}#{index}", state) for index, state in picked.items()]
    for label, doc in candidates:
        if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
            continue
        resolved = _registry().for_object(doc)
        if resolved is not None:
            out.append((label, resolved.karta, doc))
    return out


def write_back_everything(workload: Workload) -> list[str]:
    """Read every field of every component and write it back unchanged; the fields that round-tripped."""
    done: list[str] = []
    for component in workload:
        for name, read, write in (
            ("pod_template_specs", lambda c: c.pod_template_specs, lambda c, v: c.update_pod_template_specs(v)),
            ("pod_specs", lambda c: c.pod_specs, lambda c, v: c.update_pod_specs(v)),
            ("pod_metadata", lambda c: c.pod_metadata, lambda c, v: c.update_pod_metadata(v)),
            ("fragmented_pod_specs", lambda c: c.fragmented_pod_specs, lambda c, v: c.update_fragmented_pod_specs(v)),
        ):
            try:
                values = read(component)
            except ExtractionError:
                continue  # unreadable on this object: nothing to write back
            if values is None:
                continue
            try:
                write(component, values)
            except UpdateError as exc:
                # a read-only path (map, to_entries, arithmetic: NIMCache's resources) cannot be written by design
                if "not a path expression" not in exc.message:
                    raise
                continue
            done.append(f"{component.name}.{name}")
    return done


def assert_round_trip(definition: Karta, document: dict[str, Any]) -> list[str]:
    workload = Workload(definition, document)
    before = jq_json(workload.to_object())
    done = write_back_everything(workload)
    assert workload.merge_patch() == {}
    assert jq_json(workload.to_object()) == before
    return done


def test_there_are_cases_for_every_fixture_and_many_definitions() -> None:
    definitions = {definition.name for _, definition, _ in cases()}
    assert {"pyflow", "jobgroup", "reactor"} <= definitions
    if (_conformance_dir() / "recordings").is_dir():
        assert len(definitions) >= 15


@pytest.mark.parametrize(("label", "definition", "document"), cases(), ids=[label for label, _, _ in cases()])
def test_round_trip_of_real_objects_changes_nothing(label: str, definition: Karta, document: dict[str, Any]) -> None:
    done = assert_round_trip(definition, document)
    if definition.name in NAMES or label.startswith("examples/"):
        assert done, f"{label}: no field was written back"


# --- damaged objects -------------------------------------------------------------------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append((*prefix, key))
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((*prefix, index))
            out += _paths(item, (*prefix, index))
    return out


_PROTECTED = {("apiVersion",), ("kind",), ("metadata",), ("metadata", "name")}
REPLACEMENTS = st.sampled_from([None, {}, [], "", "x", 0, 3, True, {"extra": "field"}])


def _damage(document: dict[str, Any], damages: list[tuple[int, str, Any]]) -> dict[str, Any]:
    import copy

    damaged = copy.deepcopy(document)
    for choice, action, replacement in damages:
        paths = [path for path in _paths(damaged) if path not in _PROTECTED]
        if not paths:
            break
        path = paths[choice % len(paths)]
        parent: Any = damaged
        for step in path[:-1]:
            parent = parent[step]
        if action == "drop":
            del parent[path[-1]]
        elif action == "replace":
            parent[path[-1]] = replacement
        elif isinstance(parent[path[-1]], dict):
            parent[path[-1]]["labels"] = {"added": "by-test"}
    return damaged


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
@given(
    case=st.integers(min_value=0),
    damages=st.lists(
        st.tuples(st.integers(min_value=0), st.sampled_from(["drop", "replace", "label"]), REPLACEMENTS),
        max_size=4,
    ),
)
def test_round_trip_of_damaged_objects_changes_nothing(case: int, damages: list[tuple[int, str, Any]]) -> None:
    _label, definition, document = cases()[case % len(cases())]
    assert_round_trip(definition, _damage(document, damages))
