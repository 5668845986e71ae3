"""The validator: upstream's rules (karta-spec §9.2 and the §15.3 catalogue), the rules added here, and the jq
checks on every jq field, each finding at its YAML field path.

Test design: most cases are small dicts built from one valid base, asserting the exact (severity, rule, path)
set a user would see; the fixture files under tests/fixtures/definitions/{invalid,warnings} carry their expected
findings in `# expect:` comment lines, so a new case is a new file.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from workload_map.model import jq_fields, load_definition, load_definitions
from workload_map.validation import RULES, Finding, errors, expression_problems, is_valid, validate, warnings

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "definitions"
CATALOG = REPO / "src" / "workload_map" / "catalog" / "definitions"
SD = "spec.structureDefinition"
ROOT = f"{SD}.rootComponent"


def jq_safety_available() -> bool:
    try:
        import workload_map.jq.safety  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


needs_jq_safety = pytest.mark.skipif(not jq_safety_available(), reason="workload_map.jq.safety not written yet")

BASE: dict[str, Any] = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "base"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "root",
                "kind": {"group": "example.org", "version": "v1", "kind": "Widget"},
                "statusDefinition": {"statusMappings": {"running": [{"byPhase": "Running"}]}},
            },
            "childComponents": [
                {
                    "name": "worker",
                    "ownerRef": "root",
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "podSelector": {"componentTypeSelector": {"matchLabels": {"role": "worker"}}},
                }
            ],
        }
    },
}
BASE["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["phaseDefinition"] = {"path": ".status.phase"}


def base() -> dict[str, Any]:
    return copy.deepcopy(BASE)


def root_of(obj: dict[str, Any]) -> dict[str, Any]:
    root: dict[str, Any] = obj["spec"]["structureDefinition"]["rootComponent"]
    return root


def children_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    children: list[dict[str, Any]] = obj["spec"]["structureDefinition"].setdefault("childComponents", [])
    return children


def findings_of(obj: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f.severity, f.rule, f.path) for f in validate(load_definition(obj))}


def messages_of(obj: dict[str, Any]) -> list[str]:
    return [str(f) for f in validate(load_definition(obj))]


# --- Finding ------------------------------------------------------------------------------------------------


def test_finding_renders_severity_path_and_message() -> None:
    finding = Finding("error", f"{ROOT}.ownerRef", "root component cannot have owner ref", "root-owner-ref")
    assert str(finding) == f"error: {ROOT}.ownerRef: root component cannot have owner ref"
    assert str(Finding("warning", "", "whole definition", "x")) == "warning: whole definition"


def test_finding_is_frozen_and_hashable() -> None:
    finding = Finding("error", "p", "m", "r")
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.path = "q"  # type: ignore[misc]
    assert len({finding, Finding("error", "p", "m", "r")}) == 1


def test_warnings_do_not_make_a_definition_invalid() -> None:
    warning = Finding("warning", "p", "m", "r")
    error = Finding("error", "p", "m", "r")
    assert is_valid([warning])
    assert not is_valid([warning, error])
    assert errors([warning, error]) == [error]
    assert warnings([warning, error]) == [warning]


def test_every_rule_id_is_documented() -> None:
    text = (REPO / "docs" / "definitions.md").read_text(encoding="utf-8")
    missing = [rule for rule in [*RULES, "load"] if f"`{rule}`" not in text]
    assert missing == []


# --- the base and the fixtures ------------------------------------------------------------------------------


def test_the_base_definition_is_valid_without_warnings() -> None:
    assert findings_of(base()) == set()


VALID_FILES = sorted((FIXTURES / "valid").iterdir())


@pytest.mark.parametrize("path", VALID_FILES, ids=[p.name for p in VALID_FILES])
def test_valid_fixtures_have_no_findings(path: Path) -> None:
    assert [str(f) for k in load_definitions(path) for f in validate(k)] == []


CATALOG_FILES = sorted(CATALOG.glob("*.yaml"))


@pytest.mark.parametrize("path", CATALOG_FILES, ids=[p.stem for p in CATALOG_FILES])
def test_catalog_definitions_have_no_errors(path: Path) -> None:
    assert [str(f) for k in load_definitions(path) for f in errors(validate(k))] == []


EXPECT_FILES = sorted((FIXTURES / "invalid").glob("*.yaml")) + sorted((FIXTURES / "warnings").glob("*.yaml"))


@pytest.mark.parametrize("path", EXPECT_FILES, ids=[f"{p.parent.name}/{p.name}" for p in EXPECT_FILES])
def test_fixture_findings_are_exactly_the_expected_ones(path: Path) -> None:
    expected = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# expect:"):
            severity, rule, field_path = line.removeprefix("# expect:").split(maxsplit=2)
            expected.add((severity, rule, field_path))
    got = {(f.severity, f.rule, f.path) for k in load_definitions(path) for f in validate(k)}
    assert got == expected
    if path.parent.name == "warnings":
        assert all(is_valid(validate(k)) for k in load_definitions(path))


# --- upstream rules, one error each (§15.3) -----------------------------------------------------------------


def test_root_without_kind() -> None:
    obj = base()
    del root_of(obj)["kind"]
    assert findings_of(obj) == {("error", "root-kind", f"{ROOT}.kind")}
    assert "root component must have full kind (group, version, kind)" in messages_of(obj)[0]


@pytest.mark.parametrize(
    "kind",
    [
        {"group": "", "version": "v1", "kind": "Widget"},
        {"group": "example.org", "version": "", "kind": "Widget"},
        {"group": "example.org", "version": "v1", "kind": ""},
        {"version": "v1", "kind": "Widget"},
    ],
)
def test_root_with_incomplete_kind(kind: dict[str, str]) -> None:
    obj = base()
    root_of(obj)["kind"] = kind
    assert findings_of(obj) == {("error", "root-kind", f"{ROOT}.kind")}


def test_only_pod_may_have_an_empty_group() -> None:
    obj = base()
    root_of(obj)["kind"] = {"group": "", "version": "v1", "kind": "Pod"}
    assert findings_of(obj) == set()


@pytest.mark.parametrize("owner_ref", ["", "worker", "anything"])
def test_root_with_owner_ref_even_empty(owner_ref: str) -> None:
    obj = base()
    root_of(obj)["ownerRef"] = owner_ref
    assert findings_of(obj) == {("error", "root-owner-ref", f"{ROOT}.ownerRef")}
    assert "root component cannot have owner ref" in messages_of(obj)[0]


def test_root_without_status_definition() -> None:
    obj = base()
    del root_of(obj)["statusDefinition"]
    assert findings_of(obj) == {("error", "root-status-definition", f"{ROOT}.statusDefinition")}
    assert "root component must have status definition" in messages_of(obj)[0]


@pytest.mark.parametrize("owner_ref", [None, ""])
def test_child_without_owner_ref(owner_ref: str | None) -> None:
    obj = base()
    children_of(obj)[0]["ownerRef"] = owner_ref
    assert findings_of(obj) == {("error", "child-owner-ref", f"{SD}.childComponents[0].ownerRef")}
    assert "child component 'worker' has no owner ref" in messages_of(obj)[0]


def test_child_with_owner_ref_to_a_missing_component_lists_the_components() -> None:
    obj = base()
    children_of(obj)[0]["ownerRef"] = "ghost"
    assert findings_of(obj) == {("error", "owner-ref-target", f"{SD}.childComponents[0].ownerRef")}
    (message,) = messages_of(obj)
    assert "child component 'worker' has owner ref to non-existing component 'ghost'" in message
    assert "(components: root, worker)" in message


def test_two_way_cycle() -> None:
    obj = base()
    children_of(obj)[:] = [{"name": "a", "ownerRef": "b"}, {"name": "b", "ownerRef": "a"}]
    assert findings_of(obj) == {("error", "ownership-cycle", f"{SD}.childComponents[0].ownerRef")}
    assert "ownership cycle detected involving component a (a -> b -> a)" in messages_of(obj)[0]


def test_a_self_reference_is_a_cycle() -> None:
    obj = base()
    children_of(obj)[:] = [{"name": "a", "ownerRef": "a"}]
    assert findings_of(obj) == {("error", "ownership-cycle", f"{SD}.childComponents[0].ownerRef")}


def test_a_valid_chain_has_no_cycle() -> None:
    obj = base()
    children_of(obj)[:] = [
        {"name": "c", "ownerRef": "b"},
        {"name": "b", "ownerRef": "a"},
        {"name": "a", "ownerRef": "root"},
    ]
    assert findings_of(obj) == set()


def test_a_component_with_an_empty_name() -> None:
    obj = base()
    children_of(obj).append({"name": "", "ownerRef": "root"})
    assert findings_of(obj) == {("error", "component-name-empty", f"{SD}.childComponents[1].name")}


SPEC_KINDS = {
    "podTemplateSpecPath": ".spec.template",
    "podSpecPath": ".spec.template.spec",
    "fragmentedPodSpecDefinition": {"containersPath": ".spec.containers"},
}


@pytest.mark.parametrize(
    "kinds",
    [
        ("podTemplateSpecPath", "podSpecPath"),
        ("podTemplateSpecPath", "fragmentedPodSpecDefinition"),
        ("podSpecPath", "fragmentedPodSpecDefinition"),
        ("podTemplateSpecPath", "podSpecPath", "fragmentedPodSpecDefinition"),
    ],
)
def test_multiple_pod_spec_kinds(kinds: tuple[str, ...]) -> None:
    obj = base()
    children_of(obj)[0]["specDefinition"] = {k: SPEC_KINDS[k] for k in kinds}
    assert findings_of(obj) == {("error", "pod-spec-exclusive", f"{SD}.childComponents[0].specDefinition")}
    assert "component 'worker' has multiple pod spec definitions" in messages_of(obj)[0]


def test_metadata_path_does_not_count_as_a_pod_spec_kind() -> None:
    obj = base()
    children_of(obj)[0]["specDefinition"] = {"podTemplateSpecPath": ".a", "metadataPath": ".b"}
    assert findings_of(obj) == set()


def test_instance_id_path_without_instance_selector() -> None:
    obj = base()
    children_of(obj)[0]["instanceIdPath"] = ".spec.groups[].name"
    assert findings_of(obj) == {
        ("error", "instance-id-without-selector", f"{SD}.childComponents[0].podSelector.componentInstanceSelector")
    }
    assert "component 'worker' has instance id path but no pod component instance selector" in messages_of(obj)[0]


def test_instance_selector_without_instance_id_path() -> None:
    obj = base()
    children_of(obj)[0]["podSelector"]["componentInstanceSelector"] = {"idPath": ".metadata.labels.group"}
    assert findings_of(obj) == {("error", "instance-selector-without-id", f"{SD}.childComponents[0].instanceIdPath")}
    assert "component 'worker' has pod component instance selector but no instance id path" in messages_of(obj)[0]


def test_instance_id_path_with_instance_selector_passes() -> None:
    obj = base()
    children_of(obj)[0]["instanceIdPath"] = ".spec.groups[].name"
    children_of(obj)[0]["podSelector"]["componentInstanceSelector"] = {"idPath": ".metadata.labels.group"}
    assert findings_of(obj) == set()


SELECTOR = f"{SD}.childComponents[0].podSelector.componentTypeSelector"


@pytest.mark.parametrize(
    "selector",
    [
        {"keyPath": ".metadata.labels.role"},
        {"keyPath": ".metadata.labels.role", "value": "worker"},
        {"matchLabels": {"role": "worker"}},
        {"keyPath": ".metadata.labels.role", "matchLabels": {"app": "x"}},
        {"matchLabels": {"app.kubernetes.io/component": "worker"}},
        {"matchLabels": {"app": ""}},
        {"matchLabels": {"a" * 63: "b" * 63, f"{'d' * 60}.example.com/x": "A_b.c-9"}},
    ],
)
def test_component_type_selectors_that_pass(selector: dict[str, Any]) -> None:
    obj = base()
    children_of(obj)[0]["podSelector"]["componentTypeSelector"] = selector
    assert findings_of(obj) == set()


@pytest.mark.parametrize(
    ("selector", "rule", "path", "message"),
    [
        ({}, "selector-empty", SELECTOR, "with neither keyPath nor matchLabels"),
        ({"matchLabels": {}}, "selector-empty-match-labels", f"{SELECTOR}.matchLabels", "with empty matchLabels"),
        (
            {"keyPath": ".a", "matchLabels": {}},
            "selector-empty-match-labels",
            f"{SELECTOR}.matchLabels",
            "with empty matchLabels",
        ),
        (
            {"value": "x", "matchLabels": {"a": "b"}},
            "selector-value-without-key-path",
            f"{SELECTOR}.value",
            "value without keyPath",
        ),
        ({"matchLabels": {"app name": "x"}}, "selector-label-syntax", f'{SELECTOR}.matchLabels["app name"]', "key"),
        ({"matchLabels": {"tier": "proxy "}}, "selector-label-syntax", f"{SELECTOR}.matchLabels.tier", "value"),
        ({"matchLabels": {"a" * 64: "x"}}, "selector-label-syntax", f"{SELECTOR}.matchLabels.{'a' * 64}", "63"),
        ({"matchLabels": {"x": "v" * 64}}, "selector-label-syntax", f"{SELECTOR}.matchLabels.x", "63"),
        ({"matchLabels": {"/x": "v"}}, "selector-label-syntax", f'{SELECTOR}.matchLabels["/x"]', "prefix"),
        ({"matchLabels": {"a/b/c": "v"}}, "selector-label-syntax", f'{SELECTOR}.matchLabels["a/b/c"]', "one '/'"),
        ({"matchLabels": {"Ex.com/x": "v"}}, "selector-label-syntax", f'{SELECTOR}.matchLabels["Ex.com/x"]', "DNS"),
        ({"matchLabels": {"a.com/": "v"}}, "selector-label-syntax", f'{SELECTOR}.matchLabels["a.com/"]', "empty"),
    ],
)
def test_component_type_selectors_that_fail(selector: dict[str, Any], rule: str, path: str, message: str) -> None:
    obj = base()
    children_of(obj)[0]["podSelector"]["componentTypeSelector"] = selector
    assert findings_of(obj) == {("error", rule, path)}
    (text,) = messages_of(obj)
    assert "component 'worker' has" in text
    assert message in text


def test_invalid_match_labels_report_every_entry_sorted_and_stable() -> None:
    labels = {"z bad": "x", "ok": "fine", "a bad": "y", "m": "bad value "}
    obj = base()
    children_of(obj)[0]["podSelector"]["componentTypeSelector"] = {"matchLabels": labels}
    first = messages_of(obj)
    assert [m.split(": ", 2)[1] for m in first] == [
        f'{SELECTOR}.matchLabels["a bad"]',
        f"{SELECTOR}.matchLabels.m",
        f'{SELECTOR}.matchLabels["z bad"]',
    ]
    for _ in range(20):
        shuffled = dict(reversed(list(labels.items())))
        obj2 = base()
        children_of(obj2)[0]["podSelector"]["componentTypeSelector"] = {"matchLabels": shuffled}
        assert messages_of(obj2) == first


def test_no_gang_passes_and_an_unknown_member_fails() -> None:
    obj = base()
    obj["spec"]["optimizationInstructions"] = {"gangScheduling": None}
    assert findings_of(obj) == set()
    obj["spec"]["optimizationInstructions"]["gangScheduling"] = {
        "podGroups": [{"name": "g", "members": [{"componentName": "worker"}, {"componentName": "nonexistent"}]}]
    }
    path = "spec.optimizationInstructions.gangScheduling.podGroups[0].members[1].componentName"
    assert findings_of(obj) == {("error", "gang-member-component", path)}
    assert "pod-group member component 'nonexistent' is not defined" in messages_of(obj)[0]


def test_a_parent_component_may_be_a_gang_member() -> None:
    obj = base()
    obj["spec"]["optimizationInstructions"] = {
        "gangScheduling": {"podGroups": [{"name": "g", "members": [{"componentName": "root"}]}]}
    }
    assert findings_of(obj) == set()


def test_all_errors_are_reported_at_once() -> None:
    obj = base()
    root_of(obj)["kind"]["group"] = ""
    children_of(obj)[0]["ownerRef"] = None
    obj["spec"]["optimizationInstructions"] = {
        "gangScheduling": {"podGroups": [{"name": "g", "members": [{"componentName": "nonexistent"}]}]}
    }
    assert {rule for _, rule, _ in findings_of(obj)} == {"root-kind", "child-owner-ref", "gang-member-component"}


def test_duplicate_names_suppress_the_name_based_checks_only() -> None:
    obj = base()
    children_of(obj).append({"name": "worker", "ownerRef": "ghost", "podSelector": {"componentTypeSelector": {}}})
    got = findings_of(obj)
    assert ("error", "unique-names", f"{SD}.childComponents[1].name") in got
    assert not any(rule in ("owner-ref-target", "child-owner-ref", "ownership-cycle") for _, rule, _ in got)
    # a field-local problem is still reported
    assert ("error", "selector-empty", f"{SD}.childComponents[1].podSelector.componentTypeSelector") in got
    assert "component name worker is not unique" in messages_of(obj)[0]


def test_a_child_named_like_the_root_is_a_duplicate() -> None:
    obj = base()
    children_of(obj).append({"name": "root", "ownerRef": "worker"})
    assert findings_of(obj) == {("error", "unique-names", f"{SD}.childComponents[1].name")}


# --- rules added here ---------------------------------------------------------------------------------------


def test_a_matcher_with_nothing_set_is_fine() -> None:
    obj = base()
    root_of(obj)["statusDefinition"]["statusMappings"]["running"] = [{}]
    assert findings_of(obj) == set()


def test_by_phase_without_phase_definition_can_never_match() -> None:
    obj = base()
    del root_of(obj)["statusDefinition"]["phaseDefinition"]
    path = f"{ROOT}.statusDefinition.statusMappings.running[0].byPhase"
    assert findings_of(obj) == {("warning", "matcher-without-phase", path)}
    assert "byPhase 'Running' can never match: the status definition has no phaseDefinition" in messages_of(obj)[0]


def test_by_conditions_without_conditions_definition_can_never_match() -> None:
    obj = base()
    root_of(obj)["statusDefinition"]["statusMappings"]["degraded"] = [{"byConditions": [{"type": "Degraded"}]}]
    path = f"{ROOT}.statusDefinition.statusMappings.degraded[0].byConditions"
    assert findings_of(obj) == {("warning", "matcher-without-conditions", path)}


def test_several_pod_bearing_components_need_type_selectors() -> None:
    obj = base()
    children_of(obj).append({"name": "leader", "ownerRef": "root", "specDefinition": {"podSpecPath": ".spec.pod"}})
    assert findings_of(obj) == {("warning", "pods-not-attributable", f"{SD}.childComponents[1].podSelector")}
    # one pod-bearing component needs no selector
    single = base()
    del children_of(single)[0]["podSelector"]
    assert findings_of(single) == set()


def test_a_logical_component_without_pods_needs_no_selector() -> None:
    obj = base()
    children_of(obj).append({"name": "group", "ownerRef": "root", "specDefinition": {"metadataPath": ".m"}})
    assert findings_of(obj) == set()


def test_suspend_values_must_be_json_literals() -> None:
    obj = base()
    root_of(obj)["suspendDefinition"] = {
        "suspendActions": [
            {"path": ".spec.suspend", "value": "true"},
            {"path": ".spec.mode", "value": '"Suspended"'},
            {"path": ".spec.mode", "value": "Suspended"},
            {"path": ".spec.n", "value": "{"},
        ],
        "resumeActions": [{"path": ".spec.suspend", "value": "null"}, {"path": ".spec.x", "value": ""}],
    }
    base_path = f"{ROOT}.suspendDefinition"
    assert findings_of(obj) == {
        ("error", "suspend-value-json", f"{base_path}.suspendActions[2].value"),
        ("error", "suspend-value-json", f"{base_path}.suspendActions[3].value"),
        ("error", "suspend-value-json", f"{base_path}.resumeActions[1].value"),
    }
    assert "a string must be quoted inside the value: '\"Suspended\"'" in messages_of(obj)[0]


def test_both_gang_formats_warn_that_pod_group_wins() -> None:
    obj = base()
    obj["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroups": [{"name": "g", "members": [{"componentName": "worker"}]}],
            "podGroup": {"name": "g", "subGroups": [{"componentName": "worker"}]},
        }
    }
    assert findings_of(obj) == {
        ("warning", "gang-both-formats", "spec.optimizationInstructions.gangScheduling.podGroups")
    }


@pytest.mark.parametrize(
    ("topology", "ok"),
    [
        ({"topologyName": "dc", "requiredTopologyLevel": "zone"}, True),
        ({"topologyName": "dc", "preferredTopologyLevel": "rack"}, True),
        ({"topologyName": "dc"}, False),
        ({"topologyName": "", "requiredTopologyLevel": "zone"}, False),
    ],
)
def test_topology_needs_a_name_and_a_level(topology: dict[str, str], ok: bool) -> None:
    obj = base()
    obj["spec"]["optimizationInstructions"] = {"gangScheduling": {"podGroup": {"name": "g", "topology": topology}}}
    assert (findings_of(obj) == set()) is ok


def test_additional_child_kinds_with_the_same_kind_collide_on_the_api_server() -> None:
    obj = base()
    obj["spec"]["structureDefinition"]["additionalChildKinds"] = [
        {"group": "", "version": "v1", "kind": "Service"},
        {"group": "", "version": "v1", "kind": "ConfigMap"},
        {"group": "serving.knative.dev", "version": "v1", "kind": "Service"},
    ]
    path = f"{SD}.additionalChildKinds[2].kind"
    assert findings_of(obj) == {("error", "duplicate-additional-kind", path)}
    assert "the CRD keys additionalChildKinds by kind alone" in messages_of(obj)[0]


def test_statuses_on_a_child_are_ignored() -> None:
    obj = base()
    children_of(obj)[0]["statusDefinition"] = {"statusMappings": {}}
    path = f"{SD}.childComponents[0].statusDefinition"
    assert findings_of(obj) == {("warning", "status-definition-not-root", path)}


# --- jq checks ----------------------------------------------------------------------------------------------

EVERYTHING = FIXTURES / "valid" / "others-everything.yaml"


def _set_at(obj: Any, path: str, value: str) -> None:
    """Set the value at a YAML field path such as `spec.x.y[2].z`."""
    tokens: list[str | int] = []
    for part in path.split("."):
        name, _, rest = part.partition("[")
        tokens.append(name)
        if rest:
            tokens += [int(i) for i in rest.rstrip("]").split("][")]
    target = obj
    for token in tokens[:-1]:
        target = target[token]
    target[tokens[-1]]  # the field must exist (KeyError or IndexError otherwise)
    target[tokens[-1]] = value


def _jq_paths() -> list[str]:
    paths: list[str] = []
    for karta in load_definitions(EVERYTHING):
        paths += [p for p, _ in jq_fields(karta) if p not in paths]
    return paths


def _raw_everything() -> list[dict[str, Any]]:
    import yaml

    return [json.loads(json.dumps(d)) for d in yaml.safe_load_all(EVERYTHING.read_text(encoding="utf-8")) if d]


def test_the_every_field_fixture_covers_every_jq_field() -> None:
    from workload_map.model import JQ_FIELDS

    seen = {p.rsplit(".", 1)[-1].split("[")[0] for p in _jq_paths()}
    assert seen == set().union(*JQ_FIELDS.values())


@needs_jq_safety
@pytest.mark.parametrize("path", _jq_paths())
def test_every_jq_field_is_checked_for_safety_at_its_path(path: str) -> None:
    for document in _raw_everything():
        try:
            _set_at(document, path, "del(.a)")
        except (KeyError, IndexError, TypeError):
            continue
        got = {(f.severity, f.rule, f.path) for f in validate(load_definition(document))}
        assert got == {("error", "jq-unsafe", path)}
        return
    raise AssertionError(f"{path} not found in the fixture")


@needs_jq_safety
@pytest.mark.parametrize("path", _jq_paths()[:6])
def test_a_jq_syntax_error_is_reported_at_its_path(path: str) -> None:
    document = _raw_everything()[0]
    _set_at(document, path, ".a | | .b")
    (finding,) = validate(load_definition(document))
    assert (finding.rule, finding.path) == ("jq-parse", path)
    assert finding.message.startswith("failed to parse JQ expression '.a | | .b'")


@needs_jq_safety
def test_jq_checks_in_status_matchers() -> None:
    obj = base()
    mappings = root_of(obj)["statusDefinition"]["statusMappings"]
    mappings["running"] = [{"byExpression": {"expression": '.status.phase == "Running"', "expectedResult": "true"}}]
    assert findings_of(obj) == set()
    mappings["failed"] = [
        {"byExpression": {"expression": "del(.status)", "expectedResult": "true"}},
        {"byExpression": {"expression": ".status.failed > 0", "expectedResult": "true"}},
        {"byExpression": {"expression": ".status |", "expectedResult": "true"}},
    ]
    prefix = f"{ROOT}.statusDefinition.statusMappings.failed"
    assert findings_of(obj) == {
        ("error", "jq-unsafe", f"{prefix}[0].byExpression.expression"),
        ("error", "jq-parse", f"{prefix}[2].byExpression.expression"),
    }
    unsafe = next(m for m in messages_of(obj) if "failed validation" in m)
    assert "JQ expression 'del(.status)' failed validation: del function is not allowed" in unsafe


@needs_jq_safety
@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("del(.a)", "del function is not allowed"),
        ("[range(10)]", "may produce excessive output"),
        ("[..]", "recursive descent operator '..' is not allowed"),
        (".a = 1", "modifying operator '=' is not allowed"),
        (".a |= 1", "modifying operator '|=' is not allowed"),
    ],
)
def test_upstream_safety_reasons_appear_in_the_message(expression: str, reason: str) -> None:
    problems = expression_problems(expression)
    assert problems
    assert any(reason in message for _, message in problems)


def test_an_expression_over_64_kib_is_refused_before_parsing() -> None:
    obj = base()
    children_of(obj)[0]["specDefinition"]["podTemplateSpecPath"] = ".a" * 40_000
    path = f"{SD}.childComponents[0].specDefinition.podTemplateSpecPath"
    assert findings_of(obj) == {("error", "jq-too-long", path)}
    assert "80,000 characters long" in messages_of(obj)[0]


def test_empty_jq_fields_are_skipped() -> None:
    obj = base()
    children_of(obj)[0]["scaleDefinition"] = {"replicasPath": ""}
    assert findings_of(obj) == set()


@needs_jq_safety
def test_a_long_expression_is_shortened_in_the_message() -> None:
    ((rule, message),) = expression_problems("del(" + ".a" * 100 + ")")
    assert rule == "jq-unsafe"
    assert "…" in message
    assert len(message) < 200


@pytest.mark.parametrize(
    "expression",
    ["(" * 20000 + "." + ")" * 20000, "[" * 15000 + "]" * 15000, ".a" * 30000, ".a | " * 10000 + ".", "\x00"],
    ids=["parens", "arrays", "long-chain", "long-pipe", "nul"],
)
def test_hostile_expressions_give_a_finding_not_a_traceback(expression: str) -> None:
    ((rule, message),) = expression_problems(expression)
    assert rule == "jq-parse"
    assert "\x00" not in message
    assert len(message) < 300
