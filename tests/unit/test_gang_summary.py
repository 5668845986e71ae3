"""The structure summary and the per-pod questions of KAI's pod grouper (karta-spec §12.2, §15.8)."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from tests.fixtures.gang import definition_file, karta_from_text, workload
from workload_map.gang import (
    Candidate,
    GangError,
    InvalidPodGroupName,
    StructureSummary,
    infer_pod_component,
    infer_pod_component_instance,
    kai_pod_group_name,
    pod_group_keys,
    pod_grouping,
    prioritize,
)
from workload_map.model import PodGroupMember
from workload_map.pods import PodQuerier
from workload_map.resolve import ComponentNotFound, Workload

HEADER = """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: NAME}
spec:
  structureDefinition:
    rootComponent:
      name: pytorch-job
      kind: {group: kubeflow.org, version: v1, kind: PyTorchJob}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byPhase: Running}]
    childComponents:
    - name: master
      ownerRef: pytorch-job
      specDefinition: {podTemplateSpecPath: .spec.pytorchReplicaSpecs.Master.template}
      scaleDefinition: {replicasPath: .spec.pytorchReplicaSpecs.Master.replicas}
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["training.kubeflow.org/replica-type"]', value: master}
    - name: worker
      ownerRef: pytorch-job
      specDefinition: {podTemplateSpecPath: .spec.pytorchReplicaSpecs.Worker.template}
      scaleDefinition: {replicasPath: .spec.pytorchReplicaSpecs.Worker.replicas}
      podSelector:
        componentTypeSelector: {keyPath: '.metadata.labels["training.kubeflow.org/replica-type"]', value: worker}
"""

PRIORITY = (
    HEADER.replace("NAME", "priority")
    + """
  optimizationInstructions:
    gangScheduling:
      podGroups:
      - name: parent-group
        members: [{componentName: pytorch-job}]
      - name: group-v1
        members: [{componentName: worker}]
      - name: group-v2
        members: [{componentName: worker}]
"""
)

FALLBACK = (
    HEADER.replace("NAME", "fallback")
    + """
  optimizationInstructions:
    gangScheduling:
      podGroups:
      - name: worker-group
        members:
        - componentName: worker
          filters: ['.metadata.labels.tier == "gpu"']
      - name: fallback-group
        members: [{componentName: pytorch-job}]
"""
)

NO_GANG = HEADER.replace("NAME", "no-gang")

JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "mnist", "namespace": "research"},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": {"spec": {"containers": [{"name": "m", "image": "i"}]}}},
            "Worker": {"replicas": 4, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}},
        }
    },
}


def pod(name: str = "p", labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> Any:
    metadata: dict[str, Any] = {"name": name, "namespace": "research", "labels": labels or {}}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {"containers": []}}


def role(kind: str, **labels: str) -> Any:
    return pod(f"mnist-{kind}-0", {"training.kubeflow.org/replica-type": kind, **labels})


# --- the summary ---------------------------------------------------------------------------------------------


def test_a_missing_definition_is_refused_with_a_message() -> None:
    with pytest.raises(GangError, match="karta cannot be nil"):
        StructureSummary(None)  # type: ignore[arg-type]


def test_parent_and_children_maps_of_a_two_level_definition() -> None:
    summary = StructureSummary(karta_from_text(PRIORITY))
    assert summary.parents == {"pytorch-job": None, "master": "pytorch-job", "worker": "pytorch-job"}
    assert summary.children["pytorch-job"] == ["master", "worker"]
    assert summary.leaves == ("master", "worker")
    assert summary.get_karta().name == "priority"


def test_three_level_definition_walks_ancestors_and_descendants() -> None:
    summary = StructureSummary(workload("leaderworkerset").definition)
    assert summary.children["leaderworkerset"] == ["group"]
    assert summary.children["group"] == ["leader", "worker"]
    assert summary.ancestors("worker") == ["group", "leaderworkerset"]
    assert summary.descendants("leaderworkerset") == ["group", "leader", "worker"]
    assert summary.leaves == ("leader", "worker")


def test_root_only_definition_has_the_root_as_its_only_leaf() -> None:
    text = """
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: bare-job}
spec:
  structureDefinition:
    rootComponent:
      name: job
      kind: {group: batch, version: v1, kind: Job}
      specDefinition: {podTemplateSpecPath: .spec.template}
      statusDefinition:
        statusMappings:
          running: [{byPhase: Running}]
        phaseDefinition: {path: .status.phase}
"""
    summary = StructureSummary(karta_from_text(text))
    assert summary.leaves == ("job",)
    assert summary.children == {"job": []}
    assert summary.format is None and summary.candidates == {}


def test_worker_candidates_put_its_own_groups_before_the_parents() -> None:
    summary = StructureSummary(karta_from_text(PRIORITY))
    worker = [(c.pod_group, c.component) for c in summary.candidates["worker"]]
    assert worker == [("group-v1", "worker"), ("group-v2", "worker"), ("parent-group", "pytorch-job")]
    assert [(c.pod_group, c.component) for c in summary.candidates["master"]] == [("parent-group", "pytorch-job")]
    assert [c.direct for c in summary.candidates["worker"]] == [True, True, False]


# upstream's alpha-format building blocks, on the catalog's earlier alpha definitions (tests/fixtures/gang/alpha-*)


def test_candidates_of_a_single_group_naming_the_parent() -> None:
    summary = StructureSummary(definition_file("alpha-pytorchjob.karta.yaml"))
    assert [(c.pod_group, c.component) for c in summary.candidates["worker"]] == [("pytorchjob", "pytorchjob")]


def test_no_gang_instructions_give_no_candidates() -> None:
    summary = StructureSummary(karta_from_text(NO_GANG))
    assert summary.format is None
    assert summary.candidates == {}


def test_sort_helper_puts_direct_mentions_first_and_keeps_order_otherwise() -> None:
    parent = Candidate("p", PodGroupMember(component_name="job"), direct=False)
    first = Candidate("a", PodGroupMember(component_name="worker"), direct=True)
    second = Candidate("b", PodGroupMember(component_name="worker"), direct=True)
    assert prioritize([parent, first, second]) == [first, second, parent]
    assert prioritize([second, first]) == [second, first]
    assert prioritize([]) == []


def test_has_scale_definition_is_true_for_any_scale_definition_even_an_empty_one() -> None:
    assert StructureSummary(karta_from_text(PRIORITY)).has_scale_definition
    empty = PRIORITY.replace(
        "scaleDefinition: {replicasPath: .spec.pytorchReplicaSpecs.Master.replicas}", "scaleDefinition: {}"
    ).replace("scaleDefinition: {replicasPath: .spec.pytorchReplicaSpecs.Worker.replicas}", "")
    assert StructureSummary(karta_from_text(empty)).has_scale_definition
    none = PRIORITY.replace("scaleDefinition: {replicasPath: .spec.pytorchReplicaSpecs.Master.replicas}", "").replace(
        "scaleDefinition: {replicasPath: .spec.pytorchReplicaSpecs.Worker.replicas}", ""
    )
    assert not StructureSummary(karta_from_text(none)).has_scale_definition


def test_pod_group_wins_over_pod_groups_when_both_are_set() -> None:
    summary = StructureSummary(workload("inferencegraph").definition)
    assert summary.format == "podGroup"


# --- which component a pod belongs to ---------------------------------------------------------------------------


def test_a_single_leaf_takes_every_pod_even_when_its_selector_does_not_match() -> None:
    summary = StructureSummary(workload("jobset").definition)
    stranger = pod("stranger", {"app": "something-else"})
    assert infer_pod_component(PodQuerier(stranger), summary) == "replicatedjob"


def test_several_leaves_are_told_apart_by_their_selectors() -> None:
    summary = StructureSummary(karta_from_text(PRIORITY))
    assert infer_pod_component(PodQuerier(role("worker")), summary) == "worker"
    assert infer_pod_component(PodQuerier(role("master")), summary) == "master"


def test_a_pod_no_leaf_selector_matches_is_an_error_naming_it() -> None:
    summary = StructureSummary(karta_from_text(PRIORITY))
    with pytest.raises(GangError, match="no component found for pod research/mnist-launcher-0"):
        infer_pod_component(PodQuerier(role("launcher")), summary)


# --- which instance ---------------------------------------------------------------------------------------------


def test_instance_of_a_multi_instance_component_comes_from_the_pod() -> None:
    jobset = workload("jobset")
    query = PodQuerier(pod("w", {"jobset.sigs.k8s.io/replicatedjob-name": "workers"}))
    assert infer_pod_component_instance(query, "replicatedjob", jobset.resolve()) == "workers"


def test_an_unknown_component_is_an_error() -> None:
    with pytest.raises(ComponentNotFound, match="ghost"):
        infer_pod_component_instance(PodQuerier(pod()), "ghost", workload("jobset").resolve())


def test_a_single_instance_component_has_no_instance() -> None:
    assert infer_pod_component_instance(PodQuerier(role("worker")), "worker", workload("pytorchjob").resolve()) is None


def test_a_pod_of_an_instance_the_spec_no_longer_has_is_an_error() -> None:
    query = PodQuerier(pod("w", {"jobset.sigs.k8s.io/replicatedjob-name": "evaluators"}))
    with pytest.raises(GangError, match='could not match instance id "evaluators"'):
        infer_pod_component_instance(query, "replicatedjob", workload("jobset").resolve())


def test_instance_ids_without_an_instance_selector_are_an_error() -> None:
    jobset = workload("jobset")
    definition = jobset.definition
    child = definition.children[0]
    assert child.pod_selector is not None
    child = replace(child, pod_selector=replace(child.pod_selector, component_instance_selector=None))
    structure = replace(definition.structure, child_components=(child, *definition.children[1:]))
    definition = replace(definition, spec=replace(definition.spec, structure_definition=structure))
    broken = Workload(definition, jobset.to_object(), validate=False)
    with pytest.raises(GangError, match="no instance selector provided but instance ids are not empty"):
        infer_pod_component_instance(PodQuerier(pod()), "replicatedjob", broken.resolve())


def test_a_component_without_a_pod_selector_has_no_instance() -> None:
    lws = workload("leaderworkerset")
    assert infer_pod_component_instance(PodQuerier(pod()), "leaderworkerset", lws.resolve()) is None


# --- the effective component -------------------------------------------------------------------------------------


def test_the_only_member_gangs_pods_of_the_single_leaf() -> None:
    summary = StructureSummary(definition_file("alpha-jobset.karta.yaml"))
    found = pod_grouping(PodQuerier(pod()), "replicatedjob", summary)
    assert found is not None
    assert (found.effective_component, found.pod_group) == ("replicatedjob", "replicatedjob")


def test_several_leaves_fall_back_to_the_parent_member() -> None:
    summary = StructureSummary(definition_file("alpha-pytorchjob.karta.yaml"))
    found = pod_grouping(PodQuerier(role("worker")), "worker", summary)
    assert found is not None and found.effective_component == "pytorchjob"


def test_a_passing_filter_keeps_the_pod_in_its_own_group() -> None:
    summary = StructureSummary(karta_from_text(FALLBACK))
    found = pod_grouping(PodQuerier(role("worker", tier="gpu")), "worker", summary)
    assert found is not None
    assert (found.effective_component, found.pod_group) == ("worker", "worker-group")


def test_parent_fallback_when_the_workers_filtered_group_fails() -> None:
    summary = StructureSummary(karta_from_text(FALLBACK))
    found = pod_grouping(PodQuerier(role("worker", tier="cpu")), "worker", summary)
    assert found is not None
    assert (found.effective_component, found.pod_group) == ("pytorch-job", "fallback-group")


def test_a_filter_that_cannot_be_evaluated_names_the_component_and_group() -> None:
    text = FALLBACK.replace("""'.metadata.labels.tier == "gpu"'""", "'.metadata.labels[]'")
    summary = StructureSummary(karta_from_text(text))
    with pytest.raises(GangError, match="failed to evaluate filters for component worker in group worker-group"):
        pod_grouping(PodQuerier(role("worker", tier="gpu")), "worker", summary)


def test_no_gang_instructions_mean_no_grouping() -> None:
    summary = StructureSummary(karta_from_text(NO_GANG))
    assert pod_grouping(PodQuerier(role("worker")), "worker", summary) is None


# --- group keys and KAI names -----------------------------------------------------------------------------------


LWS_MEMBER = PodGroupMember(
    component_name="group",
    group_by_key_paths=(
        '.metadata.labels["leaderworkerset.sigs.k8s.io/name"]',
        '.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]',
    ),
)


def test_group_keys_are_the_pods_values_in_path_order() -> None:
    labels = {"leaderworkerset.sigs.k8s.io/name": "llm", "leaderworkerset.sigs.k8s.io/group-index": "1"}
    assert pod_group_keys(PodQuerier(pod("llm-1", labels)), LWS_MEMBER) == ["llm", "1"]
    assert pod_group_keys(PodQuerier(pod()), PodGroupMember(component_name="x")) == []


def test_a_missing_group_key_is_an_error_naming_the_path() -> None:
    with pytest.raises(GangError, match=r"group-index.*query result is empty"):
        pod_group_keys(PodQuerier(pod("llm-1", {"leaderworkerset.sigs.k8s.io/name": "llm"})), LWS_MEMBER)


def test_kai_names_are_prefix_uid_and_keys() -> None:
    assert kai_pod_group_name("pg", "1234-ab") == "pg-1234-ab"
    assert kai_pod_group_name("pg", "1234-ab", ["llm", "0"]) == "pg-1234-ab-llm-0"
    assert kai_pod_group_name("pg", "1234-ab", name="graph") == "pg-1234-ab-graph"


def test_keys_that_make_an_invalid_name_are_refused_with_the_reason() -> None:
    with pytest.raises(InvalidPodGroupName) as raised:
        kai_pod_group_name("pg", "1234", ["Worker_A"])
    message = str(raised.value)
    assert 'Karta grouping keys [Worker_A] produce invalid Kubernetes PodGroup name "pg-1234-Worker_A"' in message
    assert "lower case alphanumeric" in message
