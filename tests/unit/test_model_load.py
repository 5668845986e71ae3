"""Loading Karta definitions: every source shape, what is kept apart, and a clear message for every bad input.

Test design: each bad input asserts the one-line message a user would read (field path, what is wrong, what
to do) and that it is a `DefinitionError`, never another exception. Sources are real files in tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.samples import MINIMAL_KARTA
from workload_map.model import (
    GVK,
    DefinitionError,
    Karta,
    karta_from_dict,
    load_definition,
    load_definitions,
    loads_definitions,
    scan_definitions,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "definitions"

MINIMAL = MINIMAL_KARTA

ROOT = "spec.structureDefinition.rootComponent"
MINIMAL_YAML = """\
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: minimal}
spec:
  structureDefinition:
    rootComponent:
      name: minimal
      kind: {group: minimal.org, version: v1, kind: Minimal}
      statusDefinition:
        statusMappings: {}
"""


def with_root(**fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(json.dumps(MINIMAL))
    obj["spec"]["structureDefinition"]["rootComponent"].update(fields)
    return obj


def error_of(source: Any) -> DefinitionError:
    with pytest.raises(DefinitionError) as info:
        load_definitions(source)
    return info.value


# --- sources ---------------------------------------------------------------------------------------------------


def test_loads_a_dict() -> None:
    karta = load_definition(MINIMAL)
    assert karta.name == "minimal"
    assert karta.root_gvk == GVK(group="minimal.org", version="v1", kind="Minimal")


def test_loads_yaml_and_json_text() -> None:
    assert load_definition(MINIMAL_YAML) == load_definition(json.dumps(MINIMAL)) == load_definition(MINIMAL)


def test_loads_a_file_and_names_it_in_messages(tmp_path: Path) -> None:
    path = tmp_path / "minimal.yaml"
    path.write_text(MINIMAL_YAML)
    assert load_definition(path).name == "minimal"
    assert load_definition(str(path)).name == "minimal"
    path.write_text(MINIMAL_YAML.replace("statusMappings", "statusMapings"))
    assert str(error_of(path)).startswith(f"{path} at spec.structureDefinition.rootComponent.statusDefinition.")


def test_loads_every_file_of_a_directory_in_sorted_order(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_text(MINIMAL_YAML.replace("name: minimal}", "name: b}"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.json").write_text(json.dumps({**MINIMAL, "metadata": {"name": "a"}}))
    (tmp_path / "notes.txt").write_text("not a definition")
    (tmp_path / ".hidden.yaml").write_text("garbage: [")
    assert [k.name for k in load_definitions(tmp_path)] == ["b", "a"]


def test_loads_a_multi_document_stream_skipping_empty_documents() -> None:
    text = "---\n" + MINIMAL_YAML + "---\n---\n" + MINIMAL_YAML.replace("name: minimal}", "name: second}")
    assert [k.name for k in loads_definitions(text)] == ["minimal", "second"]


def test_loads_a_karta_list_as_kubectl_prints_it() -> None:
    karta_list = {"apiVersion": "run.ai/v1alpha1", "kind": "KartaList", "items": [MINIMAL, MINIMAL]}
    assert len(load_definitions(karta_list)) == 2
    assert [k.name for k in load_definitions(FIXTURES / "valid" / "list.yaml")] == ["minimal", "minimal-pod"]


def test_loads_a_bare_spec() -> None:
    karta = load_definition(FIXTURES / "valid" / "bare-spec.yaml")
    assert karta.kind == "Karta"
    assert karta.api_version == "run.ai/v1alpha1"
    assert karta.root.name == "pod"
    assert karta.name == ""


def test_loads_a_whole_object_without_its_header() -> None:
    headless = {k: v for k, v in MINIMAL.items() if k not in ("apiVersion", "kind")}
    assert load_definition(headless) == load_definition(MINIMAL)


def test_loads_several_paths_and_definitions_given_as_a_list(tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(MINIMAL_YAML)
    karta = load_definition(MINIMAL)
    assert len(load_definitions([path, str(path), karta, MINIMAL])) == 4


def test_server_fields_and_status_are_dropped_on_load() -> None:
    (first, _) = load_definitions(FIXTURES / "valid" / "list.yaml")
    assert first.status is None
    assert first.metadata.uid == "0b6c4a2e-4f7e-4d0a-9d1e-8f1f5e2d3c4b"
    obj = {**MINIMAL, "metadata": {"name": "m", "managedFields": [{"manager": "kubectl"}], "namespace": "x"}}
    assert load_definition(obj).name == "m"


# --- absent, empty, null, defaults ------------------------------------------------------------------------------


def test_absent_and_empty_match_labels_are_kept_apart() -> None:
    absent = load_definition(with_root(podSelector={"componentTypeSelector": {"keyPath": ".a"}}))
    empty = load_definition(with_root(podSelector={"componentTypeSelector": {"keyPath": ".a", "matchLabels": {}}}))
    assert absent.root.pod_selector.component_type_selector.match_labels is None  # type: ignore[union-attr]
    assert empty.root.pod_selector.component_type_selector.match_labels == {}  # type: ignore[union-attr]


def test_absent_and_empty_owner_ref_are_kept_apart() -> None:
    assert load_definition(MINIMAL).root.owner_ref is None
    assert load_definition(with_root(ownerRef="")).root.owner_ref == ""


def test_null_for_an_optional_field_means_absent() -> None:
    karta = load_definition(with_root(specDefinition=None, podSelector=None, instanceIdPath=None))
    assert karta == load_definition(MINIMAL)
    obj = json.loads(json.dumps(MINIMAL))
    obj["spec"]["optimizationInstructions"] = None
    obj["spec"]["structureDefinition"]["childComponents"] = None
    assert load_definition(obj) == load_definition(MINIMAL)


def test_conditions_definition_gets_the_crd_defaults_on_load() -> None:
    karta = load_definition(with_root(statusDefinition={"conditionsDefinition": {"path": ".c"}, "statusMappings": {}}))
    conditions = karta.root.status_definition.conditions_definition  # type: ignore[union-attr]
    assert conditions is not None
    assert (conditions.type_field_name, conditions.status_field_name) == ("type", "status")
    assert (conditions.message_field_name, conditions.reason_field_name) == ("message", "reason")


def test_null_conditions_field_names_mean_the_crd_default_as_on_the_api_server() -> None:
    nulls = {"path": ".c", "typeFieldName": None, "messageFieldName": None, "reasonFieldName": None}
    karta = load_definition(with_root(statusDefinition={"conditionsDefinition": nulls, "statusMappings": {}}))
    conditions = karta.root.status_definition.conditions_definition  # type: ignore[union-attr]
    assert conditions is not None
    assert conditions.type_field_name == "type"
    assert conditions.message_field_name == "message"
    assert conditions.reason_field_name == "reason"
    assert nulls["reasonFieldName"] is None  # the caller's dict is left alone


def test_custom_condition_field_names_are_kept() -> None:
    fleet = load_definitions(FIXTURES / "valid" / "others-everything.yaml")[0]
    conditions = fleet.root.status_definition.conditions_definition  # type: ignore[union-attr]
    assert conditions is not None
    assert (conditions.type_field_name, conditions.status_field_name) == ("kind", "state")
    assert (conditions.message_field_name, conditions.reason_field_name) == ("detail", "why")


def test_gvk_without_group_is_the_core_group() -> None:
    karta = load_definition(with_root(kind={"version": "v1", "kind": "Pod"}))
    assert karta.root_gvk == GVK(group="", version="v1", kind="Pod")
    assert karta.root_gvk.api_version == "v1"


def test_yaml_anchors_and_merge_keys_resolve() -> None:
    fleet = load_definitions(FIXTURES / "valid" / "others-everything.yaml")[0]
    leader, worker = fleet.children[1], fleet.children[2]
    leader_selector = leader.pod_selector.component_type_selector  # type: ignore[union-attr]
    worker_selector = worker.pod_selector.component_type_selector  # type: ignore[union-attr]
    assert leader_selector is not None
    assert worker_selector is not None
    assert worker_selector.match_labels == leader_selector.match_labels
    assert (leader_selector.value, worker_selector.value) == ("leader", "worker")


# --- unknown fields and wrong types -----------------------------------------------------------------------------


def test_unknown_field_names_its_path_and_suggests_the_field_meant() -> None:
    error = error_of(with_root(podSelctor={}))
    assert error.path == "spec.structureDefinition.rootComponent.podSelctor"
    assert "unknown field 'podSelctor'; did you mean 'podSelector'?" in error.message


def test_unknown_status_key_suggests_the_status_meant() -> None:
    error = error_of(with_root(statusDefinition={"statusMappings": {"runing": []}}))
    assert error.path == "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.runing"
    assert "did you mean 'running'?" in error.message


def test_unknown_field_without_a_close_match_lists_the_allowed_fields() -> None:
    error = error_of(with_root(scaleDefinition={"zzz": "."}))
    assert "allowed: maxReplicasPath, minReplicasPath, replicasPath" in error.message


def test_unknown_field_deep_in_a_list_names_the_index() -> None:
    obj = json.loads(json.dumps(MINIMAL))
    obj["spec"]["structureDefinition"]["childComponents"] = [
        {"name": "a", "ownerRef": "minimal"},
        {"name": "b", "ownerRef": "minimal", "specDefinition": {"podTemplatePath": ".x"}},
    ]
    error = error_of(obj)
    assert error.path == "spec.structureDefinition.childComponents[1].specDefinition.podTemplatePath"
    assert "did you mean 'podTemplateSpecPath'?" in error.message


def test_a_number_where_a_jq_expression_belongs_says_to_quote_it() -> None:
    error = error_of(with_root(scaleDefinition={"replicasPath": 3}))
    assert error.path == "spec.structureDefinition.rootComponent.scaleDefinition.replicasPath"
    assert error.message.startswith("must be a string, not an integer")
    assert "quote it ('3')" in error.message


def test_an_unquoted_true_condition_status_says_to_quote_it() -> None:
    mappings = {"running": [{"byConditions": [{"type": "Ready", "status": True}]}]}
    error = error_of(with_root(statusDefinition={"statusMappings": mappings}))
    assert error.path.endswith("statusMappings.running[0].byConditions[0].status")
    assert 'must be a string, not a boolean; YAML reads it as a boolean: quote it ("True")' in error.message


def test_an_unquoted_suspend_value_says_it_is_a_json_literal_in_a_string() -> None:
    suspend = {"suspendActions": [{"path": ".spec.suspend", "value": True}], "resumeActions": []}
    error = error_of(with_root(suspendDefinition=suspend))
    assert error.path.endswith("suspendDefinition.suspendActions[0].value")
    assert "JSON literal held in a string: quote it ('true')" in error.message


def test_a_bad_label_value_names_the_label() -> None:
    error = error_of(with_root(podSelector={"componentTypeSelector": {"matchLabels": {"app": "x", "tier": 3}}}))
    assert error.path == "spec.structureDefinition.rootComponent.podSelector.componentTypeSelector.matchLabels.tier"


def test_required_field_missing() -> None:
    obj = json.loads(json.dumps(MINIMAL))
    obj["spec"]["structureDefinition"]["childComponents"] = [{"ownerRef": "minimal"}]
    error = error_of(obj)
    assert error.path == "spec.structureDefinition.childComponents[0].name"
    assert error.message == "required field 'name' is missing"


def test_a_mapping_where_a_list_belongs() -> None:
    obj = json.loads(json.dumps(MINIMAL))
    obj["spec"]["structureDefinition"]["childComponents"] = {"name": "a"}
    error = error_of(obj)
    assert (error.path, error.message) == ("spec.structureDefinition.childComponents", "must be a list, not a mapping")


def test_a_null_required_section() -> None:
    error = error_of({"apiVersion": "run.ai/v1alpha1", "kind": "Karta", "metadata": {"name": "x"}, "spec": None})
    assert (error.path, error.message) == ("spec", "must be a mapping, not null")


def test_another_kind_is_not_a_karta() -> None:
    error = error_of({"apiVersion": "batch/v1", "kind": "Job", "spec": {}})
    assert error.path == "kind"
    assert "kind is 'Job', not 'Karta'" in error.message


def test_the_old_api_group_is_refused_with_the_version_named() -> None:
    error = error_of({**MINIMAL, "apiVersion": "optimization.nvidia.com/v1alpha1"})
    assert error.path == "apiVersion"
    assert "'optimization.nvidia.com/v1alpha1'" in error.message


# --- bad input --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [\n", "invalid YAML at line 2, column 1"),
        ("a: b\n  c: d\n", "invalid YAML at line 2"),
        ("\t- x\n", "invalid YAML"),
        ("- a\n- b\n", "a definition must be a mapping, not a list"),
        ("just text\n", "a definition must be a mapping, not a string"),
        ("42\n", "a definition must be a mapping, not a number"),
        ("", "no definitions found"),
        ("---\n---\n", "no definitions found"),
        ("# only a comment\n", "no definitions found"),
    ],
)
def test_bad_text_gives_one_clear_message(text: str, message: str) -> None:
    with pytest.raises(DefinitionError) as info:
        loads_definitions(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_repeated_key_is_refused_with_its_line() -> None:
    text = MINIMAL_YAML + "      name: again\n"
    with pytest.raises(DefinitionError) as info:
        loads_definitions(text)
    assert "invalid YAML at line 11, column 7: duplicate key 'name'" in str(info.value)


def test_an_alias_bomb_is_refused_quickly() -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    with pytest.raises(DefinitionError) as info:
        loads_definitions("\n".join(lines) + "\n")
    assert "alias bomb" in str(info.value)


def test_an_empty_file_says_no_definitions_found(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("")
    assert str(error_of(path)) == f"{path}: no definitions found (the input is empty)"
    with pytest.raises(DefinitionError, match="no definitions found"):
        load_definition(path)


def test_an_empty_directory_has_no_definitions_and_no_problems(tmp_path: Path) -> None:
    assert load_definitions(tmp_path) == []
    result = scan_definitions(tmp_path)
    assert (result.definitions, result.problems) == ([], [])


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    error = error_of(tmp_path / "nope.yaml")
    assert str(error) == f"{tmp_path / 'nope.yaml'}: no such file"
    assert error.unreadable


def test_a_binary_file_is_not_text(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert "is not UTF-8 text" in str(error_of(path))


def test_load_definition_wants_exactly_one() -> None:
    with pytest.raises(DefinitionError, match="expected one definition, found 2"):
        load_definition(MINIMAL_YAML + "---\n" + MINIMAL_YAML)


@pytest.mark.slow
def test_a_ten_megabyte_file_of_definitions_loads(tmp_path: Path) -> None:
    document = MINIMAL_YAML.replace("name: minimal}", "name: d{i}}")
    count = 10 * 1024 * 1024 // len(document) + 1
    path = tmp_path / "big.yaml"
    path.write_text("---\n".join(document.replace("{i}", str(i)) for i in range(count)))
    assert path.stat().st_size > 10 * 1024 * 1024
    kartas = load_definitions(path)
    assert len(kartas) == count
    assert kartas[-1].name == f"d{count - 1}"


@pytest.mark.slow
def test_a_ten_megabyte_garbage_file_gives_one_message(tmp_path: Path) -> None:
    path = tmp_path / "garbage.yaml"
    path.write_text("x" * (10 * 1024 * 1024) + "\n: [\n")
    error = error_of(path)
    assert error.message.startswith("invalid YAML at line 2")
    assert "\n" not in str(error)


@pytest.mark.slow
def test_a_ten_megabyte_expression_loads_and_is_left_to_the_validator(tmp_path: Path) -> None:
    huge = ".a" * (5 * 1024 * 1024)
    karta = load_definition(with_root(instanceIdPath=huge))
    assert karta.root.instance_id_path == huge


# --- bulk loading -----------------------------------------------------------------------------------------------


def test_scan_skips_bad_definitions_with_a_problem_each(tmp_path: Path) -> None:
    (tmp_path / "a-good.yaml").write_text(MINIMAL_YAML)
    (tmp_path / "b-typo.yaml").write_text(MINIMAL_YAML.replace("rootComponent", "rootComponnet"))
    (tmp_path / "c-broken.yaml").write_text("a: [\n")
    (tmp_path / "d-stream.yaml").write_text(MINIMAL_YAML + "---\n- not a mapping\n")
    result = scan_definitions(tmp_path)
    assert [k.name for k in result.definitions] == ["minimal", "minimal"]
    messages = [str(p) for p in result.problems]
    assert len(messages) == 3
    assert "b-typo.yaml at spec.structureDefinition.rootComponnet: unknown field" in messages[0]
    assert "c-broken.yaml: invalid YAML" in messages[1]
    assert "d-stream.yaml (document 2): a definition must be a mapping" in messages[2]
    assert [p.unreadable for p in result.problems] == [False, True, False]
    # items keep the source order, valid and invalid together
    assert [type(item).__name__ for _, item in result.items] == [
        "Karta",
        "DefinitionError",
        "DefinitionError",
        "Karta",
        "DefinitionError",
    ]


def test_scan_of_a_cluster_list_keeps_the_good_ones() -> None:
    bad = with_root(scaleDefinition={"replicasPath": 1})
    result = scan_definitions([MINIMAL, bad, MINIMAL])
    assert len(result.definitions) == 2
    (problem,) = result.problems
    assert problem.source == "<item 2>"
    assert problem.path == "spec.structureDefinition.rootComponent.scaleDefinition.replicasPath"


def test_strict_load_stops_at_the_first_bad_definition(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(MINIMAL_YAML)
    (tmp_path / "b.yaml").write_text("kind: Karta\n")
    with pytest.raises(DefinitionError, match=r"b\.yaml"):
        load_definitions(tmp_path)


def test_karta_from_dict_refuses_a_non_mapping() -> None:
    with pytest.raises(DefinitionError, match="a definition must be a mapping, not a list"):
        karta_from_dict([MINIMAL])


def test_a_karta_passes_through() -> None:
    karta = load_definition(MINIMAL)
    assert load_definitions(karta) == [karta]
    assert isinstance(load_definitions(karta)[0], Karta)


def test_unquoted_timestamps_stay_strings_as_in_kubernetes() -> None:
    text = MINIMAL_YAML.replace(
        "metadata: {name: minimal}", "metadata: {name: 2026-01-01, creationTimestamp: 2026-01-01T00:00:00Z}"
    )
    karta = load_definition(text)
    assert (karta.name, karta.metadata.creation_timestamp) == ("2026-01-01", "2026-01-01T00:00:00Z")


@pytest.mark.parametrize(
    ("replace", "path", "message"),
    [
        (("metadata:", "1: 2\nmetadata:"), "", "a key is not a string: quote it"),
        (("      name: minimal", "      name: minimal\n      ~: x"), f"{ROOT}", "a key is not a string"),
        (("name: minimal\n", "name: !!binary aGVsbG8=\n"), f"{ROOT}.name", "must be a string, not bytes"),
        (("version: v1", "version: 1.0"), f"{ROOT}.kind.version", 'quote it ("1.0")'),
        (("kind: Karta", "kind: [Karta]"), "kind", "not a Karta definition"),
        (("name: minimal\n", "name: !!python/object:os.system x\n"), "", "could not determine a constructor"),
    ],
)  # fmt: skip
def test_odd_yaml_gives_a_message_not_a_traceback(replace: tuple[str, str], path: str, message: str) -> None:
    with pytest.raises(DefinitionError) as info:
        loads_definitions(MINIMAL_YAML.replace(*replace, 1))
    assert info.value.path == path
    assert message in info.value.message


def test_a_karta_list_whose_items_are_not_a_list() -> None:
    error = error_of({"apiVersion": "run.ai/v1alpha1", "kind": "KartaList", "items": 3})
    assert (error.path, error.message) == ("items", "a KartaList's items must be a list of definitions")
