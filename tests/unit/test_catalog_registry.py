"""The built-in catalog and the definition registry: which definition a workload gets, and from where."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from msgspec.structs import replace

from workload_map.catalog import DefinitionRegistry, Resolved, builtin_definitions, builtin_registry
from workload_map.catalog import registry as registry_module
from workload_map.model import GVK, Karta, karta_from_dict

DEFINITIONS_DIR = Path(__file__).parents[2] / "src" / "workload_map" / "catalog" / "definitions"


def _slug(gvk: GVK) -> str:
    group = gvk.group.replace(".", "-") if gvk.group else "core"
    return f"{group}-{gvk.kind.lower()}-{gvk.version}"


def _karta(name: str, group: str | None, version: str = "v1", kind: str = "Widget") -> Karta:
    root: dict[str, object] = {"name": "root", "statusDefinition": {"statusMappings": {}}}
    if group is not None:
        root["kind"] = {"group": group, "version": version, "kind": kind}
    return karta_from_dict(
        {
            "apiVersion": "run.ai/v1alpha1",
            "kind": "Karta",
            "metadata": {"name": name},
            "spec": {"structureDefinition": {"rootComponent": root}},
        }
    )


# --- the built-in catalog ---------------------------------------------------------------------------------


def test_every_builtin_definition_has_one_root_gvk_and_no_two_share_one() -> None:
    definitions = builtin_definitions()
    gvks = [str(karta.root_gvk) for karta in definitions]
    assert all(karta.root_gvk is not None for karta in definitions)
    duplicates = sorted({gvk for gvk in gvks if gvks.count(gvk) > 1})
    assert duplicates == []


def test_builtin_definition_names_follow_the_slug_scheme_and_match_their_file() -> None:
    files = {path.stem for path in DEFINITIONS_DIR.glob("*.yaml")}
    names = {karta.name for karta in builtin_definitions()}
    assert names == files
    for karta in builtin_definitions():
        assert karta.root_gvk is not None
        assert karta.name == _slug(karta.root_gvk)


def test_builtin_definitions_describe_their_framework_and_sources_and_carry_no_status() -> None:
    for karta in builtin_definitions():
        annotations = karta.metadata.annotations or {}
        assert annotations.get("workloadmap.io/description"), karta.name
        assert annotations.get("workloadmap.io/sources"), karta.name
        assert karta.status is None


def test_the_types_of_this_part_of_the_catalog_are_built_in() -> None:
    registry = builtin_registry()
    expected = {
        ("", "v1", "Pod"): "core-pod-v1",
        ("apps", "v1", "Deployment"): "apps-deployment-v1",
        ("apps", "v1", "StatefulSet"): "apps-statefulset-v1",
        ("batch", "v1", "Job"): "batch-job-v1",
        ("batch", "v1", "CronJob"): "batch-cronjob-v1",
        ("jobset.x-k8s.io", "v1alpha2", "JobSet"): "jobset-x-k8s-io-jobset-v1alpha2",
        ("kubeflow.org", "v1", "PyTorchJob"): "kubeflow-org-pytorchjob-v1",
        ("kubeflow.org", "v2beta1", "MPIJob"): "kubeflow-org-mpijob-v2beta1",
        ("ray.io", "v1", "RayCluster"): "ray-io-raycluster-v1",
        ("ray.io", "v1", "RayJob"): "ray-io-rayjob-v1",
        ("ray.io", "v1", "RayService"): "ray-io-rayservice-v1",
        ("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"): "leaderworkerset-x-k8s-io-leaderworkerset-v1",
    }
    for (group, version, kind), name in expected.items():
        resolved = registry.for_gvk(group, version, kind)
        assert resolved is not None, (group, version, kind)
        assert (resolved.karta.name, resolved.origin, resolved.exact) == (name, "catalog", True)


def test_changing_a_returned_builtin_definition_does_not_change_the_next_one() -> None:
    first = builtin_definitions()
    with pytest.raises(AttributeError):
        first[0].metadata.name = "changed"  # type: ignore[misc]
    # A changed copy (the model is frozen) leaves the catalog alone.
    root = replace(first[0].root, name="changed")
    structure = replace(first[0].structure, root_component=root)
    first[0] = replace(
        first[0],
        metadata=replace(first[0].metadata, name="changed"),
        spec=replace(first[0].spec, structure_definition=structure),
    )
    assert (first[0].name, first[0].root.name) == ("changed", "changed")
    second = builtin_definitions()
    assert second[0].name != "changed"
    assert second[0].root.name != "changed"
    assert second == builtin_definitions()


def test_the_catalog_is_decoded_once_and_every_caller_gets_the_same_objects() -> None:
    first, second = builtin_definitions(), builtin_definitions()
    assert first is not second  # a new list each call: changing the list changes nothing else
    assert all(a is b for a, b in zip(first, second, strict=True))
    one = builtin_registry().for_gvk("kubeflow.org", "v1", "PyTorchJob")
    two = builtin_registry().for_gvk("kubeflow.org", "v1", "PyTorchJob")
    assert one is not None and two is not None
    assert one.karta is two.karta
    assert any(karta is one.karta for karta in first)


def test_a_renamed_copy_does_not_change_what_the_registry_returns() -> None:
    registry = builtin_registry()
    found = registry.for_gvk("kubeflow.org", "v1", "PyTorchJob")
    assert found is not None
    renamed = replace(found.karta, metadata=replace(found.karta.metadata, name="x"))
    assert renamed.name == "x"
    for fresh in (registry, builtin_registry()):
        again = fresh.for_gvk("kubeflow.org", "v1", "PyTorchJob")
        assert again is not None
        assert again.karta is found.karta
        assert again.karta.name == "kubeflow-org-pytorchjob-v1"
        assert fresh.by_name("x") is None


def test_threads_loading_the_catalog_at_once_get_the_same_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "_BUILTIN", None)  # as in a new process: nothing loaded yet
    barrier = threading.Barrier(8)

    def load() -> list[Karta]:
        barrier.wait()
        return builtin_definitions()

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: load(), range(8)))
    assert all(all(a is b for a, b in zip(results[0], other, strict=True)) for other in results)


def test_builtin_definitions_survive_a_dump_and_reload_unchanged() -> None:
    from workload_map.model import dump_yaml, loads_definitions

    definitions = builtin_definitions()
    assert loads_definitions(dump_yaml(definitions)) == definitions


def test_every_builtin_definition_validates_without_errors_or_warnings() -> None:
    validate_module = pytest.importorskip("workload_map.validation")
    if not hasattr(validate_module, "validate"):
        pytest.skip("workload_map.validation.validate is not written yet")
    for karta in builtin_definitions():
        findings = validate_module.validate(karta)
        assert [str(finding) for finding in findings] == [], karta.name


# --- precedence -------------------------------------------------------------------------------------------


def test_a_local_definition_replaces_a_cluster_one_which_replaces_the_builtin_one() -> None:
    catalog, cluster, local = _karta("c", "example.io"), _karta("b", "example.io"), _karta("a", "example.io")
    registry = DefinitionRegistry([("catalog", [catalog]), ("cluster", [cluster])])
    assert registry.for_gvk("example.io", "v1", "Widget") == Resolved(cluster, "cluster")
    registry.add("local", [local])
    assert registry.for_gvk("example.io", "v1", "Widget") == Resolved(local, "local")


def test_a_user_definition_for_pytorchjob_overrides_the_builtin_one() -> None:
    mine = _karta("my-pytorchjob", "kubeflow.org", "v1", "PyTorchJob")
    registry = builtin_registry()
    registry.add("local", [mine])
    resolved = registry.for_object({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"})
    assert resolved == Resolved(mine, "local")
    overridden = next(e for e in registry.all() if e.name == "kubeflow-org-pytorchjob-v1")
    assert not registry.is_effective(overridden)


def test_two_definitions_from_one_origin_for_one_gvk_warn_and_the_first_by_name_wins() -> None:
    zeta, alpha = _karta("zeta", "example.io"), _karta("alpha", "example.io")
    registry = DefinitionRegistry([("cluster", [zeta, alpha])])
    resolved = registry.for_gvk("example.io", "v1", "Widget")
    assert resolved is not None and resolved.karta.name == "alpha"
    assert len(registry.warnings) == 1
    assert "'alpha'" in registry.warnings[0] and "'zeta'" in registry.warnings[0]
    assert "example.io/v1/Widget" in registry.warnings[0]


def test_the_same_gvk_in_two_origins_is_an_override_not_a_collision() -> None:
    registry = DefinitionRegistry([("local", [_karta("a", "example.io")]), ("catalog", [_karta("b", "example.io")])])
    assert registry.warnings == []


def test_an_unknown_origin_is_refused_with_the_allowed_ones() -> None:
    registry = DefinitionRegistry()
    with pytest.raises(ValueError, match="local, cluster, catalog"):
        registry.add("remote", [])  # type: ignore[arg-type]


# --- lookups ----------------------------------------------------------------------------------------------


def test_an_object_of_another_version_gets_the_definition_of_its_group_and_kind() -> None:
    registry = builtin_registry()
    resolved = registry.for_object({"apiVersion": "jobset.x-k8s.io/v1alpha1", "kind": "JobSet"})
    assert resolved is not None
    assert (resolved.karta.name, resolved.exact) == ("jobset-x-k8s-io-jobset-v1alpha2", False)


def test_the_version_fallback_never_crosses_groups() -> None:
    registry = DefinitionRegistry([("catalog", [_karta("w", "example.io")])])
    assert registry.for_gvk("other.io", "v1", "Widget") is None
    assert registry.for_gvk("example.io", "v1", "Gadget") is None


def test_the_version_fallback_prefers_the_origin_then_the_newest_version() -> None:
    old, new = _karta("old", "example.io", "v1alpha1"), _karta("new", "example.io", "v1beta1")
    ga = _karta("ga", "example.io", "v1")
    registry = DefinitionRegistry([("catalog", [old, new, ga])])
    resolved = registry.for_gvk("example.io", "v2", "Widget")
    assert resolved == Resolved(ga, "catalog", exact=False)
    mine = _karta("mine", "example.io", "v1alpha1")
    registry.add("local", [mine])
    assert registry.for_gvk("example.io", "v2", "Widget") == Resolved(mine, "local", exact=False)


def test_a_core_pod_object_resolves_through_its_bare_api_version() -> None:
    resolved = builtin_registry().for_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    assert resolved is not None and resolved.karta.name == "core-pod-v1"


def test_an_object_without_api_version_or_kind_is_refused_with_a_hint() -> None:
    with pytest.raises(ValueError, match="apiVersion and kind"):
        builtin_registry().for_object({"metadata": {"name": "x"}})


def test_an_object_of_an_unknown_kind_has_no_definition() -> None:
    assert builtin_registry().for_object({"apiVersion": "example.io/v1", "kind": "Widget"}) is None


def test_kinds_are_found_ignoring_case_and_by_their_plural() -> None:
    registry = builtin_registry()
    for spelling in ("PyTorchJob", "pytorchjob", "pytorchjobs", "PYTORCHJOB"):
        assert [entry.name for entry in registry.by_kind(spelling)] == ["kubeflow-org-pytorchjob-v1"]
    assert [entry.name for entry in registry.by_kind("leaderworkersets")] == [
        "leaderworkerset-x-k8s-io-leaderworkerset-v1"
    ]
    assert registry.by_kind("job", group="batch")[0].name == "batch-job-v1"
    assert registry.by_kind("job", group="ray.io") == []


def test_a_kind_served_in_several_versions_lists_the_newest_first() -> None:
    registry = DefinitionRegistry(
        [("catalog", [_karta("old", "example.io", "v1alpha1"), _karta("ga", "example.io", "v1")])]
    )
    assert [entry.name for entry in registry.by_kind("widget")] == ["ga", "old"]


def test_names_resolve_local_first_then_cluster_then_catalog() -> None:
    catalog, cluster = _karta("shared", "example.io"), _karta("shared", "example.io", "v2")
    registry = DefinitionRegistry([("catalog", [catalog]), ("cluster", [cluster])])
    assert registry.by_name("shared") == Resolved(cluster, "cluster")
    local = _karta("shared", None)
    registry.add("local", [local])
    assert registry.by_name("shared") == Resolved(local, "local")
    assert registry.by_name("missing") is None


def test_the_listing_is_sorted_by_gvk_then_name_with_gvk_less_definitions_last() -> None:
    registry = DefinitionRegistry(
        [
            ("catalog", [_karta("b", "b.io"), _karta("no-gvk", None), _karta("a2", "a.io"), _karta("a1", "a.io")]),
            ("local", [_karta("a0", "a.io")]),
        ]
    )
    assert [(entry.name, entry.origin) for entry in registry.all()] == [
        ("a0", "local"),
        ("a1", "catalog"),
        ("a2", "catalog"),
        ("b", "catalog"),
        ("no-gvk", "catalog"),
    ]
    assert [entry.name for entry in registry.effective()] == ["a0", "b"]


def test_the_builtin_listing_is_in_gvk_order() -> None:
    gvks = [str(entry.gvk) for entry in builtin_registry().all()]
    assert gvks == sorted(gvks)
