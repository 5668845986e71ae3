"""The frozen, lazy `Resolution` (docs/resolve.md): what consumers read, computed once per snapshot, never changed.

Test design: the resolve and gang fixtures; a few assertions look at the private part cache on purpose, because
"computed at most once, on first use" is the property under test and has no other observable.
"""

from __future__ import annotations

import threading
from fractions import Fraction
from typing import Any

import pytest

from tests.fixtures import gang
from tests.fixtures.resolve import karta, obj
from workload_map.gang import plan
from workload_map.resolve import (
    Resolution,
    ResolvedInstance,
    Scale,
    Workload,
    desired_replicas,
    min_replicas,
    resolve,
)
from workload_map.view import build_view


def pytorchjob() -> Resolution:
    return gang.workload("pytorchjob").resolve()


# --- frozen ---------------------------------------------------------------------------------------------------


def test_a_resolution_and_its_parts_cannot_be_changed() -> None:
    resolution = pytorchjob()
    component = resolution.component("worker")
    instance = component.instances[""]
    for target, attribute in ((resolution, "object"), (component, "name"), (instance, "instance_id")):
        with pytest.raises(AttributeError, match="frozen"):
            setattr(target, attribute, "x")


def test_a_workload_hands_out_one_resolution_per_snapshot() -> None:
    workload = gang.workload("jobset")
    before = workload.resolve()
    assert workload.resolve() is before
    assert before.status is not None and before.status.phase == "Initializing"
    workload.suspend()
    after = workload.resolve()
    assert after is not before
    assert after.status is not None and after.status.phase == "Suspending"
    # the resolution taken before the write still describes the object it was taken of
    assert before.status.phase == "Initializing"
    assert workload.merge_patch() == {"spec": {"suspend": True}}


# --- lazy -----------------------------------------------------------------------------------------------------


def test_reading_the_status_decodes_no_instance_part() -> None:
    resolution = pytorchjob()
    assert resolution.status is not None
    assert set(resolution.root_component._parts) == {"status"}
    assert all(not component._parts for name, component in resolution.components.items() if name != resolution.root)


def test_reading_the_status_evaluates_only_the_status_expressions() -> None:
    resolution = pytorchjob()
    assert resolution.status is not None
    snapshot = resolution.root_component._snapshot
    structure = resolution._structure
    shape, status = structure.plan_groups
    # the status group is in the cache, or was read by the status plan's generated functions (from a batch's
    # second evaluation in the process: `status_plan.planned_status`), which keep nothing there
    assert set(snapshot._results) <= set(status)
    assert not set(shape) & set(snapshot._results)
    worker = resolution.component("worker")
    # a pod template whose path is a plain path is read in place, outside the groups (`Structure.in_place`)
    assert worker.instances[""].pod_template is not None
    assert structure.in_place and not structure.in_place & set(snapshot._results)
    assert set(snapshot._results) <= set(status)
    assert worker.instances[""].scale is not None  # the structure group, one call
    assert set(shape) <= set(snapshot._results) <= set(shape) | set(status)


def test_a_part_is_computed_once_whichever_way_it_is_read() -> None:
    workload = gang.workload("pytorchjob")
    strict = workload.component("worker").scales
    resolved = workload.resolve().component("worker")
    first = resolved._parts["scales"]
    assert strict is not None and resolved.instances[""].scale == strict[""]
    assert resolved._parts["scales"] is first


def test_threads_reading_one_resolution_see_the_same_answers() -> None:
    resolution = pytorchjob()
    seen: list[tuple[Any, ...]] = []

    def read() -> None:
        worker = resolution.component("worker").instances[""]
        seen.append((resolution.errors, worker.desired_replicas, worker.requests))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 and all(answer == seen[0] for answer in seen)


# --- what consumers read --------------------------------------------------------------------------------------


def test_an_instance_carries_its_template_requests_and_replica_counts() -> None:
    worker = pytorchjob().component("worker").instances[""]
    assert isinstance(worker, ResolvedInstance)
    assert worker.pod_template is not None and worker.pod_template["spec"]["containers"]
    assert worker.requests is not None and worker.requests["nvidia.com/gpu"] == Fraction(2)
    assert worker.desired_replicas == 4 and worker.min_replicas == 4
    assert worker.requests_error is None


def test_a_fragmented_instance_gets_an_assembled_template_and_its_requests() -> None:
    resolution = resolve(karta("reactor"), obj("reactor"))
    instances = resolution.component("service").instances
    assert set(instances) == {"api", "cache", "worker"}
    for instance in instances.values():
        template = instance.pod_template
        assert template is not None and template["spec"]["containers"], instance.instance_id
        assert instance.requests is not None


def test_an_unreadable_quantity_is_an_error_of_the_resolution_and_no_requests() -> None:
    value = gang.obj("pytorchjob")
    worker_spec = value["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    worker_spec["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "lots"}}
    resolution = gang.workload("pytorchjob", value).resolve()
    worker = resolution.component("worker").instances[""]
    assert worker.requests is None
    assert worker.requests_error is not None and "cannot count the requests" in worker.requests_error.message
    assert [(error.component, error.field) for error in resolution.errors] == [
        ("worker", "specDefinition.podTemplateSpecPath")
    ]


def test_identity_is_read_once_from_the_object() -> None:
    value = gang.obj("jobset")
    value["metadata"].update(uid="u-1", creationTimestamp="2026-11-30T10:00:00Z")
    resolution = Workload(gang.karta("jobset"), value).resolve()
    assert (resolution.object.uid, resolution.object.creation_timestamp) == ("u-1", "2026-11-30T10:00:00Z")
    view = build_view(resolution)
    assert (view.uid, view.created_at) == ("u-1", "2026-11-30T10:00:00Z")
    assert plan(resolution).uid == "u-1"


def test_related_objects_travel_with_the_resolution() -> None:
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "rt"}}
    resolution = resolve(gang.karta("jobset"), gang.obj("jobset"), related=[runtime])
    assert resolution.related_object("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", "rt") == runtime
    assert resolution.related_object("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", "other") is None


# --- the replica rules ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scale", "desired", "minimum"),
    [
        (None, 1, 0),
        (Scale(), 1, 0),
        (Scale(replicas=3), 3, 3),
        (Scale(replicas=0, min_replicas=2), 0, 2),
        (Scale(min_replicas=2, max_replicas=5), 2, 2),
        (Scale(replicas=-1), 0, 0),
    ],
)
def test_desired_and_minimum_replicas(scale: Scale | None, desired: int, minimum: int) -> None:
    assert (desired_replicas(scale), min_replicas(scale)) == (desired, minimum)


def test_the_view_and_the_gang_plan_count_a_scaled_to_zero_role_alike() -> None:
    value = gang.obj("jobset")
    value["spec"]["replicatedJobs"][1]["replicas"] = 0
    resolution = gang.workload("jobset", value).resolve()
    view = build_view(resolution)
    workers = view.find("replicatedjob", "workers")
    assert workers is not None and workers.replicas.desired == 0
    counts = {role.instance: role.count for gang_ in plan(resolution).gangs for role in gang_.roles}
    assert counts.get("workers", 0) == 0
