"""The built-in Volcano Job definition beyond its fixture and flow table: the gang as the job controller writes
its PodGroup (minMember, minTaskMember per task) with the admission webhook's defaults, unnamed tasks, and the
export to Volcano's own PodGroup."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from workload_map.catalog import builtin_registry
from workload_map.gang import export, plan
from workload_map.resolve import resolve

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "catalog" / "batch-volcano-sh-job-v1alpha1"


@cache
def _job() -> dict[str, Any]:
    job: dict[str, Any] = yaml.safe_load((FIXTURE / "workload.yaml").read_text())
    return job


def _variant(**spec: Any) -> dict[str, Any]:
    job = copy.deepcopy(_job())
    job["spec"].update(spec)
    return job


def _plan(job: dict[str, Any]) -> Any:
    entry = builtin_registry().for_object(job)
    assert entry is not None and entry.karta.name == "batch-volcano-sh-job-v1alpha1"
    return plan(resolve(entry.karta, job))


def _minimums(job: dict[str, Any]) -> tuple[int, dict[str, int | None]]:
    (gang,) = _plan(job).gangs
    return gang.min_member, {node.instance or node.name: node.min_member for node in gang.sub_groups}


def test_the_gang_is_min_available_with_each_tasks_min_available() -> None:
    assert _minimums(_job()) == (4, {"ps": 1, "worker": 3})


def test_without_min_available_the_webhook_defaults_apply() -> None:
    tasks = copy.deepcopy(_job()["spec"]["tasks"])
    for task in tasks:
        del task["minAvailable"]
    job = _variant(tasks=tasks)
    del job["spec"]["minAvailable"]
    # mutate_job.go: task minAvailable = replicas; job minAvailable = the sum of the tasks'.
    assert _minimums(job) == (5, {"ps": 1, "worker": 4})


def test_a_partitioned_task_needs_min_partitions_times_partition_size() -> None:
    tasks = copy.deepcopy(_job()["spec"]["tasks"])
    del tasks[1]["minAvailable"]
    tasks[1]["partitionPolicy"] = {"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1}
    assert _minimums(_variant(tasks=tasks))[1] == {"ps": 1, "worker": 2}


def test_an_unnamed_task_is_the_instance_the_webhook_names_default_index() -> None:
    tasks = copy.deepcopy(_job()["spec"]["tasks"])
    del tasks[0]["name"]
    entry = builtin_registry().for_object(_job())
    assert entry is not None
    task = resolve(entry.karta, _variant(tasks=tasks)).component("task")
    assert list(task.instances) == ["default0", "worker"]


def test_the_volcano_export_is_one_pod_group_with_min_task_member() -> None:
    (group,) = export(_plan(_job()), "volcano")
    assert group["kind"] == "PodGroup" and group["spec"]["minMember"] == 4
    assert group["spec"]["minTaskMember"] == {"ps": 1, "worker": 3}
