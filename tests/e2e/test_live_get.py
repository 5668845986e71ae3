"""`wmap get` against the real API server: one LIST per type (per page), kubectl-like tables, phases from the
definitions, `--all-types` keeping only top-level workloads, and the errors a user can act on."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import ApiServer
from .test_live_support import (
    Wmap,
    create,
    create_pod,
    deployment_body,
    grant,
    jobset_body,
    owner_ref,
    patch_status,
    read_rules,
    replicaset_body,
    summary,
    widget_definition,
    wmap_requests,
)

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("cluster_api")]  # every case: sync and async API


JOBSET_RUNNING = {"conditions": [], "replicatedJobsStatus": [{"name": "workers", "ready": 2, "active": 2}]}
JOBSET_SUSPENDED = {"conditions": [{"type": "Suspended", "status": "True", "reason": "SuspendedJobs"}]}
JOBSET_COMPLETED = {"conditions": [{"type": "Completed", "status": "True", "reason": "AllJobsCompleted"}]}


@pytest.fixture
def jobsets(api_server: ApiServer, make_namespace: Any) -> str:
    """Three JobSets created a second apart: `old` (completed), `mid` (labelled team=a), `new` (suspended)."""
    namespace = make_namespace("wmap-live-get")
    old = create(api_server, jobset_body("old"), namespace=namespace)
    patch_status(api_server, old, JOBSET_COMPLETED)
    time.sleep(1.1)
    create(api_server, jobset_body("mid", labels={"team": "a"}), namespace=namespace)
    time.sleep(1.1)
    new = jobset_body("new")
    new["spec"]["suspend"] = True
    patch_status(api_server, create(api_server, new, namespace=namespace), JOBSET_SUSPENDED)
    return namespace


def rows(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines()]


def test_get_lists_a_type_newest_first_with_one_list(api_server: ApiServer, wmap: Wmap, jobsets: str) -> None:
    mark = api_server.audit_mark()
    result = wmap.run("get", "jobsets", namespace=jobsets)
    assert result.code == 0, result.stderr
    table = rows(result.stdout)
    assert table[0] == ["NAME", "PHASE", "AGE"]
    assert [r[0] for r in table[1:]] == ["new", "mid", "old"]
    phases = {r[0]: r[1] for r in table[1:]}
    assert phases["old"].split(",")[0] == "Completed"
    assert phases["new"].split(",")[0] == "Suspended"
    assert result.stderr == ""
    calls = summary(wmap_requests(api_server, mark))
    assert sorted(calls) == sorted([("get", "/api"), ("get", "/apis"), ("list", "kartas"), ("list", "jobsets")])


def test_get_prints_kubectl_names_and_a_table_without_headers(wmap: Wmap, jobsets: str) -> None:
    named = wmap.run("get", "jobsets", "-o", "name", namespace=jobsets)
    assert named.code == 0, named.stderr
    assert named.stdout.splitlines() == [f"jobset.jobset.x-k8s.io/{name}" for name in ("new", "mid", "old")]
    bare = wmap.run("get", "jobsets", "--no-headers", namespace=jobsets)
    assert bare.code == 0, bare.stderr
    assert [r[0] for r in rows(bare.stdout)] == ["new", "mid", "old"]


@pytest.mark.parametrize(
    "token", ["jobset", "JobSet", "JobSets", "jobsets.jobset.x-k8s.io", "jobset.v1alpha2.jobset.x-k8s.io"]
)
def test_every_spelling_of_a_type_resolves(wmap: Wmap, jobsets: str, token: str) -> None:
    result = wmap.run("get", token, namespace=jobsets)
    assert result.code == 0, result.stderr
    assert [r[0] for r in rows(result.stdout)[1:]] == ["new", "mid", "old"]


def test_a_named_workload_is_one_get_and_a_bare_object(api_server: ApiServer, wmap: Wmap, jobsets: str) -> None:
    for args in (("jobset/mid",), ("jobset", "mid")):
        mark = api_server.audit_mark()
        item = wmap.json("get", *args, namespace=jobsets)
        assert item["name"] == "mid" and item["kind"] == "JobSet" and item["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
        assert item["namespace"] == jobsets and item["definition"] == "jobset-x-k8s-io-jobset-v1alpha2"
        assert item["origin"] == "catalog" and isinstance(item["phases"], list)
        calls = summary(wmap_requests(api_server, mark))
        assert ("get", "jobsets") in calls and ("list", "jobsets") not in calls


def test_machine_output_is_an_envelope(wmap: Wmap, jobsets: str) -> None:
    listed = wmap.json("get", "jobsets", namespace=jobsets)
    assert listed["count"] == 3 and [i["name"] for i in listed["items"]] == ["new", "mid", "old"]
    yaml_out = wmap.run("get", "jobsets", "-o", "yaml", namespace=jobsets)
    assert yaml_out.code == 0
    import yaml

    assert yaml.safe_load(yaml_out.stdout) == listed


def test_phase_and_selector_filters(wmap: Wmap, jobsets: str) -> None:
    completed = wmap.run("get", "jobsets", "--phase", "completed", namespace=jobsets)
    assert [r[0] for r in rows(completed.stdout)[1:]] == ["old"]
    both = wmap.run("get", "jobsets", "--phase", "Completed,Suspended", namespace=jobsets)
    assert [r[0] for r in rows(both.stdout)[1:]] == ["new", "old"]
    labelled = wmap.run("get", "jobsets", "-l", "team=a", namespace=jobsets)
    assert [r[0] for r in rows(labelled.stdout)[1:]] == ["mid"]
    none = wmap.run("get", "jobsets", "--phase", "Failed", namespace=jobsets)
    assert none.code == 0 and none.stdout == ""
    assert none.stderr == f"No workloads found in namespace {jobsets}.\n"
    empty_json = wmap.json("get", "jobsets", "--phase", "Failed", namespace=jobsets)
    assert empty_json == {"items": [], "count": 0}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("get", "jobsets", "--phase", "Bogus"), "invalid value: must be one of"),
        (("get", "jobsets", "-l", "a b c"), "--selector: "),
        (("get", "jobset/mid", "-l", "team=a"), "--selector cannot be combined with a NAME"),
        (("get", "jobset/"), 'NAME is empty in "jobset/"'),
        (("get", "jobset", ""), "NAME is empty"),
        (("get", "jobset/a", "b"), 'NAME given twice: as "jobset/a" and as "b"'),
        (("get", "jobset/a/b"), 'NAME must not contain "/": "a/b"'),
        (("get",), "a TYPE is required, or --all-types"),
        (("get", "jobsets", "--all-types"), "--all-types cannot be combined with a TYPE"),
        (("get", "jobsets", "--chunk-size", "-1"), "must not be negative"),
        (("get", "jobsets", "--request-timeout", "soon"), "--request-timeout 'soon' is not a duration"),
    ],
)
def test_usage_errors_are_exit_2_before_any_request(
    api_server: ApiServer, wmap: Wmap, args: tuple[str, ...], message: str
) -> None:
    mark = api_server.audit_mark()
    result = wmap.run(*args)
    assert result.code == 2, result.stderr
    assert message in result.stderr and result.stdout == ""
    assert wmap_requests(api_server, mark) == []


def test_paging_follows_continue_tokens_one_list_per_page(api_server: ApiServer, wmap: Wmap, jobsets: str) -> None:
    mark = api_server.audit_mark()
    result = wmap.run("get", "jobsets", "--chunk-size", "1", namespace=jobsets)
    assert [r[0] for r in rows(result.stdout)[1:]] == ["new", "mid", "old"]
    calls = summary(wmap_requests(api_server, mark))
    assert calls.count(("list", "jobsets")) == 3  # 3 pages of 1
    assert ("get", "jobsets") not in calls


def test_all_namespaces_adds_the_namespace_column(wmap: Wmap, jobsets: str, api_server: ApiServer) -> None:
    result = wmap.run("get", "jobsets", "-A", "-l", "team=a")
    assert result.code == 0, result.stderr
    table = rows(result.stdout)
    assert table[0] == ["NAME", "NAMESPACE", "PHASE", "AGE"]
    assert ["mid", jobsets] in [r[:2] for r in table[1:]]
    refused = wmap.run("get", "jobset/mid", "-A")
    assert refused.code == 2


def test_wide_adds_pods_gpus_components_and_origin(wmap: Wmap, jobsets: str) -> None:
    result = wmap.run("get", "jobset/mid", "-o", "wide", namespace=jobsets)
    assert result.code == 0, result.stderr
    header, row = rows(result.stdout)
    assert header == ["NAME", "PHASE", "AGE", "PODS", "GPU", "COMPONENTS", "ORIGIN"]
    cells = dict(zip(header, row, strict=True))
    assert cells["PODS"] == "4" and cells["GPU"] == "16" and cells["ORIGIN"] == "catalog"
    # the tree's top-level rows: the JobSet's one replicatedJob merged with its component level (docs/cli.md)
    assert cells["COMPONENTS"] == "replicatedjob/workers(4)"


def test_a_missing_named_workload_is_exit_3(wmap: Wmap, jobsets: str) -> None:
    result = wmap.run("get", "jobset/absent", namespace=jobsets)
    assert result.code == 3
    assert result.stderr == f'error: JobSet "absent" not found in namespace {jobsets}\n'


def test_an_unknown_type_is_exit_4(wmap: Wmap) -> None:
    result = wmap.run("get", "nosuchtype")
    assert result.code == 4
    assert result.stderr.splitlines()[0] == 'error: no Karta definition covers "nosuchtype"'


def test_an_uninstalled_type_is_a_warning_when_listed_and_exit_3_when_named(wmap: Wmap, tmp_path: Path) -> None:
    definition = tmp_path / "widget.yaml"
    definition.write_text(widget_definition("a.wmap-e2e.example.com"))
    listed = wmap.run("get", "widgets", "--definitions", str(definition))
    assert listed.code == 0 and listed.stdout == ""
    assert listed.stderr == "warning: Widget is not installed in this cluster\n"
    named = wmap.run("get", "widget/w", "--definitions", str(definition))
    assert named.code == 3
    assert named.stderr == "error: Widget is not installed in this cluster\n"


def test_an_ambiguous_type_lists_tokens_that_resolve(wmap: Wmap, tmp_path: Path) -> None:
    for group in ("a.wmap-e2e.example.com", "b.wmap-e2e.example.com"):
        (tmp_path / f"{group}.yaml").write_text(widget_definition(group))
    flags = ["--definitions", str(tmp_path / "a.wmap-e2e.example.com.yaml")]
    flags += ["--definitions", str(tmp_path / "b.wmap-e2e.example.com.yaml")]
    result = wmap.run("get", "widget", *flags)
    assert result.code == 2
    assert result.stderr.splitlines()[0] == (
        'error: "widget" matches more than one Karta definition, retry with one of: '
        "widget.v1.a.wmap-e2e.example.com, widget.v1.b.wmap-e2e.example.com"
    )
    retry = wmap.run("get", "widget.v1.b.wmap-e2e.example.com", *flags)
    assert retry.code == 0 and "Widget is not installed" in retry.stderr


def test_a_forbidden_list_is_exit_1_naming_what_was_refused(api_server: ApiServer, wmap: Wmap, jobsets: str) -> None:
    assert api_server.restricted_kubeconfig is not None
    result = wmap.run("get", "pytorchjobs", namespace=jobsets, kubeconfig=api_server.restricted_kubeconfig)
    assert result.code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: not allowed to list pytorchjobs.kubeflow.org in namespace {jobsets} (as user wmap-restricted)"
    ]
    assert "No workloads found" not in result.stderr


def test_a_cluster_that_cannot_be_reached(wmap: Wmap) -> None:
    result = wmap.installed("get", "jobsets", "--server", "https://127.0.0.1:1")
    assert result.code == 1
    assert result.stderr.splitlines()[0] == (
        "error: cannot reach https://127.0.0.1:1: connection refused (check --context/--kubeconfig)"
    )


def test_rejected_credentials_are_exit_1(api_server: ApiServer, wmap: Wmap) -> None:
    result = wmap.run("get", "jobsets", "--token", "not-a-valid-token")
    assert result.code == 1
    assert "does not accept the credentials" in result.stderr and "401 Unauthorized" in result.stderr
    assert result.stderr.count("error:") == 1 and "warning:" not in result.stderr


# --- --all-types ---------------------------------------------------------------------------------------------------


@pytest.fixture
def mixed(api_server: ApiServer, make_namespace: Any) -> str:
    """A Deployment with its ReplicaSet and pod, a JobSet with a Job and pod, a CronJob with a Job, a bare Pod, and
    a Pod whose ReplicaSet was deleted."""
    namespace = make_namespace("wmap-live-all")
    web = create(api_server, deployment_body("web", replicas=1, labels={"team": "web"}), namespace=namespace)
    rs = create(api_server, replicaset_body(web, "abc12"), namespace=namespace)
    create_pod(api_server, namespace, "web-abc12-x", owner=rs, labels=rs["spec"]["template"]["metadata"]["labels"])
    jobset = create(api_server, jobset_body("train", replicas=1), namespace=namespace)
    job = create(
        api_server,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "train-workers-0", "ownerReferences": [owner_ref(jobset)]},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "b"}]}}},
        },
        namespace=namespace,
    )
    create_pod(api_server, namespace, "train-workers-0-0", owner=job)
    cron = create(
        api_server,
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "nightly"},
            "spec": {
                "schedule": "0 3 * * *",
                "jobTemplate": {
                    "spec": {
                        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "b"}]}}
                    }
                },
            },
        },
        namespace=namespace,
    )
    create(
        api_server,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "nightly-29000000", "ownerReferences": [owner_ref(cron)]},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "b"}]}}},
        },
        namespace=namespace,
    )
    create_pod(api_server, namespace, "debug-shell", labels={"team": "web"})
    # An owner kind no definition covers (ReplicaSets are covered since the catalog has a ReplicaSet definition).
    gone = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "old-rc", "uid": "0e1d2c3b-0000-4000-8000-00000000beef"},
    }
    create_pod(api_server, namespace, "old-rc-q", owner=gone)
    return namespace


def test_all_types_shows_only_top_level_workloads(api_server: ApiServer, wmap: Wmap, mixed: str) -> None:
    mark = api_server.audit_mark()
    result = wmap.run("get", "--all-types", namespace=mixed)
    assert result.code == 0, result.stderr
    table = rows(result.stdout)
    assert table[0] == ["NAME", "TYPE", "PHASE", "AGE"]
    found = {(r[0], r[1]) for r in table[1:]}
    assert found == {
        ("web", "Deployment"),
        ("train", "JobSet"),
        ("nightly", "CronJob"),
        ("debug-shell", "Pod"),
        ("old-rc-q", "Pod"),  # its owner is gone: nothing covers it any more
    }
    assert result.stderr == ""
    events = wmap_requests(api_server, mark)
    calls = summary(events)
    # by group and resource: batch's Jobs and Volcano's share the plural "jobs"
    lists = [(e["objectRef"].get("apiGroup", ""), e["objectRef"]["resource"]) for e in events if e["verb"] == "list"]
    assert len(lists) == len(set(lists)), "one LIST per type"
    assert ("", "replicationcontrollers") in lists  # the one uncovered owner kind, read once
    assert not [c for c in calls if c[0] == "get" and c[1] not in ("/api", "/apis")], calls


def test_all_types_filters_and_machine_output(wmap: Wmap, mixed: str) -> None:
    labelled = wmap.run("get", "--all-types", "-l", "team=web", namespace=mixed)
    assert {r[0] for r in rows(labelled.stdout)[1:]} == {"web", "debug-shell"}
    listed = wmap.json("get", "--all-types", namespace=mixed)
    kinds = {(i["name"], i["kind"], i["apiVersion"]) for i in listed["items"]}
    assert ("train", "JobSet", "jobset.x-k8s.io/v1alpha2") in kinds and listed["count"] == 5


def test_all_types_leaves_out_a_forbidden_type_with_a_warning(api_server: ApiServer, wmap: Wmap, mixed: str) -> None:
    # The restricted user may list everything here but pods.
    builtin = [("apps", "deployments"), ("apps", "replicasets"), ("apps", "statefulsets"), ("batch", "jobs")]
    grant(api_server, mixed, read_rules(*builtin, ("batch", "cronjobs")))
    grant(
        api_server,
        mixed,
        [
            {
                "apiGroups": [
                    "jobset.x-k8s.io",
                    "kubeflow.org",
                    "ray.io",
                    "leaderworkerset.x-k8s.io",
                    "serving.kserve.io",
                    "serving.knative.dev",
                    "nvidia.com",
                    "apps.nvidia.com",
                    "grove.io",
                    "milvus.io",
                    "agents.x-k8s.io",
                ],
                "resources": ["*"],
                "verbs": ["get", "list"],
            }
        ],
        name="wmap-e2e-crds",
    )
    assert api_server.restricted_kubeconfig is not None
    result = wmap.run("get", "--all-types", namespace=mixed, kubeconfig=api_server.restricted_kubeconfig)
    assert result.code == 0, result.stderr
    names = {r[0] for r in rows(result.stdout)[1:]}
    assert names == {"web", "train", "nightly"}
    assert (
        f"warning: not allowed to list Pod, so the result leaves it out (not allowed to list pods in namespace {mixed}"
        in result.stderr
    )


def test_get_as_the_installed_executable(wmap: Wmap, mixed: str) -> None:
    result = wmap.installed("get", "deployments", "-o", "json", namespace=mixed)
    assert result.code == 0, result.stderr
    assert [i["name"] for i in json.loads(result.stdout)["items"]] == ["web"]
