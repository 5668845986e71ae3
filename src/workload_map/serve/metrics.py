"""`/metrics`: the watched workloads as Prometheus series, through prometheus_client's custom-collector interface
(docs/serve.md "Metrics" lists every series).

Per workload: an info series, its phase as a state set (one series per phase, 1 for the primary one), desired,
current and ready pods per component, what its spec requests per resource name (`nvidia.com/gpu`, each MIG
profile, `amd.com/gpu`, `google.com/tpu`, `cpu`, `memory`, ...) and what its pods bound to a node and not finished
hold; per attributed pod a join series (`wmap_pod_workload_info`) for DCGM-exporter's per-pod GPU metrics.

Cardinality is bounded: workloads are taken in (namespace, kind, name) order and a workload whose series would pass
`max_series` is left out whole (never half a workload); what was left out is counted in `wmap_series_dropped`
(this scrape) and `wmap_series_dropped_total` (since the start).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from fractions import Fraction

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.registry import Collector

from workload_map.resources.formula import is_gpu
from workload_map.serve.store import Store
from workload_map.view import PodView, WorkloadView

__all__ = ["DEFAULT_MAX_SERIES", "PHASES", "WorkloadCollector", "render"]

DEFAULT_MAX_SERIES = 100_000
PHASES = (
    "Initializing",
    "Running",
    "Degraded",
    "Resuming",
    "Suspending",
    "Suspended",
    "Completed",
    "Failed",
    "Undefined",
)
"""Every primary phase a view can have (docs/view.md "Phase"): the states of `wmap_workload_phase`."""

_WORKLOAD = ["namespace", "kind", "name"]
_FINISHED = frozenset({"Succeeded", "Failed"})


def unit_of(resource: str) -> str:
    """The unit a resource's amount is exported in (kube-state-metrics' words)."""
    if resource == "cpu":
        return "core"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return "byte"
    return "integer"


def holds(pod: PodView) -> bool:
    """A pod holds its requests once bound to a node and until it finishes (the scheduler's accounting)."""
    return pod.node is not None and pod.phase not in _FINISHED


class _Families:
    def __init__(self) -> None:
        self.info = InfoMetricFamily(
            "wmap_workload", "A watched workload (1 per workload).", labels=[*_WORKLOAD, "api_version", "definition"]
        )
        self.phase = GaugeMetricFamily(
            "wmap_workload_phase",
            "The workload's primary phase: 1 for it, 0 for the others.",
            labels=[*_WORKLOAD, "phase"],
        )
        component = [*_WORKLOAD, "component"]
        self.desired = GaugeMetricFamily(
            "wmap_workload_pods_desired", "Pods the spec asks for, per component.", labels=component
        )
        self.current = GaugeMetricFamily(
            "wmap_workload_pods_current", "Pods attributed to the workload, per component.", labels=component
        )
        self.ready = GaugeMetricFamily(
            "wmap_workload_pods_ready", "Attributed pods with Ready=True, per component.", labels=component
        )
        resource = [*_WORKLOAD, "resource", "unit"]
        self.requested = GaugeMetricFamily(
            "wmap_workload_resource_requests",
            "What the spec requests for all desired pods, per resource name (cores, bytes, devices).",
            labels=resource,
        )
        self.held = GaugeMetricFamily(
            "wmap_workload_resource_held",
            "What the workload's pods bound to a node and not finished request, per resource name.",
            labels=resource,
        )
        self.gpus = GaugeMetricFamily(
            "wmap_workload_gpus_requested",
            "Whole GPUs the spec requests (nvidia.com/gpu, amd.com/gpu).",
            labels=_WORKLOAD,
        )
        self.gpus_held = GaugeMetricFamily(
            "wmap_workload_gpus_held", "Whole GPUs held by the workload's bound, unfinished pods.", labels=_WORKLOAD
        )
        self.pod = GaugeMetricFamily(
            "wmap_pod_workload",
            "1 per attributed pod: joins per-pod series (DCGM-exporter's) to the workload.",
            labels=["namespace", "pod", "workload_kind", "workload_name", "component", "instance"],
        )

    def all(self) -> list[GaugeMetricFamily | InfoMetricFamily]:
        return [
            self.info,
            self.phase,
            self.desired,
            self.current,
            self.ready,
            self.requested,
            self.held,
            self.gpus,
            self.gpus_held,
            self.pod,
        ]


class _Series:
    """One workload's series, gathered before they are added so the cap can take or leave them whole."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, list[str], float | dict[str, str]]] = []

    def add(self, family: str, labels: list[str], value: float | dict[str, str]) -> None:
        self.rows.append((family, labels, value))


def workload_series(view: WorkloadView, gpu_names: tuple[str, ...] = ()) -> _Series:
    """Every series of one workload (see the module docstring)."""
    out = _Series()
    ident = [view.namespace, view.kind, view.name]
    out.add("info", ident, {"api_version": view.api_version, "definition": view.definition})
    for phase in PHASES:
        out.add("phase", [*ident, phase], 1.0 if view.phase == phase else 0.0)
    desired: Counter[str] = Counter()
    current: Counter[str] = Counter()
    ready: Counter[str] = Counter()
    pods: list[tuple[PodView, str, str]] = []
    for _, node in view.walk():
        # own_replicas counts this node's own pods; summed over the nodes of a component it is the component's
        own = node.own_replicas if node.children else node.replicas
        desired[node.component] += own.desired
        current[node.component] += own.current or 0
        ready[node.component] += own.ready or 0
        pods.extend((pod, node.component, node.instance or "") for pod in node.pods)
    pods.extend((pod, pod.component or "", "") for pod in view.unclaimed_pods)
    for component in sorted(desired):
        labels = [*ident, component]
        out.add("desired", labels, float(desired[component]))
        out.add("current", labels, float(current[component]))
        out.add("ready", labels, float(ready[component]))
    for name, amount in sorted(view.resources.requests.items()):
        out.add("requested", [*ident, name, unit_of(name)], float(amount))
    held: dict[str, Fraction] = {}
    for pod, _, _ in pods:
        if holds(pod):
            for name, amount in pod.resources.requests.items():
                held[name] = held.get(name, Fraction(0)) + amount
    for name, amount in sorted(held.items()):
        out.add("held", [*ident, name, unit_of(name)], float(amount))
    out.add("gpus", ident, float(view.resources.gpus))
    out.add("gpus_held", ident, float(_gpus(held, gpu_names)))
    for pod, component, instance in pods:
        out.add("pod", [pod.namespace or view.namespace, pod.name, view.kind, view.name, component, instance], 1.0)
    return out


def _gpus(requests: Mapping[str, Fraction], gpu_names: tuple[str, ...]) -> int:
    total = sum((amount for name, amount in requests.items() if is_gpu(name, gpu_names)), Fraction(0))
    return -((-total.numerator) // total.denominator)


class WorkloadCollector(Collector):
    """The store's workloads as metric families, at most `max_series` workload series per scrape."""

    def __init__(self, store: Store, *, max_series: int = DEFAULT_MAX_SERIES, gpu_names: tuple[str, ...] = ()) -> None:
        self.store = store
        self.max_series = max_series
        self.gpu_names = gpu_names
        self.dropped_total = 0

    def collect(self) -> Iterator[GaugeMetricFamily | InfoMetricFamily | CounterMetricFamily]:
        families = _Families()
        by_name: dict[str, GaugeMetricFamily | InfoMetricFamily] = {
            "info": families.info,
            "phase": families.phase,
            "desired": families.desired,
            "current": families.current,
            "ready": families.ready,
            "requested": families.requested,
            "held": families.held,
            "gpus": families.gpus,
            "gpus_held": families.gpus_held,
            "pod": families.pod,
        }
        used = dropped = dropped_workloads = 0
        counts: Counter[str] = Counter()
        for view in self.store.sorted_views():
            series = workload_series(view, self.gpu_names)
            if used + len(series.rows) > self.max_series:
                dropped += len(series.rows)
                dropped_workloads += 1
                continue
            used += len(series.rows)
            counts[view.kind] += 1
            for family, labels, value in series.rows:
                target = by_name[family]
                if isinstance(target, InfoMetricFamily):
                    assert isinstance(value, dict)
                    target.add_metric(labels, value)
                else:
                    assert not isinstance(value, dict)
                    target.add_metric(labels, value)
        self.dropped_total += dropped
        yield from families.all()
        yield from self._own(counts, used, dropped, dropped_workloads)

    def _own(
        self, counts: Counter[str], used: int, dropped: int, dropped_workloads: int
    ) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        workloads = GaugeMetricFamily("wmap_workloads", "Workloads exported, per kind.", labels=["kind"])
        for kind in sorted(counts):
            workloads.add_metric([kind], float(counts[kind]))
        yield workloads
        yield GaugeMetricFamily("wmap_series", "Workload series exported in this scrape.", value=float(used))
        yield GaugeMetricFamily(
            "wmap_series_limit", "The cap on workload series (--max-series).", value=float(self.max_series)
        )
        yield GaugeMetricFamily(
            "wmap_scrape_series_dropped", "Workload series left out of this scrape by the cap.", value=float(dropped)
        )
        yield GaugeMetricFamily(
            "wmap_scrape_workloads_dropped",
            "Workloads left out of this scrape by the cap.",
            value=float(dropped_workloads),
        )
        yield CounterMetricFamily(
            "wmap_series_dropped",
            "Workload series left out by the cap, over every scrape since the start.",
            value=float(self.dropped_total),
        )
        synced = GaugeMetricFamily("wmap_watch_synced", "1 once every informer has listed, 0 before.")
        synced.add_metric([], 1.0 if self.store.synced else 0.0)
        yield synced


def registry_for(collector: WorkloadCollector) -> CollectorRegistry:
    """A registry of our own (not the process-wide default, which also exports the Python process)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry


def render(registry: CollectorRegistry) -> bytes:
    """The text exposition format (version 0.0.4)."""
    return generate_latest(registry)
