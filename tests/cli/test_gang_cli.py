"""`wmap gang`: the plan or the scheduler objects from manifests, exit codes, warnings and output shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import EXAMPLES, REPO, Result, invoke, run_installed
from workload_map.cli.commands import COMMANDS
from workload_map.gang import min_member_of

FIXTURES = REPO / "tests" / "fixtures" / "gang"
CATALOG = REPO / "tests" / "fixtures" / "catalog"


def test_gang_is_a_registered_command() -> None:
    assert "gang" in COMMANDS


def wmap(*args: str, home: Path, stdin: str = "") -> Result:
    return invoke(["gang", *args], home=home, stdin=stdin)


def documents(result: Result) -> list[dict]:  # type: ignore[type-arg]
    return [document for document in yaml.safe_load_all(result.stdout) if document is not None]


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("pytorchjob", [("mnist-ddp", 5)]),
        ("jobset", [("train", 9)]),
        ("leaderworkerset", [("llm-0", 4), ("llm-1", 4)]),
    ],
)
@pytest.mark.parametrize("fmt", ["kai", "volcano", "coscheduling"])
def test_pod_groups_one_yaml_document_each(fixture: str, expected: list, fmt: str, tmp_path: Path) -> None:  # type: ignore[type-arg]
    result = wmap("-f", str(FIXTURES / f"{fixture}.yaml"), "--format", fmt, home=tmp_path)
    assert result.code == 0, result.stderr
    found = [(doc["metadata"]["name"], min_member_of(doc)) for doc in documents(result)]
    assert found == expected
    assert result.stdout.count("\n---\n") == len(expected) - 1


def test_the_default_is_the_plan(tmp_path: Path) -> None:
    result = wmap("-f", str(FIXTURES / "leaderworkerset.yaml"), home=tmp_path)
    assert result.code == 0, result.stderr
    (plan,) = documents(result)
    assert plan["schemaVersion"] == "workloadmap.io/gang/v2"
    assert [(gang["name"], gang["minMember"], gang["replica"]) for gang in plan["gangs"]] == [
        ("llm-0", 4, "0"),
        ("llm-1", 4, "1"),
    ]


def test_kueue_workloads_and_their_pod_sets(tmp_path: Path) -> None:
    result = wmap("-f", str(FIXTURES / "jobset.yaml"), "--format", "kueue", "--queue", "team-a", home=tmp_path)
    assert result.code == 0, result.stderr
    found = [
        (doc["metadata"]["name"], doc["spec"]["queueName"], [ps["count"] for ps in doc["spec"]["podSets"]])
        for doc in documents(result)
    ]
    assert found == [("train", "team-a", [1, 8])]  # one Workload: a PodSet per replicatedJob


def test_workload_api_in_both_versions(tmp_path: Path) -> None:
    alpha2 = documents(wmap("-f", str(FIXTURES / "leaderworkerset.yaml"), "--format", "workload", home=tmp_path))
    assert [(doc["apiVersion"], doc["kind"]) for doc in alpha2] == [
        ("scheduling.k8s.io/v1alpha2", "Workload"),
        ("scheduling.k8s.io/v1alpha2", "PodGroup"),
        ("scheduling.k8s.io/v1alpha2", "PodGroup"),
    ]
    alpha1 = documents(
        wmap(
            "-f",
            str(FIXTURES / "leaderworkerset.yaml"),
            "--format",
            "workload",
            "--workload-api-version",
            "v1alpha1",
            home=tmp_path,
        )
    )
    (workload,) = alpha1
    assert workload["spec"]["podGroups"] == [{"name": "group", "policy": {"gang": {"minCount": 4}}}]


def test_kai_native_sub_groups_from_a_local_definition(tmp_path: Path) -> None:
    result = wmap(
        "-f",
        str(FIXTURES / "inferencegraph.yaml"),
        "--definitions",
        str(FIXTURES / "inferencegraph.karta.yaml"),
        "--format",
        "kai",
        "--queue",
        "inference",
        home=tmp_path,
    )
    assert result.code == 0, result.stderr
    (pod_group,) = documents(result)
    assert pod_group["spec"]["minSubGroup"] == 2
    assert [(group["name"], group["minMember"]) for group in pod_group["spec"]["subGroups"]] == [
        ("prefill", 2),
        ("decode", 4),
    ]


def test_pods_are_placed_in_their_gangs(tmp_path: Path) -> None:
    result = wmap(
        "-f",
        str(FIXTURES / "leaderworkerset.yaml"),
        "--pods",
        str(FIXTURES / "leaderworkerset.pods.yaml"),
        "-o",
        "json",
        home=tmp_path,
    )
    assert result.code == 0, result.stderr
    plan = json.loads(result.stdout)
    assert {pod["name"]: pod["gang"] for pod in plan["pods"]}["llm-1-3"] == "llm-1"
    assert [len(gang["pods"]) for gang in plan["gangs"]] == [4, 4]


def test_json_of_several_objects_is_a_list(tmp_path: Path) -> None:
    result = wmap("-f", str(FIXTURES / "leaderworkerset.yaml"), "--format", "volcano", "-o", "json", home=tmp_path)
    listed = json.loads(result.stdout)
    assert (listed["apiVersion"], listed["kind"]) == ("v1", "List")
    assert [item["spec"]["minMember"] for item in listed["items"]] == [4, 4]


def test_stdin_and_example_manifests(tmp_path: Path) -> None:
    text = (EXAMPLES / "pytorchjob.yaml").read_text()
    result = wmap("-f", "-", "--format", "coscheduling", home=tmp_path, stdin=text)
    assert result.code == 0, result.stderr
    (pod_group,) = documents(result)
    assert pod_group["spec"]["minMember"] == 5


def test_a_flag_the_format_has_no_field_for_is_a_warning(tmp_path: Path) -> None:
    result = wmap("-f", str(FIXTURES / "jobset.yaml"), "--format", "coscheduling", "--queue", "q", home=tmp_path)
    assert result.code == 0
    assert "warning: --queue has no field in --format coscheduling: ignored" in result.stderr


def test_a_deployment_needs_no_gang_and_says_why(tmp_path: Path) -> None:
    result = wmap("-f", str(CATALOG / "apps-deployment-v1" / "workload.yaml"), "-o", "json", home=tmp_path)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["noGang"] == "the replicas are independent: each pod is scheduled on its own"
    exported = wmap("-f", str(CATALOG / "apps-deployment-v1" / "workload.yaml"), "--format", "volcano", home=tmp_path)
    assert exported.code == 0 and exported.stdout == ""
    assert "needs no gang (the replicas are independent" in exported.stderr


def test_a_definition_without_gang_instructions_is_scheduled_pod_by_pod(tmp_path: Path) -> None:
    milvus = CATALOG / "milvus-io-milvus-v1beta1"
    result = wmap("-f", str(milvus / "workload.yaml"), "-o", "json", home=tmp_path)
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert (document["format"], document["gangs"]) == (None, [])
    assert "has no gangScheduling: each pod is scheduled on its own" in document["noGang"]
    kai = wmap(
        "-f", str(milvus / "workload.yaml"), "--pods", str(milvus / "pods.yaml"), "--format", "kai", home=tmp_path
    )
    assert kai.code == 0, kai.stderr
    pod_groups = documents(kai)
    assert pod_groups and all(group["spec"] == {"minMember": 1} for group in pod_groups)  # KAI: one per pod
    assert "Traceback" not in kai.output


def test_objects_that_need_no_gang_are_skipped_in_a_stream(tmp_path: Path) -> None:
    owned = yaml.safe_load((FIXTURES / "pytorchjob.pods.yaml").read_text())
    for pod in owned["items"]:  # a controller's pods are scheduled with it, not as gangs of their own
        pod["metadata"]["ownerReferences"] = [
            {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "mnist-ddp", "uid": "u", "controller": True}
        ]
    stream = (FIXTURES / "jobset.yaml").read_text() + "\n---\n" + yaml.safe_dump(owned)
    result = wmap("-f", "-", "--format", "kai", home=tmp_path, stdin=stream)
    assert result.code == 0, result.stderr
    assert [doc["metadata"]["name"] for doc in documents(result)] == ["train"]
    assert "skipped 5 objects scheduled with their owner: Pod/mnist-ddp-master-0" in result.stderr


def test_an_unowned_object_without_a_gang_keeps_its_document_beside_a_gang(tmp_path: Path) -> None:
    """Per object (issue 20): a Deployment given with a JobSet is said to need no gang, in text and YAML, as it
    would be alone; only objects a controller owns are skipped."""
    deployment = (CATALOG / "apps-deployment-v1" / "workload.yaml").read_text()
    stream = (FIXTURES / "jobset.yaml").read_text() + "\n---\n" + deployment
    text = wmap("-f", "-", "-o", "text", home=tmp_path, stdin=stream)
    assert text.code == 0, text.stderr
    assert "skipped" not in text.stderr
    assert "Deployment " in text.output and "no gang: " in text.output and "gang train" in text.output
    plans = wmap("-f", "-", "-o", "yaml", home=tmp_path, stdin=stream)
    assert plans.code == 0, plans.stderr
    by_kind = {doc["workload"]["kind"]: doc for doc in documents(plans)}
    assert set(by_kind) == {"JobSet", "Deployment"}
    assert by_kind["Deployment"]["noGang"] and by_kind["Deployment"]["gangs"] == []
    assert by_kind["JobSet"]["gangs"] and "noGang" not in by_kind["JobSet"]


def test_a_type_no_definition_covers_is_exit_4(tmp_path: Path) -> None:
    result = wmap("-f", str(FIXTURES / "inferencegraph.yaml"), home=tmp_path)
    assert result.code == 4
    assert "no definition covers serving.example.com/v1/InferenceGraph" in result.stderr


def test_a_custom_resource_without_pod_containers_is_named_not_called_no_workload(tmp_path: Path) -> None:
    """A custom resource whose pods the manifest does not show (a NIMPipeline, a NemoCustomizer) is one a
    definition could cover: named with what to do, as describe names it, not "no workload in the input"."""
    manifest = tmp_path / "widget.yaml"
    manifest.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 2}\n")
    result = wmap("-f", str(manifest), home=tmp_path)
    assert result.code == 4
    assert result.stderr.splitlines()[0] == f'error: no definition covers example.com/v1/Widget "w" ({manifest})'
    assert "--definitions" in result.stderr
    config_map = tmp_path / "cm.yaml"
    config_map.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    plainly = wmap("-f", str(config_map), home=tmp_path)
    assert plainly.code == 4
    assert plainly.stderr.splitlines()[0] == "error: no workload in the input"


def test_help_says_the_default_is_the_tree_on_a_terminal(tmp_path: Path) -> None:
    result = wmap("--help", home=tmp_path)
    assert result.code == 0
    assert "[default: text (the plan's tree) on a terminal, else yaml," in " ".join(result.stdout.split())


def test_usage_errors_are_exit_2(tmp_path: Path) -> None:
    assert wmap(home=tmp_path).code == 2
    assert wmap("-f", str(FIXTURES / "jobset.yaml"), "--format", "yunikorn", home=tmp_path).code == 2


def test_the_live_form_without_a_cluster_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing-kubeconfig"))
    live = wmap("jobset/train", home=tmp_path)
    assert live.code == 1
    assert live.stderr.startswith("error: no kubeconfig")
    assert "Traceback" not in live.stderr


def test_a_pods_file_without_pods_is_a_usage_error(tmp_path: Path) -> None:
    result = wmap("-f", str(FIXTURES / "jobset.yaml"), "--pods", str(FIXTURES / "jobset.yaml"), home=tmp_path)
    assert result.code == 2
    assert "no Pod objects" in result.stderr


def test_the_installed_wmap_runs_gang(tmp_path: Path) -> None:
    result = run_installed(["gang", "-f", str(FIXTURES / "jobset.yaml"), "--format", "kai"], home=tmp_path)
    assert result.code == 0, result.stderr
    assert [doc["spec"]["minSubGroup"] for doc in yaml.safe_load_all(result.stdout)] == [2]


@pytest.mark.parametrize(
    ("fmt", "link"),
    [
        ("kai", lambda pod: pod["metadata"]["annotations"]["pod-group-name"]),
        ("volcano", lambda pod: pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"]),
        ("coscheduling", lambda pod: pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"]),
        ("workload", lambda pod: pod["spec"]["schedulingGroup"]["podGroupName"]),
    ],
)
def test_joined_pods_follow_the_scheduler_objects_carrying_their_links(fmt: str, link: Any, tmp_path: Path) -> None:
    jobset = CATALOG / "jobset-x-k8s-io-jobset-v1alpha2"
    given = [doc for doc in yaml.safe_load_all((jobset / "pods.yaml").read_text()) if doc]
    given_pods = [pod for doc in given for pod in (doc.get("items") or [doc]) if pod.get("kind") == "Pod"]
    result = wmap(
        "-f",
        str(jobset / "workload.yaml"),
        "--pods",
        str(jobset / "pods.yaml"),
        "--format",
        fmt,
        "--joined-pods",
        "-o",
        "json",
        home=tmp_path,
    )
    assert result.code == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    pods = [item for item in items if item["kind"] == "Pod"]
    assert items[: len(items) - len(pods)] and all(item["kind"] != "Pod" for item in items[: len(items) - len(pods)])
    assert sorted(pod["metadata"]["name"] for pod in pods) == sorted(pod["metadata"]["name"] for pod in given_pods)
    assert {link(pod) for pod in pods} == {"llm-pretrain"}  # the JobSet's one gang
    if fmt == "kai":  # each pod's leaf: its Job replica
        leaves = {pod["metadata"]["name"]: pod["metadata"]["labels"]["kai.scheduler/subgroup-name"] for pod in pods}
        assert leaves["llm-pretrain-workers-1-0-05a3e"] == "workers-replica-1"
        assert leaves["llm-pretrain-driver-0-0-06c1b"] == "driver-replica-0"


def test_joined_pods_of_a_workload_without_a_gang_get_kais_one_pod_group_each(tmp_path: Path) -> None:
    deployment = CATALOG / "apps-deployment-v1"
    result = wmap(
        "-f",
        str(deployment / "workload.yaml"),
        "--pods",
        str(deployment / "pods.yaml"),
        "--format",
        "kai",
        "--joined-pods",
        "-o",
        "json",
        home=tmp_path,
    )
    assert result.code == 0, result.stderr
    items = json.loads(result.stdout)["items"]
    groups = {item["metadata"]["name"] for item in items if item["kind"] == "PodGroup"}
    pods = [item for item in items if item["kind"] == "Pod"]
    assert pods and {pod["metadata"]["annotations"]["pod-group-name"] for pod in pods} == groups


def test_joined_pods_need_pods_and_a_scheduler(tmp_path: Path) -> None:
    jobset = CATALOG / "jobset-x-k8s-io-jobset-v1alpha2" / "workload.yaml"
    no_format = wmap("-f", str(jobset), "--joined-pods", home=tmp_path)
    assert no_format.code == 2 and "--joined-pods writes pods for a scheduler" in no_format.stderr
    no_pods = wmap("-f", str(jobset), "--format", "kai", "--joined-pods", home=tmp_path)
    assert no_pods.code == 2 and "--joined-pods needs the pods: give --pods FILE" in no_pods.stderr
