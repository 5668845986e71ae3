"""The generated `kartas.run.ai` CRD and editor JSON Schema.

Test design: the committed files must equal a fresh generation (so nobody edits them by hand or forgets to
regenerate); the CRD's schema must be *structural* as the API server defines it (checked here by a small
checker that follows the apiextensions rules, so a broken CRD is caught without a cluster; tests/e2e applies it
to a real kube-apiserver); and a small validator of that OpenAPI schema checks that every fixture and catalog
definition is accepted by it and that structurally broken Kartas are rejected, as the API server would.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.samples import MINIMAL_KARTA
from workload_map.model import load_definitions, to_dict
from workload_map.model.schema import crd, crd_yaml, json_schema, json_schema_text

REPO = Path(__file__).resolve().parents[2]
CRD_FILE = REPO / "deploy" / "crds" / "kartas.run.ai.yaml"
SCHEMA_FILE = REPO / "src" / "workload_map" / "model" / "karta.schema.json"
FIXTURES = REPO / "tests" / "fixtures" / "definitions"
CATALOG = REPO / "src" / "workload_map" / "catalog" / "definitions"


_CRD = crd()


def _schema() -> dict[str, Any]:
    version = _CRD["spec"]["versions"][0]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def _at(path: str) -> dict[str, Any]:
    """The schema node at a dotted path of property names (`[]` steps into list items)."""
    node = _schema()
    for part in path.split("."):
        node = node["items"] if part == "[]" else node["properties"][part]
    return node


ROOT = "spec.structureDefinition.rootComponent"
CHILD = "spec.structureDefinition.childComponents.[]"


# --- the committed files are current --------------------------------------------------------------------------


def test_committed_crd_equals_a_fresh_generation() -> None:
    assert CRD_FILE.read_text(encoding="utf-8") == crd_yaml(), "stale CRD: run python scripts/gen_schemas.py"


def test_committed_json_schema_equals_a_fresh_generation() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == json_schema_text(), (
        "stale karta.schema.json: run python scripts/gen_schemas.py"
    )


def test_committed_crd_parses_as_one_kubernetes_object() -> None:
    text = CRD_FILE.read_text(encoding="utf-8")
    documents = [d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d]
    assert documents == [_CRD]


# --- names, scope, columns, subresources ----------------------------------------------------------------------


def test_crd_names_group_and_scope() -> None:
    spec = _CRD["spec"]
    assert _CRD["metadata"]["name"] == "kartas.run.ai"
    assert spec["group"] == "run.ai"
    assert spec["scope"] == "Cluster"
    assert spec["names"] == {
        "kind": "Karta",
        "listKind": "KartaList",
        "plural": "kartas",
        "singular": "karta",
        "shortNames": ["krt"],
    }


def test_crd_serves_and_stores_v1alpha1_with_status_subresource() -> None:
    (version,) = _CRD["spec"]["versions"]
    assert version["name"] == "v1alpha1"
    assert version["served"] is True
    assert version["storage"] is True
    assert version["subresources"] == {"status": {}}


def test_crd_printer_columns_show_framework_root_component_and_age() -> None:
    (version,) = _CRD["spec"]["versions"]
    columns = {c["name"]: (c["type"], c["jsonPath"]) for c in version["additionalPrinterColumns"]}
    assert columns == {
        "Framework": ("string", ".spec.structureDefinition.rootComponent.kind.kind"),
        "Root Component": ("string", ".spec.structureDefinition.rootComponent.name"),
        "Age": ("date", ".metadata.creationTimestamp"),
    }


def test_status_conditions_follow_metav1_condition() -> None:
    conditions = _at("status.conditions")
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]
    item = conditions["items"]
    assert set(item["required"]) == {"type", "status", "reason", "message", "lastTransitionTime"}
    assert item["properties"]["status"]["enum"] == ["True", "False", "Unknown"]
    assert item["properties"]["lastTransitionTime"]["format"] == "date-time"
    assert item["properties"]["observedGeneration"]["type"] == "integer"


# --- the rules the API server enforces ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "keys"),
    [
        ("spec.structureDefinition.childComponents", ["name"]),
        ("spec.structureDefinition.additionalChildKinds", ["kind"]),
        ("spec.optimizationInstructions.gangScheduling.podGroups", ["name"]),
        ("spec.optimizationInstructions.gangScheduling.podGroups.[].members", ["componentName"]),
        ("spec.optimizationInstructions.gangScheduling.podGroup.subGroups", ["componentName"]),
    ],
)
def test_keyed_lists_are_list_maps(path: str, keys: list[str]) -> None:
    node = _at(path)
    assert node["x-kubernetes-list-type"] == "map"
    assert node["x-kubernetes-list-map-keys"] == keys


@pytest.mark.parametrize(
    ("path", "list_type"),
    [
        ("spec.optimizationInstructions.gangScheduling.podGroups.[].members.[].groupByKeyPaths", "set"),
        ("spec.optimizationInstructions.gangScheduling.podGroups.[].members.[].filters", "set"),
        (f"{ROOT}.statusDefinition.statusMappings.running", "atomic"),
        (f"{ROOT}.statusDefinition.statusMappings.resuming", "atomic"),
        (f"{ROOT}.suspendDefinition.suspendActions", "atomic"),
        (f"{ROOT}.suspendDefinition.resumeActions", "atomic"),
    ],
)
def test_sets_and_atomic_lists(path: str, list_type: str) -> None:
    assert _at(path)["x-kubernetes-list-type"] == list_type


def test_size_minimums() -> None:
    assert _at(f"{CHILD}.podSelector.componentTypeSelector.keyPath")["minLength"] == 1
    assert _at(f"{CHILD}.podSelector.componentTypeSelector.matchLabels")["minProperties"] == 1
    assert _at(f"{ROOT}.suspendDefinition.suspendActions")["minItems"] == 1
    assert _at(f"{ROOT}.suspendDefinition.resumeActions")["minItems"] == 1


def test_conditions_definition_defaults() -> None:
    node = _at(f"{ROOT}.statusDefinition.conditionsDefinition")
    defaults = {name: prop.get("default") for name, prop in node["properties"].items()}
    assert defaults == {
        "path": None,
        "typeFieldName": "type",
        "statusFieldName": "status",
        "messageFieldName": "message",
        "reasonFieldName": "reason",
    }
    assert node["required"] == ["path"]


def test_gvk_requires_all_three_fields() -> None:
    assert _at(f"{ROOT}.kind")["required"] == ["group", "version", "kind"]
    assert _at("spec.structureDefinition.additionalChildKinds.[]")["required"] == ["group", "version", "kind"]


def test_component_type_selector_carries_the_two_cel_rules() -> None:
    rules = _at(f"{CHILD}.podSelector.componentTypeSelector")["x-kubernetes-validations"]
    assert rules == [
        {
            "rule": "has(self.keyPath) || has(self.matchLabels)",
            "message": "at least one of keyPath or matchLabels must be set",
        },
        {"rule": "!has(self.value) || has(self.keyPath)", "message": "value requires keyPath"},
    ]


def test_required_fields() -> None:
    assert _schema()["required"] == ["spec"]
    assert _at("spec")["required"] == ["structureDefinition"]
    assert _at("spec.structureDefinition")["required"] == ["rootComponent"]
    assert _at(ROOT)["required"] == ["name"]
    assert _at(f"{ROOT}.statusDefinition")["required"] == ["statusMappings"]
    assert _at(f"{ROOT}.suspendDefinition")["required"] == ["suspendActions", "resumeActions"]
    assert _at(f"{ROOT}.suspendDefinition.suspendActions.[]")["required"] == ["path", "value"]
    assert _at(f"{ROOT}.podSelector.componentInstanceSelector")["required"] == ["idPath"]
    assert _at(f"{ROOT}.podSelector.replicaSelector")["required"] == ["keyPath"]
    assert _at(f"{ROOT}.statusDefinition.statusMappings.running.[].byConditions.[]")["required"] == ["type"]
    assert _at(f"{ROOT}.statusDefinition.statusMappings.running.[].byExpression")["required"] == [
        "expression",
        "expectedResult",
    ]


# --- structural schema checker (the apiextensions rules we can check offline) ---------------------------------

_ALLOWED_KEYS = {
    "description", "type", "format", "title", "default", "nullable", "enum", "maximum", "minimum",
    "exclusiveMaximum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "multipleOf", "maxProperties", "minProperties", "required", "items", "properties", "additionalProperties",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-validations",
    "example", "externalDocs",
}  # fmt: skip
_SCALARS = {"string", "integer", "number", "boolean"}


def structural_problems(node: Any, path: str = "", *, root: bool = True) -> list[str]:
    """Why `node` is not a structural schema (empty when it is)."""
    problems: list[str] = []
    if not isinstance(node, dict):
        return [f"{path or '.'}: a schema must be an object"]
    for key in node:
        if key not in _ALLOWED_KEYS:
            problems.append(f"{path or '.'}: {key!r} is not allowed in a structural schema")
    typed = node.get("type")
    if not typed and not (node.get("x-kubernetes-int-or-string") or node.get("x-kubernetes-preserve-unknown-fields")):
        problems.append(f"{path or '.'}: no type")
    if typed not in (None, "object", "array", *_SCALARS):
        problems.append(f"{path}: unknown type {typed!r}")
    if "properties" in node and "additionalProperties" in node:
        problems.append(f"{path}: properties and additionalProperties are mutually exclusive")
    if node.get("additionalProperties") is False or node.get("additionalProperties") is True:
        problems.append(f"{path}: additionalProperties must be a schema")
    if node.get("uniqueItems"):
        problems.append(f"{path}: uniqueItems is forbidden")
    if typed == "array" and "items" not in node:
        problems.append(f"{path}: an array needs items")
    for name in node.get("required", []):
        if name not in node.get("properties", {}):
            problems.append(f"{path}: required {name!r} is not a property")
    if "default" in node:
        expected = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list}.get(typed or "")
        if expected and not isinstance(node["default"], expected):
            problems.append(f"{path}: default {node['default']!r} is not a {typed}")
    list_type = node.get("x-kubernetes-list-type")
    if list_type is not None:
        if typed != "array":
            problems.append(f"{path}: x-kubernetes-list-type on a non-array")
        if list_type not in ("atomic", "set", "map"):
            problems.append(f"{path}: unknown list type {list_type!r}")
        items = node.get("items", {})
        if list_type in ("set", "map") and items.get("nullable"):
            problems.append(f"{path}: items of a {list_type} cannot be nullable")
        if list_type == "set" and items.get("type") not in _SCALARS:
            problems.append(f"{path}: a set of non-scalars needs atomic items")
        if list_type == "map":
            keys = node.get("x-kubernetes-list-map-keys") or []
            if not keys:
                problems.append(f"{path}: a list-map needs x-kubernetes-list-map-keys")
            if items.get("type") != "object":
                problems.append(f"{path}: list-map items must be objects")
            for key in keys:
                prop = items.get("properties", {}).get(key)
                if prop is None:
                    problems.append(f"{path}: list-map key {key!r} is not an item property")
                    continue
                if prop.get("type") not in _SCALARS:
                    problems.append(f"{path}: list-map key {key!r} must be a scalar")
                if key not in items.get("required", []) and "default" not in prop:
                    problems.append(f"{path}: list-map key {key!r} must be required or defaulted")
                if prop.get("nullable"):
                    problems.append(f"{path}: list-map key {key!r} cannot be nullable")
    elif node.get("x-kubernetes-list-map-keys"):
        problems.append(f"{path}: list-map keys without x-kubernetes-list-type: map")
    for rule in node.get("x-kubernetes-validations", []):
        if not rule.get("rule") or not rule.get("message"):
            problems.append(f"{path}: a CEL rule needs rule and message")
    for name, prop in node.get("properties", {}).items():
        if root and name == "metadata" and set(prop) - {"type", "properties", "description"}:
            problems.append("metadata: only type (and name/generateName) may be specified")
        problems += structural_problems(prop, f"{path}.{name}", root=False)
    if isinstance(node.get("items"), dict):
        problems += structural_problems(node["items"], f"{path}[]", root=False)
    if isinstance(node.get("additionalProperties"), dict):
        problems += structural_problems(node["additionalProperties"], f"{path}{{}}", root=False)
    return problems


def test_crd_schema_is_structural() -> None:
    assert structural_problems(_schema()) == []
    assert _schema()["type"] == "object"


def test_the_structural_checker_catches_non_structural_schemas() -> None:
    bad = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/definitions/x"},
            "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "c": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": False},
            "d": {"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "map"},
        },
    }
    problems = "\n".join(structural_problems(bad))
    assert "'$ref' is not allowed" in problems
    assert "'anyOf' is not allowed" in problems
    assert ".b: no type" in problems
    assert "mutually exclusive" in problems
    assert "needs x-kubernetes-list-map-keys" in problems


# --- a small validator of the CRD schema: what the API server accepts -----------------------------------------


def crd_errors(value: Any, node: dict[str, Any], path: str = "") -> list[str]:
    """Why the API server would reject `value` under `node` (types, required, unknown fields under
    fieldValidation=Strict, sizes, enums, list-map and set uniqueness, and the two CEL rules)."""
    where = path or "."
    if value is None:
        return [] if node.get("nullable") else [f"{where}: null is not allowed"]
    typed = node.get("type")
    checks = {"object": dict, "array": list, "string": str, "integer": int, "boolean": bool}
    if typed in checks and (not isinstance(value, checks[typed]) or (typed == "integer" and isinstance(value, bool))):
        return [f"{where}: must be {typed}"]
    errors: list[str] = []
    if "enum" in node and value not in node["enum"]:
        errors.append(f"{where}: not one of {node['enum']}")
    if isinstance(value, str) and len(value) < node.get("minLength", 0):
        errors.append(f"{where}: shorter than {node['minLength']}")
    if isinstance(value, list):
        if len(value) < node.get("minItems", 0):
            errors.append(f"{where}: fewer than {node['minItems']} items")
        list_type = node.get("x-kubernetes-list-type")
        if list_type == "set" and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
            errors.append(f"{where}: duplicate entries in a set")
        if list_type == "map":
            keys = node["x-kubernetes-list-map-keys"]
            seen = [tuple(item.get(k) for k in keys) for item in value if isinstance(item, dict)]
            if len(set(seen)) != len(seen):
                errors.append(f"{where}: duplicate entries for key {keys}")
        for index, item in enumerate(value):
            errors += crd_errors(item, node["items"], f"{path}[{index}]")
    if isinstance(value, dict):
        if len(value) < node.get("minProperties", 0):
            errors.append(f"{where}: fewer than {node['minProperties']} properties")
        for name in node.get("required", []):
            if name not in value:
                errors.append(f"{where}: {name} is required")
        properties = node.get("properties")
        for name, item in value.items():
            if properties is not None:
                if name not in properties:
                    errors.append(f"{path}.{name}: unknown field")
                else:
                    errors += crd_errors(item, properties[name], f"{path}.{name}")
            elif isinstance(node.get("additionalProperties"), dict):
                errors += crd_errors(item, node["additionalProperties"], f"{path}.{name}")
        for rule in node.get("x-kubernetes-validations", []):
            if not _cel(rule["rule"], value):
                errors.append(f"{where}: {rule['message']}")
    return errors


def _cel(rule: str, value: dict[str, Any]) -> bool:
    """The two `has()` rules the CRD uses, evaluated by hand."""
    has = {name: name in value for name in re.findall(r"has\(self\.(\w+)\)", rule)}
    if rule == "has(self.keyPath) || has(self.matchLabels)":
        return has["keyPath"] or has["matchLabels"]
    if rule == "!has(self.value) || has(self.keyPath)":
        return not has["value"] or has["keyPath"]
    raise AssertionError(f"unknown rule {rule}")


def _definition_files() -> list[Path]:
    fixtures = [p for p in FIXTURES.rglob("*") if p.suffix in (".yaml", ".json") and "invalid" not in p.parts]
    return sorted(fixtures) + sorted(CATALOG.glob("*.yaml"))


def _valid_documents() -> list[tuple[str, dict[str, Any]]]:
    """Every whole Karta object of the fixtures (KartaList items included; bare specs cannot be applied)."""
    out = []
    for file in _definition_files():
        text = file.read_text(encoding="utf-8")
        for index, doc in enumerate(d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d):
            items = doc["items"] if doc.get("kind") == "KartaList" else [doc]
            for item_index, item in enumerate(items):
                if item.get("kind") == "Karta":
                    out.append((f"{file.relative_to(REPO)}#{index}.{item_index}", item))
    return out


VALID = _valid_documents()


@pytest.mark.parametrize(("label", "document"), VALID, ids=[label for label, _ in VALID])
def test_definitions_are_accepted_by_the_crd_schema(label: str, document: dict[str, Any]) -> None:
    assert crd_errors(document, _schema()) == []


@pytest.mark.parametrize(("label", "document"), VALID, ids=[label for label, _ in VALID])
def test_dumped_definitions_are_accepted_by_the_crd_schema(label: str, document: dict[str, Any]) -> None:
    """What we dump (with the CRD defaults filled in) is what the API server stores."""
    (karta,) = load_definitions(document)
    assert crd_errors(to_dict(karta), _schema()) == []


MINIMAL = MINIMAL_KARTA


def _with(path: str, value: Any) -> dict[str, Any]:
    obj = copy.deepcopy(MINIMAL)
    target: Any = obj
    parts = path.split(".")
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    if value is ...:
        del target[parts[-1]]
    else:
        target[parts[-1]] = value
    return obj


R = "spec.structureDefinition.rootComponent"
REJECTED = {
    "no structureDefinition": (_with("spec.structureDefinition", ...), "structureDefinition is required"),
    "gvk without version": (_with(f"{R}.kind", {"group": "a", "kind": "B"}), "version is required"),
    "unknown field": (_with(f"{R}.podTemplate", ".spec.template"), "unknown field"),
    "selector with neither": (
        _with(f"{R}.podSelector", {"componentTypeSelector": {}}),
        "at least one of keyPath or matchLabels must be set",
    ),
    "value without keyPath": (
        _with(f"{R}.podSelector", {"componentTypeSelector": {"value": "x", "matchLabels": {"a": "b"}}}),
        "value requires keyPath",
    ),
    "empty keyPath": (_with(f"{R}.podSelector", {"componentTypeSelector": {"keyPath": ""}}), "shorter than 1"),
    "empty matchLabels": (
        _with(f"{R}.podSelector", {"componentTypeSelector": {"keyPath": ".a", "matchLabels": {}}}),
        "fewer than 1 properties",
    ),
    "no suspend actions": (
        _with(f"{R}.suspendDefinition", {"suspendActions": [], "resumeActions": [{"path": ".a", "value": "1"}]}),
        "fewer than 1 items",
    ),
    "duplicate additional kind": (
        _with(
            "spec.structureDefinition.additionalChildKinds",
            [{"group": "a", "version": "v1", "kind": "Service"}, {"group": "b", "version": "v1", "kind": "Service"}],
        ),
        "duplicate entries for key ['kind']",
    ),
    "replicas path not a string": (_with(f"{R}.scaleDefinition", {"replicasPath": 3}), "must be string"),
}


@pytest.mark.parametrize("case", list(REJECTED))
def test_structurally_invalid_kartas_are_rejected_by_the_crd_schema(case: str) -> None:
    document, message = REJECTED[case]
    assert any(message in error for error in crd_errors(document, _schema())), crd_errors(document, _schema())


def test_minimal_karta_is_accepted_by_the_crd_schema() -> None:
    assert crd_errors(MINIMAL, _schema()) == []


# --- the editor JSON Schema -----------------------------------------------------------------------------------


def test_json_schema_rejects_unknown_fields_everywhere_in_the_spec() -> None:
    defs = json_schema()["$defs"]
    closed = {name for name, d in defs.items() if d.get("additionalProperties") is False}
    assert closed == set(defs) - {"ObjectMeta"}


def test_json_schema_has_descriptions_and_no_kubernetes_markers() -> None:
    text = json_schema_text()
    assert "x-kubernetes" not in text
    assert '"default": null' not in text
    defs = json_schema()["$defs"]
    undocumented = [
        f"{name}.{field}"
        for name, d in defs.items()
        if name != "ObjectMeta"
        for field, prop in d.get("properties", {}).items()
        if not prop.get("description")
    ]
    assert undocumented == []


def test_json_schema_says_the_selector_rules_for_editors() -> None:
    selector = json_schema()["$defs"]["ComponentTypeSelector"]
    assert selector["anyOf"] == [{"required": ["keyPath"]}, {"required": ["matchLabels"]}]
    assert selector["dependentRequired"] == {"value": ["keyPath"]}
    assert json_schema()["$defs"]["Karta"]["properties"]["kind"]["const"] == "Karta"
