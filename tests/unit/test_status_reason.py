"""The reason travels with the phase (issue 15): which mapping gave the primary phase and the status fields
behind it, on `WorkloadStatus` (`reason`, `reason_source`) and in the view and its JSON (`reason`, `reasonSource`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.flows import all_rows
from workload_map.catalog import builtin_registry
from workload_map.model import karta_from_dict
from workload_map.resolve import Workload
from workload_map.view import build_view

STATUS = Path(__file__).resolve().parents[1] / "fixtures" / "status"


def _fixture(name: str) -> dict[str, Any]:
    with (STATUS / f"{name}.yaml").open(encoding="utf-8") as handle:
        obj: dict[str, Any] = yaml.safe_load(handle)["object"]
    return obj


def _status(obj: dict[str, Any]) -> Any:
    resolved = builtin_registry().for_object(obj)
    assert resolved is not None
    return Workload(resolved.karta, obj).status


def test_a_rayjob_failed_while_its_deployment_runs_names_the_job_status_and_the_message() -> None:
    status = _status(_fixture("ray-io-rayjob-v1__failed-while-deployment-running"))
    assert status.phase == "Failed"
    assert status.reason.startswith("jobDeploymentStatus Running; jobStatus FAILED: Job entrypoint command failed")
    assert status.reason_source == "statusDefinition.statusMappings.failed[2]"


def test_a_condition_mapping_names_the_condition_its_reason_and_message() -> None:
    status = _status(_fixture("serving-kserve-io-llminferenceservice-v1alpha2__config-not-found"))
    assert status.phase == "Failed"
    assert status.reason == (
        'PresetsCombined=False (ConfigNotFound): LLMInferenceServiceConfig "llmisvc-intelligent-inference-scheduling"'
        " not found in namespaces [llm kserve]"
    )
    assert status.reason_source == "statusDefinition.statusMappings.failed[1]"


def test_an_expression_mapping_names_the_fields_it_reads() -> None:
    status = _status(_fixture("grove-io-podcliqueset-v1alpha1__scaling-up-not-observed"))
    assert status.phase == "Initializing"
    assert status.reason == "availableReplicas 1; observedGeneration 1; metadata.generation 2; spec.replicas 2"


def test_nothing_matched_has_no_reason() -> None:
    karta = karta_from_dict(
        {
            "apiVersion": "run.ai/v1alpha1",
            "kind": "Karta",
            "metadata": {"name": "minimal"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "minimal",
                        "kind": {"group": "minimal.org", "version": "v1", "kind": "Minimal"},
                        "statusDefinition": {
                            "conditionsDefinition": {"path": ".status.conditions"},
                            "statusMappings": {"running": [{"byConditions": [{"type": "Running", "status": "True"}]}]},
                        },
                    }
                }
            },
        }
    )
    obj = {"apiVersion": "minimal.org/v1", "kind": "Minimal", "metadata": {"name": "m"}, "status": {}}
    status = Workload(karta, obj).status
    assert (status.phase, status.reason, status.reason_source) == ("Undefined", None, None)
    assert status.to_dict()["reason"] is None and status.to_dict()["reasonSource"] is None


def test_the_view_and_its_json_carry_the_reason() -> None:
    obj = _fixture("ray-io-rayjob-v1__failed-while-deployment-running")
    resolved = builtin_registry().for_object(obj)
    assert resolved is not None
    view = build_view(Workload(resolved.karta, obj).resolve(), None, origin=resolved.origin)
    assert view.reason is not None and view.reason.startswith("jobDeploymentStatus Running; jobStatus FAILED")
    data = view.to_dict()
    assert data["reason"] == view.reason
    assert data["reasonSource"] == "statusDefinition.statusMappings.failed[2]"
    assert list(data)[list(data).index("phases") + 1 : list(data).index("phases") + 3] == ["reason", "reasonSource"]


ROWS = all_rows()


@pytest.mark.parametrize(("flow", "row"), ROWS, ids=[row.id for _, row in ROWS])
def test_every_flow_step_gets_a_reason_from_the_mapping_of_its_phase(flow: Any, row: Any) -> None:
    status = _status(flow.object_at(row))
    if row.phase == "Undefined":  # a kind with no status maps no phase (SandboxTemplate): no mapping, no reason
        assert (status.phase, status.reason, status.reason_source) == ("Undefined", None, None), row.id
        return
    assert status.reason_source is not None and status.reason_source.startswith(
        f"statusDefinition.statusMappings.{row.phase.lower()}["
    )
    assert status.reason, row.id


@pytest.mark.parametrize(
    "key", [*(chr(code) * 2 for code in range(128)), "jobStatus", "", "é", "a\u2028b", "\ud800", 'k"e\\y', "x" * 300]
)
def test_a_reason_path_quotes_a_key_as_json_does(key: str) -> None:
    # the plain keys are quoted without json (start-up, issue 19); every other key by json itself
    from workload_map.resolve.reasons import _quoted

    assert _quoted(key) == json.dumps(key)
