"""Status of a workload (karta-spec §6, §15.4 "Status"): raw phase, conditions, matched phases, primary phase.

Test design: each test builds a one-component definition whose statusDefinition is the thing under test, resolves
a small object through it, and asserts what a user reads from `Workload.status` (or the captured errors of
`resolve()`).
"""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from tests.fixtures.resolve import karta, obj
from workload_map.model import Karta, karta_from_dict
from workload_map.resolve import Condition, ExtractionError, Workload, primary_phase

GVK = {"group": "example.com", "version": "v1", "kind": "Thing"}


def definition(status: dict[str, Any]) -> Karta:
    return karta_from_dict(
        {
            "metadata": {"name": "thing"},
            "spec": {
                "structureDefinition": {"rootComponent": {"name": "thing", "kind": GVK, "statusDefinition": status}}
            },
        }
    )


def thing(status: dict[str, Any] | None = None, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}}
    if spec is not None:
        out["spec"] = spec
    if status is not None:
        out["status"] = status
    return out


CONDITIONS = {"path": ".status.conditions"}
PHASE = {"path": ".status.phase"}


def status_of(status_definition: dict[str, Any], status: dict[str, Any] | None = None, **spec: Any) -> Any:
    return Workload(definition(status_definition), thing(status, spec or None)).status


# --- fixtures of §15.4 ------------------------------------------------------------------------------------------------


def test_pyflow_running_condition_gives_running_with_conditions_extracted() -> None:
    status = Workload(karta("pyflow"), obj("pyflow")).status
    assert status.phase == "Running"
    assert status.phases == ("Running",)
    assert status.raw_phase is None  # no phaseDefinition
    assert status.conditions[1] == Condition(
        type="Running", status="True", reason="Running", message="PyFlow mnist is running."
    )


def test_pyflow_initializing_matches_by_reason_init() -> None:
    pyflow = obj("pyflow")
    pyflow["status"]["conditions"] = [{"type": "Running", "status": "False", "reason": "Init"}]
    status = Workload(karta("pyflow"), pyflow).status
    assert status.phases == ("Initializing",)
    assert status.phase == "Initializing"


def test_reactor_phase_running_is_read_from_the_phase_field() -> None:
    status = Workload(karta("reactor"), obj("reactor")).status
    assert status.raw_phase == "running"
    assert status.phase == "Running"


@pytest.mark.parametrize(
    ("phase", "expected"),
    [("pending", "Initializing"), ("running", "Running"), ("failed", "Failed"), ("x", "Undefined")],
)
def test_reactor_phase_mapping(phase, expected) -> None:
    reactor = obj("reactor")
    reactor["status"]["phase"] = phase
    assert Workload(karta("reactor"), reactor).status.phase == expected


# --- phase ------------------------------------------------------------------------------------------------------------


def test_missing_phase_field_gives_empty_raw_phase_not_none() -> None:
    status = status_of({"phaseDefinition": PHASE, "statusMappings": {}})
    assert status.raw_phase == ""
    assert status.phases == ("Undefined",)


def test_phase_that_is_a_number_is_an_error_naming_the_phase_path() -> None:
    with pytest.raises(ExtractionError, match="failed to extract phase") as caught:
        status_of({"phaseDefinition": PHASE, "statusMappings": {}}, {"phase": 3})
    assert caught.value.field == "statusDefinition.phaseDefinition.path"


def test_phase_path_runtime_error_is_failed_to_extract_phase_in_resolve_errors() -> None:
    resolution = Workload(
        definition({"phaseDefinition": {"path": ".status.phase[]"}, "statusMappings": {"running": [{}]}}),
        thing({"phase": "running"}),
    ).resolve()
    assert [error.field for error in resolution.errors] == ["statusDefinition.phaseDefinition.path"]
    # the rest of the status still comes out: the empty matcher matches
    assert resolution.status is not None
    assert resolution.status.phases == ("Running",)


def test_only_the_first_phase_output_is_used() -> None:
    status = status_of(
        {"phaseDefinition": {"path": ".status.phases[]"}, "statusMappings": {"running": [{"byPhase": "a"}]}},
        {"phases": ["a", "b"]},
    )
    assert status.raw_phase == "a"
    assert status.phase == "Running"


def test_by_phase_is_case_sensitive_and_every_status_can_match_by_phase() -> None:
    mappings = {name: [{"byPhase": name}] for name in ("running", "failed", "degraded", "resuming")}
    assert status_of({"phaseDefinition": PHASE, "statusMappings": mappings}, {"phase": "degraded"}).phases == (
        "Degraded",
    )
    assert status_of({"phaseDefinition": PHASE, "statusMappings": mappings}, {"phase": "Running"}).phases == (
        "Undefined",
    )


def test_by_phase_never_matches_without_a_phase_definition() -> None:
    status = status_of({"statusMappings": {"running": [{"byPhase": "running"}]}}, {"phase": "running"})
    assert status.phase == "Undefined"


# --- conditions -------------------------------------------------------------------------------------------------------


def test_no_match_and_empty_conditions_give_undefined() -> None:
    mappings = {"running": [{"byConditions": [{"type": "Running", "status": "True"}]}]}
    assert status_of({"conditionsDefinition": CONDITIONS, "statusMappings": mappings}, {"conditions": []}).phases == (
        "Undefined",
    )
    assert status_of({"conditionsDefinition": CONDITIONS, "statusMappings": mappings}, {}).phases == ("Undefined",)


def test_condition_without_status_counts_as_empty_status() -> None:
    status = status_of(
        {"conditionsDefinition": CONDITIONS, "statusMappings": {"running": [{"byConditions": [{"type": "Ready"}]}]}},
        {"conditions": [{"type": "Ready"}]},
    )
    assert status.conditions == (Condition(type="Ready", status=""),)
    assert status.phase == "Running"  # a pure presence check


def test_last_duplicate_condition_type_wins_for_matching() -> None:
    mappings = {"running": [{"byConditions": [{"type": "Ready", "status": "True"}]}]}
    conditions = [{"type": "Ready", "status": "True"}, {"type": "Ready", "status": "False"}]
    status = status_of({"conditionsDefinition": CONDITIONS, "statusMappings": mappings}, {"conditions": conditions})
    assert status.phase == "Undefined"
    assert len(status.conditions) == 2


def test_custom_condition_field_names_and_reason_only_when_configured() -> None:
    definition_ = {
        "conditionsDefinition": {
            "path": ".status.c",
            "typeFieldName": "kind",
            "statusFieldName": "state",
            "reasonFieldName": "why",
            "messageFieldName": "text",
        },
        "statusMappings": {"failed": [{"byConditions": [{"type": "Broken", "status": "yes", "reason": "Disk"}]}]},
    }
    status = status_of(definition_, {"c": [{"kind": "Broken", "state": "yes", "why": "Disk", "text": "full"}]})
    assert status.conditions == (Condition(type="Broken", status="yes", reason="Disk", message="full"),)
    assert status.phase == "Failed"


def test_conditions_without_reason_field_name_extract_no_reason() -> None:
    karta_ = karta_from_dict(
        {
            "metadata": {"name": "thing"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "thing",
                        "kind": GVK,
                        "statusDefinition": {
                            "conditionsDefinition": {"path": ".status.conditions", "reasonFieldName": None},
                            "statusMappings": {},
                        },
                    }
                }
            },
        }
    )
    # null means "the CRD default" on the API server, so the model loads it as reason; build the no-reason case
    # (None in code: do not read it) as a changed copy, the model being frozen
    root = karta_.root
    assert root.status_definition is not None and root.status_definition.conditions_definition is not None
    conditions = replace(root.status_definition.conditions_definition, reason_field_name=None)
    root = replace(root, status_definition=replace(root.status_definition, conditions_definition=conditions))
    structure = replace(karta_.structure, root_component=root)
    karta_ = replace(karta_, spec=replace(karta_.spec, structure_definition=structure))
    status = Workload(karta_, thing({"conditions": [{"type": "A", "status": "True", "reason": "R"}]})).status
    assert status.conditions[0].reason is None


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        ({"reason": "Init"}, {"reason": "Init"}, True),
        ({"reason": "Init"}, {"reason": "Other"}, False),
        ({"reason": "Init"}, {}, False),  # expected but absent
        ({}, {"reason": "Init"}, True),  # not expected but present
        ({"status": "True", "reason": "Init"}, {"status": "True", "reason": "Init"}, True),
        ({"status": "True", "reason": "Init"}, {"status": "False", "reason": "Init"}, False),
    ],
)
def test_reason_matching(expected, actual, matches) -> None:
    mappings = {"initializing": [{"byConditions": [{"type": "Running", **expected}]}]}
    status = status_of(
        {"conditionsDefinition": CONDITIONS, "statusMappings": mappings},
        {"conditions": [{"type": "Running", **actual}]},
    )
    assert (status.phase == "Initializing") is matches


def test_missing_condition_type_does_not_match() -> None:
    mappings = {"running": [{"byConditions": [{"type": "Ready", "status": "True"}, {"type": "Synced"}]}]}
    status = status_of(
        {"conditionsDefinition": CONDITIONS, "statusMappings": mappings},
        {"conditions": [{"type": "Ready", "status": "True"}]},
    )
    assert status.phase == "Undefined"


def test_conditions_from_several_arrays_are_flattened_and_null_gives_none() -> None:
    status = status_of(
        {"conditionsDefinition": {"path": ".status.a, .status.b, .status.none"}, "statusMappings": {}},
        {"a": [{"type": "A", "status": "True"}], "b": [{"type": "B", "status": "False"}]},
    )
    assert [c.type for c in status.conditions] == ["A", "B"]


def test_conditions_path_that_is_not_an_array_is_failed_to_extract_conditions() -> None:
    with pytest.raises(ExtractionError, match="failed to extract conditions") as caught:
        status_of({"conditionsDefinition": CONDITIONS, "statusMappings": {}}, {"conditions": {"type": "A"}})
    assert caught.value.field == "statusDefinition.conditionsDefinition.path"
    with pytest.raises(ExtractionError, match="failed to extract conditions"):
        status_of({"conditionsDefinition": CONDITIONS, "statusMappings": {}}, {"conditions": ["Ready"]})


def test_non_string_condition_fields_are_not_read() -> None:
    status = status_of(
        {"conditionsDefinition": CONDITIONS, "statusMappings": {}},
        {"conditions": [{"type": 1, "status": True, "reason": 3, "message": {}}]},
    )
    assert status.conditions == (Condition(type="", status="", reason=None, message=""),)


# --- matchers ---------------------------------------------------------------------------------------------------------


def test_or_across_matchers() -> None:
    mappings = {
        "running": [
            {"byPhase": "running"},
            {"byPhase": "active"},
            {"byConditions": [{"type": "Ready", "status": "True"}]},
        ]
    }
    for status, expected in (
        ({"phase": "active"}, "Running"),
        ({"conditions": [{"type": "Ready", "status": "True"}]}, "Running"),
        ({"phase": "x"}, "Undefined"),
    ):
        got = status_of(
            {"phaseDefinition": PHASE, "conditionsDefinition": CONDITIONS, "statusMappings": mappings}, status
        )
        assert got.phase == expected


def test_and_inside_one_matcher_phase_and_conditions_both_needed() -> None:
    mappings = {"running": [{"byPhase": "running", "byConditions": [{"type": "Ready", "status": "True"}]}]}
    sd = {"phaseDefinition": PHASE, "conditionsDefinition": CONDITIONS, "statusMappings": mappings}
    assert status_of(sd, {"phase": "running", "conditions": []}).phase == "Undefined"
    assert status_of(sd, {"phase": "running", "conditions": [{"type": "Ready", "status": "True"}]}).phase == "Running"


def test_empty_matcher_matches_unconditionally() -> None:
    assert status_of({"statusMappings": {"degraded": [{}]}}).phases == ("Degraded",)


def test_overlapping_matchers_report_every_status_in_evaluation_order_and_primary_by_precedence() -> None:
    mappings = {name: [{}] for name in ("initializing", "running", "completed", "failed", "degraded", "resuming")}
    status = status_of({"statusMappings": mappings})
    assert status.phases == ("Resuming", "Running", "Failed", "Completed", "Initializing", "Degraded")
    assert status.phase == "Failed"


@pytest.mark.parametrize(
    ("phases", "primary"),
    [
        (["Running", "Initializing"], "Running"),
        (["Resuming", "Suspended"], "Suspended"),
        (["Suspending", "Running"], "Suspending"),
        (["Running", "Degraded"], "Degraded"),
        (["Running", "Completed"], "Completed"),
        (["Undefined"], "Undefined"),
        ([], "Undefined"),
    ],
)
def test_primary_phase_precedence(phases, primary) -> None:
    assert primary_phase(phases) == primary


# --- byExpression -----------------------------------------------------------------------------------------------------


def expression_status(expression: str, expected: str, status: dict[str, Any] | None = None, **spec: Any) -> str:
    mappings = {"running": [{"byExpression": {"expression": expression, "expectedResult": expected}}]}
    return str(status_of({"statusMappings": mappings}, status, **spec).phase)


def test_by_expression_compares_the_string_unquoted() -> None:
    assert expression_status(".status.phase", "running", {"phase": "running"}) == "Running"


def test_by_expression_false_boolean_does_not_match_true() -> None:
    assert expression_status('.status.phase == "failed"', "true", {"phase": "running"}) == "Undefined"


def test_by_expression_null_is_the_string_null() -> None:
    assert expression_status(".status.missing", "true", {}) == "Undefined"
    assert expression_status(".status.missing", "null", {}) == "Running"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3, "3"),
        (3.0, "3"),
        (2.5, "2.5"),
        (True, "true"),
        ({"b": 1, "a": [1, "x"]}, '{"a":[1,"x"],"b":1}'),
        (1e21, "1e+21"),
    ],
)
def test_by_expression_formats_like_gojq_tostring(value, text) -> None:
    assert expression_status(".spec.v", text, v=value) == "Running"


def test_by_expression_uses_only_the_first_output_and_none_means_no_match() -> None:
    assert expression_status(".spec.v[]", "a", v=["a", "b"]) == "Running"
    assert expression_status(".spec.v[] | select(. == 9)", "9", v=[1]) == "Undefined"


def test_by_expression_complex_and_with_inner_select() -> None:
    expression = '.status.ready == 2 and ([.status.conditions[] | select(.type == "Ready")] | length) == 1'
    got = expression_status(expression, "true", {"ready": 2, "conditions": [{"type": "Ready"}]})
    assert got == "Running"


def test_by_phase_and_by_expression_and_conditions_are_all_anded_and_short_circuit() -> None:
    mappings = {
        "running": [
            {
                "byPhase": "running",
                "byConditions": [{"type": "Ready", "status": "True"}],
                # would be a runtime error: never evaluated when the phase or conditions fail
                "byExpression": {
                    "expression": '.status.phase | if . == "running" then "yes" else error("boom") end',
                    "expectedResult": "yes",
                },
            }
        ]
    }
    sd = {"phaseDefinition": PHASE, "conditionsDefinition": CONDITIONS, "statusMappings": mappings}
    ready = [{"type": "Ready", "status": "True"}]
    assert status_of(sd, {"phase": "running", "conditions": ready}).phase == "Running"
    assert status_of(sd, {"phase": "running", "conditions": []}).phase == "Undefined"
    assert status_of(sd, {"phase": "paused", "conditions": ready}).phase == "Undefined"


def test_invalid_by_expression_is_failed_to_match_status() -> None:
    with pytest.raises(ExtractionError, match="failed to match status") as caught:
        expression_status('.status | error("nope")', "x", {})
    assert caught.value.field == "statusDefinition.statusMappings.running[0].byExpression.expression"


def test_a_broken_matcher_in_resolve_counts_as_no_match_and_the_others_still_match() -> None:
    mappings = {
        "failed": [{"byExpression": {"expression": ".status.x[]", "expectedResult": "1"}}],
        "running": [{"byExpression": {"expression": ".status.ready", "expectedResult": "true"}}],
    }
    resolution = Workload(definition({"statusMappings": mappings}), thing({"x": 5, "ready": True})).resolve()
    assert resolution.status is not None
    assert resolution.status.phase == "Running"
    assert [e.field for e in resolution.errors] == ["statusDefinition.statusMappings.failed[0].byExpression.expression"]


def test_status_json_carries_phase_phases_raw_phase_and_conditions() -> None:
    status = Workload(karta("pyflow"), obj("pyflow")).status
    data = status.to_dict()
    assert data["phase"] == "Running"
    assert data["phases"] == ["Running"]
    assert data["rawPhase"] is None
    assert data["conditions"][0] == {
        "type": "Created",
        "status": "True",
        "reason": "Created",
        "message": "PyFlow mnist is created.",
    }


def test_child_component_without_status_definition_has_no_status() -> None:
    workload = Workload(karta("pyflow"), obj("pyflow"))
    assert workload.component("master").status is None
