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

import math
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from workload_map.resources.formula import is_gpu
from workload_map.serve.store import Store, key_of
from workload_map.view import PodView, WorkloadView

__all__ = ["DEFAULT_MAX_SERIES", "PHASES", "WorkloadCollector", "render", "workload_series"]

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
            labels=["namespace", "pod", "workload_kind", "workload_name", "component", "workload_instance"],
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
        out.add("desired", labels, _number(desired[component]))
        out.add("current", labels, _number(current[component]))
        out.add("ready", labels, _number(ready[component]))
    for name, amount in sorted(view.resources.requests.items()):
        out.add("requested", [*ident, name, unit_of(name)], _number(amount))
    held: dict[str, Fraction] = {}
    for pod, _, _ in pods:
        if holds(pod):
            for name, amount in pod.resources.requests.items():
                held[name] = held.get(name, Fraction(0)) + amount
    for name, amount in sorted(held.items()):
        out.add("held", [*ident, name, unit_of(name)], _number(amount))
    out.add("gpus", ident, _number(view.resources.gpus))
    out.add("gpus_held", ident, _number(_gpus(held, gpu_names)))
    for pod, component, instance in pods:
        out.add("pod", [pod.namespace or view.namespace, pod.name, view.kind, view.name, component, instance], 1.0)
    return out


def _number(value: Fraction | int) -> float:
    """A sample's value; an amount past a float's range (a pod template may ask for 10^400 of something) is +Inf,
    as Prometheus writes it, not a failed scrape."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _gpus(requests: Mapping[str, Fraction], gpu_names: tuple[str, ...]) -> int:
    total = sum((amount for name, amount in requests.items() if is_gpu(name, gpu_names)), Fraction(0))
    return -((-total.numerator) // total.denominator)


_ORDER = ("info", "phase", "desired", "current", "ready", "requested", "held", "gpus", "gpus_held", "pod")


class _Given(Collector):
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        yield from self.families


def _generate(families: list[Metric]) -> bytes:
    """prometheus_client's text exposition (0.0.4) of these families, in this order."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Given(families))
    return generate_latest(registry)


def _families(rows: Iterable[tuple[str, list[str], float | dict[str, str]]]) -> list[Metric]:
    families = _Families()
    by_key: dict[str, Metric] = dict(zip(_ORDER, families.all(), strict=True))
    for family, labels, value in rows:
        target = by_key[family]
        if isinstance(target, InfoMetricFamily):
            assert isinstance(value, dict)
            target.add_metric(labels, value)
        else:
            assert isinstance(target, GaugeMetricFamily) and not isinstance(value, dict)
            target.add_metric(labels, value)
    return list(families.all())


def _split(text: bytes) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The exposition of `_Families` cut per family: (HELP and TYPE lines, sample lines) by family key."""
    headers: dict[str, list[bytes]] = {key: [] for key in _ORDER}
    samples: dict[str, list[bytes]] = {key: [] for key in _ORDER}
    keys = iter(_ORDER)
    current = ""
    for line in text.splitlines(keepends=True):
        if line.startswith(b"# HELP "):
            current = next(keys)
            headers[current].append(line)
        elif line.startswith(b"#"):
            headers[current].append(line)
        else:
            samples[current].append(line)
    return {k: b"".join(v) for k, v in headers.items()}, {k: b"".join(v) for k, v in samples.items()}


@dataclass(frozen=True)
class _Rendered:
    """One workload's sample lines per family, rendered by prometheus_client once per view (views are replaced,
    never changed, so `view is` tells a cached rendering is current)."""

    view: WorkloadView
    lines: dict[str, bytes]
    count: int


class WorkloadCollector:
    """The store's workloads as the text exposition, at most `max_series` workload series per scrape.

    Each workload's lines are rendered by prometheus_client when its view changes and kept, so a scrape of 20,000
    unchanged workloads joins bytes instead of formatting 600,000 samples again. `render()` may run in a worker
    thread over a `snapshot()` taken on the loop (one render at a time)."""

    def __init__(self, store: Store, *, max_series: int = DEFAULT_MAX_SERIES, gpu_names: tuple[str, ...] = ()) -> None:
        self.store = store
        self.max_series = max_series
        self.gpu_names = gpu_names
        self.dropped_total = 0
        self._cache: dict[str, _Rendered] = {}
        self._lock = threading.Lock()
        self._headers, _ = _split(_generate(_families(())))

    def snapshot(self) -> list[tuple[str, WorkloadView]]:
        """The workloads in (namespace, kind, name) order: take it where the store is written (the loop)."""
        return sorted(self.store.views.items(), key=lambda item: key_of(item[1]))

    def _rendered(self, uid: str, view: WorkloadView) -> _Rendered:
        cached = self._cache.get(uid)
        if cached is not None and cached.view is view:
            return cached
        rows = workload_series(view, self.gpu_names).rows
        _, lines = _split(_generate(_families(rows)))
        return _Rendered(view, lines, len(rows))

    def render(self, views: list[tuple[str, WorkloadView]] | None = None) -> bytes:
        with self._lock:
            taken = self.snapshot() if views is None else views
            fresh: dict[str, _Rendered] = {}
            parts: dict[str, list[bytes]] = {key: [self._headers[key]] for key in _ORDER}
            used = dropped = dropped_workloads = 0
            counts: Counter[str] = Counter()
            for uid, view in taken:
                rendered = fresh[uid] = self._rendered(uid, view)
                if used + rendered.count > self.max_series:
                    dropped += rendered.count
                    dropped_workloads += 1
                    continue
                used += rendered.count
                counts[view.kind] += 1
                for key in _ORDER:
                    parts[key].append(rendered.lines[key])
            self._cache = fresh
            self.dropped_total += dropped
            own = _generate(list(self._own(counts, used, dropped, dropped_workloads)))
            return b"".join(b"".join(parts[key]) for key in _ORDER) + own

    def _own(self, counts: Counter[str], used: int, dropped: int, dropped_workloads: int) -> Iterator[Metric]:
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


def render(collector: WorkloadCollector) -> bytes:
    """The text exposition format (version 0.0.4) of the collector's store."""
    return collector.render()
