"""The JSON Schemas of the view and of the gang plan, and the documents they describe.

Test design: both documents are declared once, by msgspec Structs (`WorkloadViewDocument`, `GangPlanDocument` and
their parts); `to_dict()` encodes them and the schemas are generated from them. So the shipped schema files must
equal a fresh generation (nobody edits them by hand or forgets to regenerate), and every real document (each
example and catalog fixture as a view, live and file mode; each gang plan of the gang fixtures, the catalog
fixtures that have gang instructions and the examples, with and without pods) must decode back into its
declaration with strict types and re-encode to the same dict: nothing undeclared, nothing lost, every type as
declared. Where `jsonschema` is installed the same documents are also validated against the shipped files. Broken
documents are refused, so the checks have teeth.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from tests.fixtures.gang import DEFINITIONS as GANG_FIXTURES
from tests.fixtures.gang import pods as gang_pods
from tests.fixtures.gang import workload as gang_workload
from workload_map import gang, view
from workload_map.catalog import builtin_registry
from workload_map.gang import GangError, GangPlanDocument, plan
from workload_map.gang import schema as gang_schema_module
from workload_map.pods import attribute
from workload_map.resolve import Resolution, Workload
from workload_map.view import WorkloadViewDocument, build_view
from workload_map.view import schema as view_schema_module

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "workload_map"
VIEW_SCHEMA_FILE = PACKAGE / "view" / "view.schema.json"
PLAN_SCHEMA_FILE = PACKAGE / "gang" / "plan.schema.json"
EXAMPLES = REPO / "examples"
CATALOG_FIXTURES = REPO / "tests" / "fixtures" / "catalog"


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _example_resolutions() -> Iterator[tuple[str, Resolution, str]]:
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for index, obj in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            resolved = builtin_registry().for_object(obj) if isinstance(obj, dict) else None
            if resolved is not None:
                yield f"examples/{path.name}#{index}", Workload(resolved.karta, obj).resolve(), resolved.origin


def _catalog_fixtures() -> Iterator[tuple[str, Resolution, str, list[dict[str, Any]], list[dict[str, Any]]]]:
    for directory in sorted(p for p in CATALOG_FIXTURES.iterdir() if (p / "workload.yaml").exists()):
        obj = _yaml(directory / "workload.yaml")
        pods = _yaml(directory / "pods.yaml")["items"]
        owners = _yaml(directory / "owners.yaml")["items"] if (directory / "owners.yaml").exists() else []
        resolved = builtin_registry().for_object(obj)
        assert resolved is not None, directory.name
        yield directory.name, Workload(resolved.karta, obj).resolve(), resolved.origin, pods, owners


def view_documents() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for name, resolution, origin in _example_resolutions():
        found[name] = build_view(resolution, origin=origin).to_dict()
    for name, resolution, origin, pods, owners in _catalog_fixtures():
        found[f"catalog/{name}"] = build_view(resolution, attribute(resolution, pods, owners), origin=origin).to_dict()
        found[f"catalog/{name} (file mode)"] = build_view(resolution, origin=origin).to_dict()
    for name in GANG_FIXTURES:
        found[f"gang fixture {name}"] = build_view(gang_workload(name).resolve()).to_dict()
    return found


def plan_documents() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for name in GANG_FIXTURES:
        resolution = gang_workload(name).resolve()
        found[f"gang fixture {name}"] = plan(resolution).to_dict()
        if (REPO / "tests" / "fixtures" / "gang" / f"{name}.pods.yaml").exists():
            found[f"gang fixture {name} with pods"] = plan(resolution, gang_pods(name)).to_dict()
    for name, resolution, _, pods, _ in _catalog_fixtures():
        try:
            found[f"catalog/{name} with pods"] = plan(resolution, pods).to_dict()
        except GangError:  # no gang instructions (or a rule the workload breaks): no plan to check
            continue
    for name, resolution, _ in _example_resolutions():
        try:
            found[name] = plan(resolution).to_dict()
        except GangError:
            continue
    return found


VIEWS = view_documents()
PLANS = plan_documents()


# --- the shipped files ----------------------------------------------------------------------------------------


def test_committed_view_schema_equals_a_fresh_generation() -> None:
    assert VIEW_SCHEMA_FILE.read_text(encoding="utf-8") == view_schema_module.json_schema_text(), (
        "stale view.schema.json: run python scripts/gen_schemas.py"
    )


def test_committed_plan_schema_equals_a_fresh_generation() -> None:
    assert PLAN_SCHEMA_FILE.read_text(encoding="utf-8") == gang_schema_module.json_schema_text(), (
        "stale plan.schema.json: run python scripts/gen_schemas.py"
    )


def test_the_schema_files_are_the_packages_data_files() -> None:
    assert VIEW_SCHEMA_FILE.name == view_schema_module.JSON_SCHEMA_FILE
    assert PLAN_SCHEMA_FILE.name == gang_schema_module.JSON_SCHEMA_FILE


def test_the_schemas_say_their_schema_version_and_name_the_concepts() -> None:
    view_schema, plan_schema = view.json_schema(), gang.json_schema()
    assert view_schema["$ref"] == "#/$defs/WorkloadView"
    assert view_schema["$defs"]["WorkloadView"]["properties"]["schemaVersion"]["const"] == view.SCHEMA_VERSION
    assert set(view_schema["$defs"]) == {
        "WorkloadView",
        "ComponentView",
        "PodView",
        "Resources",
        "Replicas",
        "Scale",
        "ComponentError",
    }
    assert plan_schema["$ref"] == "#/$defs/GangPlan"
    assert plan_schema["$defs"]["GangPlan"]["properties"]["schemaVersion"]["const"] == gang.SCHEMA_VERSION
    assert set(plan_schema["$defs"]) == {
        "GangPlan",
        "ObjectRef",
        "Gang",
        "GangRole",
        "SubGroupPlan",
        "PodMembership",
        "Topology",
    }


def test_keys_always_written_are_required_and_keys_left_out_are_not() -> None:
    defs = view.json_schema()["$defs"]
    assert defs["Replicas"]["required"] == ["desired", "current", "ready"]
    assert defs["Resources"]["required"] == ["gpus", "cpuMillis", "memoryBytes", "accelerators", "requests"]
    assert defs["PodView"]["required"] == ["name", "phase", "ready", "node", "resources"]
    assert defs["ComponentView"]["required"] == ["name", "podBearing", "replicas", "resources"]
    assert "required" not in defs["Scale"]
    # a key left out when unset is never written as null
    assert defs["Scale"]["properties"]["replicas"] == {"type": "integer"}
    assert defs["PodView"]["properties"]["reason"]["type"] == "string"
    plan_defs = gang.json_schema()["$defs"]
    assert plan_defs["Topology"]["required"] == ["topology"]
    assert plan_defs["Topology"]["properties"]["requiredTopologyLevel"]["type"] == "string"
    assert plan_defs["Gang"]["properties"]["minSubGroup"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]


# --- real documents against their declarations ----------------------------------------------------------------


def test_the_documents_cover_every_source() -> None:
    assert sum(name.startswith("examples/") for name in VIEWS) == len(list(EXAMPLES.glob("*.yaml")))
    assert sum(name.startswith("catalog/") for name in VIEWS) == 2 * len(list(_catalog_fixtures()))
    assert {name for name in PLANS if name.startswith("gang fixture")} >= {f"gang fixture {n}" for n in GANG_FIXTURES}
    assert any(name.startswith("catalog/") for name in PLANS) and any(name.startswith("examples/") for name in PLANS)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_each_view_decodes_into_its_declaration_and_back_unchanged(name: str) -> None:
    document = VIEWS[name]
    decoded = msgspec.json.decode(json.dumps(document), type=WorkloadViewDocument, strict=True)
    assert msgspec.to_builtins(decoded) == document


@pytest.mark.parametrize("name", sorted(PLANS))
def test_each_gang_plan_decodes_into_its_declaration_and_back_unchanged(name: str) -> None:
    document = PLANS[name]
    decoded = msgspec.json.decode(json.dumps(document), type=GangPlanDocument, strict=True)
    assert msgspec.to_builtins(decoded) == document


def test_to_document_is_what_to_dict_encodes() -> None:
    name, resolution, origin, pods, owners = next(_catalog_fixtures())
    built = build_view(resolution, attribute(resolution, pods, owners), origin=origin)
    assert msgspec.to_builtins(built.to_document()) == built.to_dict()
    assert json.loads(msgspec.json.encode(built.to_document())) == built.to_dict(), name
    gang_plan = plan(gang_workload("jobset").resolve(), gang_pods("jobset"))
    assert json.loads(msgspec.json.encode(gang_plan.to_document())) == gang_plan.to_dict()


def _broken(document: dict[str, Any], path: tuple[str | int, ...], value: Any) -> str:
    changed = copy.deepcopy(document)
    node: Any = changed
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return json.dumps(changed)


def _a_view_with_pods() -> dict[str, Any]:
    return next(doc for doc in VIEWS.values() if doc["components"] and doc["components"][0].get("pods"))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("resources", "requests", "cpu"), 4),  # a number where a quantity string belongs
        (("resources", "requests", "cpu"), "four"),  # not a quantity
        (("resources", "gpus"), -1),
        (("replicas", "desired"), "1"),
        (("components", 0, "pods", 0, "ready"), "yes"),
        (("fileMode",), None),
    ],
)
def test_a_view_that_breaks_its_declaration_is_refused(path: tuple[str | int, ...], value: Any) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(_broken(_a_view_with_pods(), path, value), type=WorkloadViewDocument, strict=True)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("format",), "pod-groups"),
        (("gangs", 0, "minResources", "memory"), 1024),
        (("gangs", 0, "minMember"), -1),
        (("workload", "name"), None),
    ],
)
def test_a_gang_plan_that_breaks_its_declaration_is_refused(path: tuple[str | int, ...], value: Any) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(_broken(PLANS["gang fixture jobset"], path, value), type=GangPlanDocument, strict=True)


# --- the same documents against the shipped files (where jsonschema is installed) ------------------------------


def _validator(path: Path) -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_every_view_is_valid_against_the_shipped_view_schema() -> None:
    validator = _validator(VIEW_SCHEMA_FILE)
    for name, document in VIEWS.items():
        errors = [error.message for error in validator.iter_errors(document)]
        assert errors == [], name
    assert not validator.is_valid(json.loads(_broken(_a_view_with_pods(), ("resources", "requests", "cpu"), "x")))
    assert not validator.is_valid({**_a_view_with_pods(), "schemaVersion": "workloadmap.io/view/v2"})


def test_every_gang_plan_is_valid_against_the_shipped_plan_schema() -> None:
    validator = _validator(PLAN_SCHEMA_FILE)
    for name, document in PLANS.items():
        errors = [error.message for error in validator.iter_errors(document)]
        assert errors == [], name
    assert not validator.is_valid(json.loads(_broken(PLANS["gang fixture jobset"], ("gangs", 0, "count"), "8")))
