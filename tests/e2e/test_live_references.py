"""Cross-object references on the real API server (issue 25, docs/definitions.md "Cross-object references"): `wmap
describe trainjob/NAME` reads the ClusterTrainingRuntime or TrainingRuntime the TrainJob names with one GET, and
shows the runtime's replicated jobs with the TrainJob's trainer applied; a runtime that is missing or that the
user may not read is a warning naming it, and the TrainJob is still shown from what it says alone."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import ApiServer, expect
from .test_live_support import (
    Wmap,
    create,
    fixture_objects,
    grant,
    install_fixture,
    read_rules,
    summary,
    wmap_requests,
)

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("cluster_api")]  # every case: sync and async API

FIXTURE = "trainer-kubeflow-org-trainjob-v1alpha1"
REFERENCES = Path(__file__).resolve().parents[1] / "fixtures" / "references"
RUNTIMES = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"


def _node_names(view: dict[str, Any]) -> dict[str, Any]:
    """{instance: (desired, pods)} of the TrainJob's replicated jobs."""
    (jobset,) = view["components"]
    (replicated,) = jobset["children"]
    return {
        child["name"]: (child["replicas"]["desired"], sorted(p["name"] for p in child.get("pods", [])))
        for child in replicated.get("children", [])
    }


def test_describe_reads_the_cluster_runtime_once_and_shows_its_roles(
    api_server: ApiServer, wmap: Wmap, make_namespace: Any
) -> None:
    namespace = make_namespace("wmap-refs")
    stored = install_fixture(api_server, FIXTURE, namespace)  # TrainJob llama-ft, its JobSet, Job and 2 pods
    runtime_name = f"torch-{uuid.uuid4().hex[:8]}"
    with api_server.client() as kube:
        path = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs/llama-ft"
        patch = {"spec": {"runtimeRef": {"name": runtime_name}}}
        expect(kube.patch(path, json=patch, headers={"Content-Type": "application/merge-patch+json"}))

    missing = wmap.run("describe", "trainjob/llama-ft", "-o", "json", namespace=namespace)
    assert missing.code == 0, missing.stderr
    assert (
        f"warning: TrainJob/llama-ft: reference runtime: ClusterTrainingRuntime {runtime_name} was not found: "
        "its roles are not shown, only what the workload says"
    ) in missing.stderr
    assert _node_names(json.loads(missing.stdout)) == {
        "node": (2, ["llama-ft-node-0-0-7xk2p", "llama-ft-node-0-1-q9d4m"])
    }

    runtime = yaml.safe_load((REFERENCES / "torch-distributed.yaml").read_text())
    runtime["metadata"]["name"] = runtime_name
    create(api_server, runtime)
    try:
        mark = api_server.audit_mark()
        found = wmap.run("describe", "trainjob/llama-ft", "-o", "json", namespace=namespace)
        events = wmap_requests(api_server, mark)
        assert found.code == 0, found.stderr
        assert "reference runtime" not in found.stderr
        view = json.loads(found.stdout)
        assert _node_names(view) == {
            "dataset-initializer": (1, []),
            "node": (2, ["llama-ft-node-0-0-7xk2p", "llama-ft-node-0-1-q9d4m"]),
        }
        assert view["uid"] == stored["metadata"]["uid"]
        # one GET of the runtime (cluster-scoped), besides the workload's own reads
        assert summary(events).count(("get", "clustertrainingruntimes")) == 1

        text = wmap.run("describe", "trainjob/llama-ft", namespace=namespace)
        assert text.code == 0, text.stderr
        assert "|-- dataset-initializer" in text.stdout and "node" in text.stdout
    finally:
        with api_server.client() as kube:
            kube.delete(f"{RUNTIMES}/{runtime_name}")


def test_a_namespaced_runtime_and_one_the_user_may_not_read(
    api_server: ApiServer, wmap: Wmap, make_namespace: Any, tmp_path: Path
) -> None:
    namespace = make_namespace("wmap-refs")
    runtime = yaml.safe_load((REFERENCES / "deepspeed-distributed.yaml").read_text())
    create(api_server, runtime, namespace=namespace)
    trainjob = yaml.safe_load((REFERENCES / "deepspeed-trainjob.yaml").read_text())
    create(api_server, trainjob, namespace=namespace)

    admin = wmap.json("describe", "trainjob/ds-ft", namespace=namespace)
    assert _node_names(admin) == {"launcher": (1, []), "node": (3, [])}  # MPI, the launcher as a node: 4 - 1
    assert admin["resources"]["gpus"] == 32

    # the restricted user may read the TrainJob and the pods, not the runtime: a warning, the TrainJob alone
    grant(api_server, namespace, read_rules(("trainer.kubeflow.org", "trainjobs"), ("", "pods")))
    assert api_server.restricted_kubeconfig is not None
    refused = wmap.run(
        "describe", "trainjob/ds-ft", "-o", "json", namespace=namespace, kubeconfig=api_server.restricted_kubeconfig
    )
    assert refused.code == 0, refused.stderr
    assert (
        f"warning: TrainJob/ds-ft: reference runtime: TrainingRuntime deepspeed-distributed in namespace {namespace} "
        f"could not be read: not allowed to get trainingruntimes.trainer.kubeflow.org deepspeed-distributed in "
        f"namespace {namespace} (as user wmap-restricted)"
    ) in refused.stderr
    assert _node_names(json.loads(refused.stdout)) == {"node": (4, [])}

    # --with gives the runtime instead: no GET of it, and the roles are shown to the same user
    given = tmp_path / "runtime.yaml"
    with_namespace = copy.deepcopy(runtime)
    with_namespace["metadata"]["namespace"] = namespace
    given.write_text(yaml.safe_dump(with_namespace))
    mark = api_server.audit_mark()
    supplied = wmap.run(
        "describe",
        "trainjob/ds-ft",
        "--with",
        str(given),
        "-o",
        "json",
        namespace=namespace,
        kubeconfig=api_server.restricted_kubeconfig,
    )
    assert supplied.code == 0, supplied.stderr
    assert "reference runtime" not in supplied.stderr
    assert _node_names(json.loads(supplied.stdout)) == {"launcher": (1, []), "node": (3, [])}
    assert ("get", "trainingruntimes") not in summary(wmap_requests(api_server, mark))


def test_the_live_view_with_the_runtime_equals_the_offline_view_with_it(
    api_server: ApiServer, wmap: Wmap, make_namespace: Any, tmp_path: Path
) -> None:
    """`describe -f TRAINJOB --with RUNTIME` and the live describe of the same objects show the same roles."""
    namespace = make_namespace("wmap-refs")
    workload, _, _ = fixture_objects(FIXTURE)
    runtime = yaml.safe_load((REFERENCES / "torch-distributed.yaml").read_text())
    runtime_name = f"torch-{uuid.uuid4().hex[:8]}"
    runtime["metadata"]["name"] = runtime_name
    workload = copy.deepcopy(workload)
    workload["spec"]["runtimeRef"]["name"] = runtime_name
    create(api_server, runtime)
    try:
        create(api_server, {k: v for k, v in workload.items() if k != "status"}, namespace=namespace)
        live = wmap.json("describe", "trainjob/llama-ft", namespace=namespace)
        files = tmp_path / "both.yaml"
        files.write_text(yaml.safe_dump_all([workload, runtime]))
        offline = wmap.json("describe", "-f", str(files))
        shape = [_node_names(live), live["resources"]]
        assert shape == [_node_names(offline["items"][0]), offline["items"][0]["resources"]]
    finally:
        with api_server.client() as kube:
            kube.delete(f"{RUNTIMES}/{runtime_name}")


def test_a_reference_name_that_is_not_an_object_name_is_never_sent(
    api_server: ApiServer, wmap: Wmap, make_namespace: Any
) -> None:
    """The runtime's name comes from the TrainJob (anyone who may create one writes it): only a Kubernetes object
    name goes into a request path."""
    namespace = make_namespace("wmap-refs")
    trainjob = yaml.safe_load((REFERENCES / "deepspeed-trainjob.yaml").read_text())
    trainjob["spec"]["runtimeRef"] = {"name": "../../../api/v1/namespaces/kube-system/secrets/x"}
    create(api_server, trainjob, namespace=namespace)
    mark = api_server.audit_mark()
    result = wmap.run("describe", "trainjob/ds-ft", "-o", "json", namespace=namespace)
    assert result.code == 0, result.stderr
    assert "its name is not a Kubernetes object name" in result.stderr
    assert not [call for call in summary(wmap_requests(api_server, mark)) if "secrets" in call[1]]
    assert _node_names(json.loads(result.stdout)) == {"node": (4, [])}
