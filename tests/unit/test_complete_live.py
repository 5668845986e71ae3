"""The pure parts of TYPE/NAME completion (`cli.complete_live`); the cluster parts are in
tests/e2e/test_live_completion.py."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
from click.shell_completion import CompletionItem

from workload_map.catalog import DefinitionRegistry, builtin_definitions, builtin_registry
from workload_map.cli.complete_live import complete, connection_from_params, covered_types
from workload_map.cli.options import ConnectionOptions
from workload_map.cluster.discovery import APIResource, DiscoveryDocument
from workload_map.model import GVK, Karta


def _resource(
    group: str, version: str, kind: str, plural: str, verbs: tuple[str, ...] = ("get", "list")
) -> APIResource:
    return APIResource(group, version, kind, plural, kind.lower(), True, verbs)


def test_covered_types_one_word_per_served_covered_resource() -> None:
    document = DiscoveryDocument(
        [
            _resource("apps", "v1", "Deployment", "deployments"),
            _resource("", "v1", "ConfigMap", "configmaps"),  # no definition covers it
            _resource("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs"),
            _resource("serving.knative.dev", "v1", "Service", "services"),
            _resource("", "v1", "Service", "services"),  # the core Service: not covered
            _resource("jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets", verbs=("get",)),  # cannot be listed
        ],
        {
            "apps": ["v1"],
            "": ["v1"],
            "kubeflow.org": ["v1"],
            "serving.knative.dev": ["v1"],
            "jobset.x-k8s.io": ["v1alpha2"],
        },
    )
    words = covered_types(document, builtin_registry())
    assert words == [
        ("deployments", "Deployment (apps/v1)"),
        ("pytorchjobs", "PyTorchJob (kubeflow.org/v1)"),
        ("services", "Service (serving.knative.dev/v1)"),
    ]


def _moved(karta: Karta, group: str) -> Karta:
    """The same definition for the same kind in another group."""
    structure = karta.spec.structure_definition
    root = structure.root_component
    assert root.kind is not None
    moved_root = msgspec.structs.replace(root, kind=GVK(group=group, version=root.kind.version, kind=root.kind.kind))
    spec = msgspec.structs.replace(
        karta.spec, structure_definition=msgspec.structs.replace(structure, root_component=moved_root)
    )
    return msgspec.structs.replace(karta, spec=spec)


def test_a_plural_two_covered_groups_serve_is_qualified() -> None:
    deployment = next(k for k in builtin_definitions() if k.root_gvk is not None and k.root_gvk.kind == "Deployment")
    registry = DefinitionRegistry()
    registry.add("local", [_moved(deployment, "example.com")])
    registry.add("catalog", builtin_definitions())
    document = DiscoveryDocument(
        [
            _resource("apps", "v1", "Deployment", "deployments"),
            _resource("example.com", "v1", "Deployment", "deployments"),
            _resource("kubeflow.org", "v1", "PyTorchJob", "pytorchjobs"),
            _resource("kubeflow.org", "v2", "PyTorchJob", "pytorchjobs"),  # two versions of one group: one word
        ],
        {"apps": ["v1"], "example.com": ["v1"], "kubeflow.org": ["v2", "v1"]},
    )
    assert covered_types(document, registry) == [
        ("deployments.apps", "Deployment (apps/v1)"),
        ("deployments.example.com", "Deployment (example.com/v1)"),
        ("pytorchjobs", "PyTorchJob (kubeflow.org/v2)"),
    ]


def test_connection_from_params() -> None:
    params: Mapping[str, Any] = {
        "conn_kubeconfig": "/k",
        "conn_namespace": "ml",
        "conn_contexts": ("a", "b"),
        "conn_all_contexts": False,
        "conn_impersonate_groups": ["g1"],
        "args": ("jobsets",),
    }
    connection = connection_from_params(params)
    assert connection == ConnectionOptions(
        kubeconfig="/k", namespace="ml", context="a", impersonate_groups=("g1",), all_contexts=False
    )
    assert connection_from_params({"conn_context": "prod"}).context == "prod"


def test_complete_is_silent_on_failure_and_gives_up_when_late() -> None:
    def failing(args: Sequence[str], incomplete: str, params: Mapping[str, Any]) -> list[CompletionItem]:
        raise RuntimeError("boom")

    assert complete([], "x", {}, run=failing) == []
    release = threading.Event()

    def late(args: Sequence[str], incomplete: str, params: Mapping[str, Any]) -> list[CompletionItem]:
        release.wait(10)
        return [CompletionItem("too-late")]

    try:
        assert complete([], "x", {}, budget=0.05, run=late) == []
    finally:
        release.set()

    def fine(args: Sequence[str], incomplete: str, params: Mapping[str, Any]) -> list[CompletionItem]:
        return [CompletionItem(f"{incomplete}-{len(args)}")]

    assert [item.value for item in complete(["a"], "x", {}, run=fine)] == ["x-1"]
