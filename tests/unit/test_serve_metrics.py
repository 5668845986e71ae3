"""`/metrics` and the JSON API of `wmap serve` over views of the catalog fixtures (tests/fixtures/catalog: a
mid-run workload with its pods and owners), parsed back with prometheus_client's text parser.

Test design: every expected number is derived here from the view or the fixture's pods (never from the metrics
code): GPUs and requests from `view.resources`, held resources from the pods bound to a node and not finished, the
pod join from the tree. The cap is checked by counting what a small `max_series` leaves out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from workload_map.catalog.registry import builtin_registry
from workload_map.pods import attribute
from workload_map.resolve import Workload
from workload_map.resources import parse_quantity
from workload_map.serve import api
from workload_map.serve.metrics import PHASES, WorkloadCollector, render, workload_series
from workload_map.serve.store import Store
from workload_map.view import Resources, WorkloadView, build_view

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "catalog"
NAMES = sorted(path.name for path in FIXTURES.iterdir() if path.is_dir())


def _items(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return list(yaml.safe_load(path.read_text())["items"])


def fixture_view(name: str, *, drop_last_pod: bool = False) -> tuple[WorkloadView, list[dict[str, Any]]]:
    """The fixture's live view (without its last pod, with `drop_last_pod`), and the pods it was built from."""
    folder = FIXTURES / name
    obj = yaml.safe_load((folder / "workload.yaml").read_text())
    pods = _items(folder / "pods.yaml")
    if drop_last_pod:
        pods = pods[:-1]
    resolved = builtin_registry().for_object(obj)
    assert resolved is not None
    resolution = Workload(resolved.karta, obj).resolve()
    view = build_view(resolution, attribute(resolution, pods, _items(folder / "owners.yaml")), origin=resolved.origin)
    return view, pods


def scrape(store: Store, **kwargs: Any) -> list[Sample]:
    text = render(WorkloadCollector(store, **kwargs)).decode()
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def values(samples: Iterable[Sample], metric: str, /, **labels: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {
        tuple(sorted(s.labels.items())): s.value
        for s in samples
        if s.name == metric and all(s.labels.get(k) == v for k, v in labels.items())
    }


def one(samples: Iterable[Sample], metric: str, /, **labels: str) -> float:
    found = values(samples, metric, **labels)
    assert len(found) == 1, (metric, labels, found)
    return next(iter(found.values()))


WORKLOAD_SERIES = {
    "wmap_workload_info",
    "wmap_workload_phase",
    "wmap_workload_pods_desired",
    "wmap_workload_pods_current",
    "wmap_workload_pods_ready",
    "wmap_workload_resource_requests",
    "wmap_workload_resource_held",
    "wmap_workload_gpus_requested",
    "wmap_workload_gpus_held",
    "wmap_pod_workload",
}


def ident_of(sample: Sample) -> tuple[str | None, str | None, str | None]:
    labels = sample.labels
    if sample.name == "wmap_pod_workload":
        return labels["namespace"], labels["workload_kind"], labels["workload_name"]
    return labels.get("namespace"), labels.get("kind"), labels.get("name")


def store_of(*views: WorkloadView) -> Store:
    store = Store(synced=True)
    for view in views:
        store.put(view.uid or f"{view.namespace}/{view.name}", view)
    return store


def test_pytorchjob_gpus_requests_pods_and_phase() -> None:
    view, pods = fixture_view("kubeflow-org-pytorchjob-v1")
    samples = scrape(store_of(view))
    ident = {"namespace": view.namespace, "kind": "PyTorchJob", "name": view.name}
    assert view.resources.gpus == 10  # the fixture: 1 master + 4 workers, 2 GPUs each
    assert one(samples, "wmap_workload_gpus_requested", **ident) == 10
    assert one(samples, "wmap_workload_resource_requests", resource="nvidia.com/gpu", **ident) == 10
    assert one(samples, "wmap_workload_info", **ident) == 1
    assert values(samples, "wmap_workload_info", **ident).keys() == {
        tuple(sorted({**ident, "api_version": "kubeflow.org/v1", "definition": "kubeflow-org-pytorchjob-v1"}.items()))
    }
    phases = values(samples, "wmap_workload_phase", **ident)
    assert len(phases) == len(PHASES)
    assert {dict(k)["phase"]: v for k, v in phases.items() if v == 1} == {view.phase: 1}
    for component in ("master", "worker"):
        node = view.find(component)
        assert node is not None
        assert one(samples, "wmap_workload_pods_desired", component=component, **ident) == node.replicas.desired
        assert one(samples, "wmap_workload_pods_current", component=component, **ident) == node.replicas.current
        assert one(samples, "wmap_workload_pods_ready", component=component, **ident) == node.replicas.ready
    # held: what the fixture's pods bound to a node and not finished request, summed from the pod specs
    held: dict[str, Fraction] = {}
    for pod in pods:
        if pod["spec"].get("nodeName") and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
            for container in pod["spec"]["containers"]:
                requests = {**container.get("resources", {}).get("limits", {})}
                requests.update(container.get("resources", {}).get("requests", {}))
                for name, amount in requests.items():
                    held[name] = held.get(name, Fraction(0)) + parse_quantity(amount)
    assert held, "the fixture has running pods"
    got = values(samples, "wmap_workload_resource_held", **ident)
    assert {dict(k)["resource"]: v for k, v in got.items()} == {k: float(v) for k, v in held.items()}
    assert one(samples, "wmap_workload_gpus_held", **ident) == float(held.get("nvidia.com/gpu", 0))


def test_pod_join_names_every_attributed_pod_with_its_component() -> None:
    view, _ = fixture_view("jobset-x-k8s-io-jobset-v1alpha2")
    samples = scrape(store_of(view))
    joined = {
        (dict(k)["pod"], dict(k)["component"], dict(k)["workload_instance"])
        for k in values(samples, "wmap_pod_workload", workload_kind="JobSet", workload_name=view.name)
    }
    expected = {(pod.name, node.component, node.instance or "") for _, node in view.walk() for pod in node.pods}
    expected |= {(pod.name, pod.component or "", "") for pod in view.unclaimed_pods}
    assert expected and joined == expected
    assert all(dict(k)["namespace"] == view.namespace for k in values(samples, "wmap_pod_workload"))


@pytest.mark.parametrize("name", NAMES)
def test_every_catalog_fixture_adds_up(name: str) -> None:
    """Per component desired/current sum to the workload's; requests equal the view's, for every definition."""
    view, _ = fixture_view(name)
    samples = scrape(store_of(view))
    ident = {"namespace": view.namespace, "kind": view.kind, "name": view.name}
    assert sum(values(samples, "wmap_workload_pods_desired", **ident).values()) == view.replicas.desired
    assert sum(values(samples, "wmap_workload_pods_current", **ident).values()) == view.replicas.current
    requests = values(samples, "wmap_workload_resource_requests", **ident)
    assert {dict(k)["resource"]: v for k, v in requests.items()} == {
        k: float(v) for k, v in view.resources.requests.items()
    }
    assert len(values(samples, "wmap_pod_workload", workload_name=view.name)) == len(view.pods) + len(
        view.unclaimed_pods
    )


def test_the_cap_leaves_out_whole_workloads_and_counts_them() -> None:
    views = [fixture_view(name)[0] for name in NAMES]
    sizes = [len(workload_series(view).rows) for view in sorted(views, key=lambda v: (v.namespace, v.kind, v.name))]
    cap = sizes[0] + sizes[1] + 1  # the first two fit, the third does not (each has more than one series)
    store = store_of(*views)
    collector = WorkloadCollector(store, max_series=cap)
    text = collector.render().decode()
    samples = [s for family in text_string_to_metric_families(text) for s in family.samples]
    kept = [s for s in samples if s.name in WORKLOAD_SERIES]
    assert len(kept) <= cap
    assert one(samples, "wmap_series") == len(kept)
    # the third workload did not fit, smaller later ones may have: every workload is in whole or not at all
    for view in views:
        ident = (view.namespace, view.kind, view.name)
        series = [s for s in kept if ident_of(s) == ident]
        assert len(series) in (0, len(workload_series(view).rows)), ident
    exported = {ident_of(s) for s in kept}
    dropped = sum(len(workload_series(v).rows) for v in views) - one(samples, "wmap_series")
    assert dropped > 0
    assert one(samples, "wmap_scrape_series_dropped") == dropped
    assert one(samples, "wmap_scrape_workloads_dropped") == len(views) - len(exported)
    assert one(samples, "wmap_series_dropped_total") == dropped
    collector.render()  # a second scrape adds to the total, not to the scrape's own figure
    assert collector.dropped_total == 2 * dropped


def test_api_filters_pages_and_finds() -> None:
    views = [fixture_view(name)[0] for name in NAMES]
    store = store_of(*views)
    everything = api.workloads(store, {})
    assert everything["total"] == len(views) and everything["continue"] is None
    assert [item["schemaVersion"] for item in everything["items"]] == ["workloadmap.io/view/v1"] * len(views)
    jobs = api.workloads(store, {"kind": "pytorchjob"})
    assert [item["kind"] for item in jobs["items"]] == ["PyTorchJob"]
    running = api.workloads(store, {"phase": "running"})
    assert {item["name"] for item in running["items"]} == {v.name for v in views if v.phase == "Running"}
    first = api.workloads(store, {"limit": "2"})
    second = api.workloads(store, {"limit": "2", "continue": first["continue"]})
    assert len(first["items"]) == 2 and first["continue"] == "2"
    assert [i["name"] for i in first["items"] + second["items"]] == [i["name"] for i in everything["items"][:4]]
    view = views[0]
    assert api.workload(store, view.namespace, view.kind.lower(), view.name) == view.to_dict()
    with pytest.raises(api.RequestError) as missing:
        api.workload(store, "nowhere", "JobSet", "absent")
    assert missing.value.status == 404
    with pytest.raises(api.RequestError) as bad:
        api.workloads(store, {"limit": "0"})
    assert bad.value.status == 400 and "limit" in bad.value.message


def test_readiness() -> None:
    store = Store()
    assert api.readiness(store)[0] is False
    store.synced = True
    assert api.readiness(store) == (True, {"ready": True, "workloads": 0, "notWatched": [], "podsWatched": True})
    store.failure = "cannot list any covered workload type: not allowed"
    assert api.readiness(store) == (False, {"ready": False, "reason": store.failure})


def test_a_cached_rendering_is_what_a_fresh_one_says() -> None:
    """Each workload's lines are kept between scrapes: after a view is replaced (and one removed), the next scrape
    equals the scrape of a collector that never saw the old views."""
    views = [fixture_view(name)[0] for name in NAMES]
    store = store_of(*views)
    collector = WorkloadCollector(store)
    first = collector.render()
    assert collector.render() == first
    uid, view = next(iter(store.views.items()))
    store.put(uid, msgspec.structs.replace(view, phase="Failed"))
    store.drop(list(store.views)[-1])
    again = collector.render()
    assert again != first
    assert again == WorkloadCollector(store).render()
    assert b'phase="Failed"} 1.0' in again


def test_an_amount_past_a_float_is_inf_not_a_failed_scrape() -> None:
    """A pod template may ask for 10^400 of something (a CRD's schema need not bound it): the scrape still works."""
    view, _ = fixture_view("kubeflow-org-pytorchjob-v1")
    huge = Resources.of({"nvidia.com/gpu": Fraction(10**400), "cpu": Fraction(1)})
    store = store_of(msgspec.structs.replace(view, resources=huge))
    samples = scrape(store)
    ident = {"namespace": view.namespace, "kind": view.kind, "name": view.name}
    assert one(samples, "wmap_workload_gpus_requested", **ident) == math.inf
    assert one(samples, "wmap_workload_resource_requests", resource="nvidia.com/gpu", **ident) == math.inf
    assert one(samples, "wmap_workload_resource_requests", resource="cpu", **ident) == 1
