"""`workload_map.model.scaffold`: drafts from the frameworks' own CRDs (tests/fixtures/scaffold/crds, see its
README) find the pod templates, replica fields, conditions, phase and suspend field, validate, and resolve real
objects of the kind (the catalog's fixtures); and the schema shapes and errors one at a time."""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.model import Karta, loads_definitions
from workload_map.model.scaffold import Scaffold, ScaffoldError, scaffold, select_crd
from workload_map.resolve import resolve
from workload_map.validation import errors, validate

REPO = Path(__file__).resolve().parents[2]
CRDS = REPO / "tests" / "fixtures" / "scaffold" / "crds"
CATALOG_FIXTURES = REPO / "tests" / "fixtures" / "catalog"


@cache
def crd_documents(name: str) -> list[Any]:
    return list(yaml.load_all(gzip.decompress((CRDS / f"{name}.yaml.gz").read_bytes()), Loader=yaml.CSafeLoader))


def draft_of(name: str, version: str | None = None) -> Scaffold:
    return scaffold(select_crd(crd_documents(name)), version)


def karta_of(draft: Scaffold) -> Karta:
    (karta,) = loads_definitions(draft.text, source=draft.crd)
    return karta


@dataclass(frozen=True)
class Expected:
    crd: str
    version: str | None
    # component -> (template path, instance id path, replicas path)
    templates: dict[str, tuple[str, str | None, str]]
    conditions: str | None
    phase: str | None
    suspend: str | None


CASES = [
    Expected(
        "jobs.batch.volcano.sh",
        None,
        {"tasks": (".spec.tasks[]? | .template", ".spec.tasks[]? | .name", ".spec.tasks[]? | .replicas // 1")},
        None,
        ".status.state.phase",
        None,
    ),
    Expected(
        "jobsets.jobset.x-k8s.io",
        None,
        {
            "replicatedjobs": (
                ".spec.replicatedJobs[]? | .template.spec.template",
                ".spec.replicatedJobs[]? | .name",
                ".spec.replicatedJobs[]? | .template.spec.parallelism // 1",
            )
        },
        ".status.conditions",
        None,
        ".spec.suspend",
    ),
    Expected(
        "leaderworkersets.leaderworkerset.x-k8s.io",
        None,
        {
            "leader": (".spec.leaderWorkerTemplate.leaderTemplate", None, ".spec.leaderWorkerTemplate.size // 1"),
            "worker": (".spec.leaderWorkerTemplate.workerTemplate", None, ".spec.leaderWorkerTemplate.size // 1"),
        },
        ".status.conditions",
        None,
        None,
    ),
    Expected(
        "mpijobs.kubeflow.org",
        None,
        {
            "mpireplica": (
                ".spec.mpiReplicaSpecs // {} | to_entries[] | .value | .template",
                ".spec.mpiReplicaSpecs // {} | to_entries[] | .key",
                ".spec.mpiReplicaSpecs // {} | to_entries[] | .value | .replicas // 1",
            )
        },
        ".status.conditions",
        None,
        ".spec.runPolicy.suspend",
    ),
    Expected(
        "rayclusters.ray.io",
        "v1",
        {
            "head": (".spec.headGroupSpec.template", None, "1"),
            "worker": (
                ".spec.workerGroupSpecs[]? | .template",
                ".spec.workerGroupSpecs[]? | .groupName",
                ".spec.workerGroupSpecs[]? | .replicas // 0",
            ),
        },
        ".status.conditions",
        ".status.state",
        ".spec.suspend",
    ),
    Expected(
        "rayjobs.ray.io",
        "v1",
        {
            "head": (".spec.rayClusterSpec.headGroupSpec.template", None, "1"),
            "worker": (
                ".spec.rayClusterSpec.workerGroupSpecs[]? | .template",
                ".spec.rayClusterSpec.workerGroupSpecs[]? | .groupName",
                ".spec.rayClusterSpec.workerGroupSpecs[]? | .replicas // 0",
            ),
            "submitter": (".spec.submitterPodTemplate", None, "1"),
        },
        ".status.rayClusterStatus.conditions",
        ".status.rayClusterStatus.state",
        ".spec.suspend",
    ),
    Expected(
        "raycronjobs.ray.io",
        None,
        {
            "head": (".spec.jobTemplate.rayClusterSpec.headGroupSpec.template", None, "1"),
            "worker": (
                ".spec.jobTemplate.rayClusterSpec.workerGroupSpecs[]? | .template",
                ".spec.jobTemplate.rayClusterSpec.workerGroupSpecs[]? | .groupName",
                ".spec.jobTemplate.rayClusterSpec.workerGroupSpecs[]? | .replicas // 0",
            ),
            "submitter": (".spec.jobTemplate.submitterPodTemplate", None, "1"),
        },
        None,
        None,
        ".spec.suspend",
    ),
    Expected(
        "trainingruntimes.trainer.kubeflow.org",
        None,
        {
            "replicatedjobs": (
                ".spec.template.spec.replicatedJobs[]? | .template.spec.template",
                ".spec.template.spec.replicatedJobs[]? | .name",
                ".spec.template.spec.replicatedJobs[]? | .template.spec.parallelism // 1",
            )
        },
        None,
        None,
        ".spec.template.spec.suspend",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.crd for case in CASES])
def test_a_real_crd_gives_its_pod_templates_replicas_status_and_suspend(case: Expected) -> None:
    draft = draft_of(case.crd, case.version)
    found = {site.component: (site.path, site.instance_id_path, site.replicas_path) for site in draft.templates}
    assert found == case.templates
    assert (draft.conditions_path, draft.phase_path, draft.suspend_path) == (case.conditions, case.phase, case.suspend)


@pytest.mark.parametrize("case", CASES, ids=[case.crd for case in CASES])
def test_the_draft_of_a_real_crd_validates_and_says_what_is_left_to_decide(case: Expected) -> None:
    draft = draft_of(case.crd, case.version)
    karta = karta_of(draft)
    assert errors(validate(karta)) == []
    assert karta.root_gvk is not None and (karta.root_gvk.group, karta.root_gvk.version) == (
        draft.group,
        draft.version,
    )
    assert draft.todos >= len(draft.templates) + 1  # at least the pod selectors and the description
    assert "# TODO: the label the operator sets on this component's pods" in draft.text
    if case.suspend:
        suspend = karta.root.suspend_definition
        assert suspend is not None and suspend.suspend_actions[0].path == case.suspend


def test_the_volcano_phases_are_mapped_from_the_schema_enum_and_the_rest_named_in_a_todo() -> None:
    draft = draft_of("jobs.batch.volcano.sh")
    assert "Completing" in draft.phases and "Running" in draft.phases
    status = karta_of(draft).root.status_definition
    assert status is not None and status.status_mappings is not None
    running = status.status_mappings.running
    assert running is not None and [m.by_phase for m in running] == ["Running"]
    assert "# TODO: phases Completing, Terminating are not mapped" in draft.text
    assert "# The schema has gang minimums: .spec.tasks[]? | .minAvailable." in draft.text


def test_the_ray_worker_min_and_max_replicas_are_found() -> None:
    (worker,) = [site for site in draft_of("rayclusters.ray.io", "v1").templates if site.component == "worker"]
    assert worker.minimum is not None and worker.minimum.path == ".spec.workerGroupSpecs[]? | .minReplicas"
    assert worker.maximum is not None and worker.maximum.default == 2147483647


# The drafts read real objects of their kinds: the catalog's fixtures, written from the frameworks' docs.
RESOLVED = [
    ("rayclusters.ray.io", "v1", "ray-io-raycluster-v1"),
    ("jobsets.jobset.x-k8s.io", None, "jobset-x-k8s-io-jobset-v1alpha2"),
    ("leaderworkersets.leaderworkerset.x-k8s.io", None, "leaderworkerset-x-k8s-io-leaderworkerset-v1"),
    ("mpijobs.kubeflow.org", None, "kubeflow-org-mpijob-v2beta1"),
]


@pytest.mark.parametrize(("crd", "version", "fixture"), RESOLVED, ids=[r[0] for r in RESOLVED])
def test_the_draft_resolves_a_real_object_of_the_kind(crd: str, version: str | None, fixture: str) -> None:
    obj = yaml.safe_load((CATALOG_FIXTURES / fixture / "workload.yaml").read_text())
    resolution = resolve(karta_of(draft_of(crd, version)), obj)
    assert resolution.errors == ()
    for site in draft_of(crd, version).templates:
        component = resolution.component(site.component)
        assert component.instances, site.component
        for instance in component.instances.values():
            template = instance.pod_template_spec
            assert template is not None and template["spec"]["containers"], (site.component, instance)


def test_a_ray_cluster_draft_counts_each_worker_group_by_its_name() -> None:
    obj = yaml.safe_load((CATALOG_FIXTURES / "ray-io-raycluster-v1" / "workload.yaml").read_text())
    worker = resolve(karta_of(draft_of("rayclusters.ray.io", "v1")), obj).component("worker")
    groups = {group["groupName"]: group.get("replicas", 0) for group in obj["spec"]["workerGroupSpecs"]}
    assert {name: instance.desired_replicas for name, instance in worker.instances.items()} == groups


def test_an_mpijob_draft_has_one_instance_per_replica_spec_key() -> None:
    obj = yaml.safe_load((CATALOG_FIXTURES / "kubeflow-org-mpijob-v2beta1" / "workload.yaml").read_text())
    component = resolve(karta_of(draft_of("mpijobs.kubeflow.org")), obj).component("mpireplica")
    specs = obj["spec"]["mpiReplicaSpecs"]
    assert {k: i.desired_replicas for k, i in component.instances.items()} == {
        key: spec.get("replicas", 1) for key, spec in specs.items()
    }


# --- shapes and errors, one at a time --------------------------------------------------------------------------

CONTAINERS = {"type": "array", "items": {"type": "object", "properties": {"name": {}, "image": {}}}}
TEMPLATE = {
    "type": "object",
    "properties": {"metadata": {"type": "object"}, "spec": {"properties": {"containers": CONTAINERS}}},
}


def crd(
    spec: dict[str, Any], status: dict[str, Any] | None = None, versions: tuple[str, ...] = ("v1",)
) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": spec, "status": status or {"type": "object"}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "flows.example.org"},
        "spec": {
            "group": "example.org",
            "names": {"kind": "Flow", "plural": "flows"},
            "versions": [{"name": v, "served": True, "schema": {"openAPIV3Schema": schema}} for v in versions],
        },
    }


def obj_spec(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_a_pod_spec_shape_becomes_a_pod_spec_path_and_odd_field_names_are_quoted() -> None:
    spec = obj_spec(**{"main-pod": {"type": "object", "properties": {"containers": CONTAINERS}}})
    draft = scaffold(crd(spec))
    (site,) = draft.templates
    assert (site.shape, site.path) == ("podspec", '.spec["main-pod"]')
    assert "podSpecPath: '.spec[\"main-pod\"]'" in draft.text
    assert errors(validate(karta_of(draft))) == []


def test_a_map_of_templates_keyed_by_role_is_one_multi_instance_component() -> None:
    spec = obj_spec(
        roles={
            "type": "object",
            "additionalProperties": obj_spec(replicas={"type": "integer", "default": 2}, template=TEMPLATE),
        }
    )
    (site,) = scaffold(crd(spec)).templates
    assert site.instance_id_path == ".spec.roles // {} | to_entries[] | .key"
    assert site.replicas_path == ".spec.roles // {} | to_entries[] | .value | .replicas // 2"
    obj = {
        "apiVersion": "example.org/v1",
        "kind": "Flow",
        "metadata": {"name": "f"},
        "spec": {
            "roles": {
                "b": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
                "a": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
            }
        },
    }
    component = resolve(karta_of(scaffold(crd(spec))), obj).component(site.component)
    assert {k: i.desired_replicas for k, i in component.instances.items()} == {"a": 3, "b": 2}


def test_an_array_without_a_name_field_is_keyed_by_index() -> None:
    spec = obj_spec(steps={"type": "array", "items": obj_spec(template=TEMPLATE)})
    (site,) = scaffold(crd(spec)).templates
    assert site.instance_id_path == ".spec.steps // [] | keys[] | tostring"


def test_conditions_with_an_enum_of_types_are_mapped_from_it() -> None:
    condition = obj_spec(type={"type": "string", "enum": ["Created", "Running", "Succeeded", "Failed"]}, status={})
    status = obj_spec(conditions={"type": "array", "items": condition})
    draft = scaffold(crd(obj_spec(template=TEMPLATE), status))
    assert draft.condition_types == ("Created", "Running", "Succeeded", "Failed")
    mappings = karta_of(draft).root.status_definition.status_mappings  # type: ignore[union-attr]
    assert mappings is not None and mappings.initializing is not None and mappings.completed is not None
    assert mappings.completed[0].by_conditions[0].type == "Succeeded"  # type: ignore[index]


def test_no_status_fields_leave_empty_mappings_and_a_todo() -> None:
    draft = scaffold(crd(obj_spec(template=TEMPLATE)))
    assert "# TODO: the schema shows no conditions array and no phase" in draft.text
    assert errors(validate(karta_of(draft))) == []


def test_several_served_versions_need_one_named() -> None:
    two = crd(obj_spec(template=TEMPLATE), versions=("v1", "v2"))
    with pytest.raises(ScaffoldError, match="serves 2 versions: choose one with --version") as caught:
        scaffold(two)
    assert caught.value.hint == "its versions: v1, v2"
    assert scaffold(two, "v2").version == "v2"
    with pytest.raises(ScaffoldError, match="has no version 'v3'"):
        scaffold(two, "v3")


def test_a_schema_without_a_pod_template_names_the_opaque_fields() -> None:
    opaque = obj_spec(engine={"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    with pytest.raises(ScaffoldError, match=r"no pod template found in the schema of flows\.example\.org v1") as caught:
        scaffold(crd(opaque))
    assert caught.value.hint is not None and ".spec.engine" in caught.value.hint


def test_select_crd_picks_by_kind_and_refuses_what_is_not_a_crd() -> None:
    one, other = crd(obj_spec(template=TEMPLATE)), crd(obj_spec(template=TEMPLATE))
    other["spec"]["names"]["kind"] = "Other"
    assert select_crd([one, other], "other") is other
    with pytest.raises(ScaffoldError, match="holds 2 CRDs: choose one with --kind"):
        select_crd([one, other])
    with pytest.raises(ScaffoldError, match="has no CRD of kind 'Nope'"):
        select_crd([one], "Nope")
    with pytest.raises(ScaffoldError, match="holds no CustomResourceDefinition"):
        select_crd([{"kind": "Pod"}, "text"])


def test_names_from_the_schema_never_reach_a_comment_unprintable() -> None:
    spec = obj_spec(**{"evil\nname": obj_spec(template=TEMPLATE)})
    bad = crd(spec)
    bad["metadata"]["name"] = "flows\x1b[31m.example.org"
    draft = scaffold(bad)
    assert "\x1b" not in draft.text
    assert all(not line.lstrip().startswith("#") or line.isprintable() for line in draft.text.splitlines())
    assert errors(validate(karta_of(draft))) == []


def test_a_deeply_nested_schema_is_walked_within_bounds() -> None:
    node: dict[str, Any] = obj_spec(template=TEMPLATE)
    for _ in range(200):
        node = obj_spec(inner=node)
    with pytest.raises(ScaffoldError, match="no pod template found"):
        scaffold(crd(node))
