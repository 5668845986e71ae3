"""What the server shows: the current view of every watched workload, and how the watch is doing (sans I/O).

The engine (`serve.engine`) writes it after each batch of changes; the metrics collector, the JSON API and the
live stream read it. Everything runs on one event loop, so readers see a batch applied whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from workload_map.catalog import DefinitionRegistry
from workload_map.view import WorkloadView

__all__ = ["Store", "WatchedType", "WorkloadKey"]

WorkloadKey = tuple[str, str, str]
"""(namespace, kind, name) of a workload, the kind as its definition spells it."""


@dataclass
class WatchedType:
    """One workload type the server lists and watches, and what became of it."""

    group: str
    version: str
    kind: str
    resource: str  # plural.group, as RBAC names it
    definition: str
    origin: str
    synced: bool = False
    error: str | None = None  # why it is not watched (a LIST RBAC refused), shown by /readyz and the definitions API


@dataclass
class Store:
    """The views by workload UID, and the watch's state: types watched, whether every informer has listed once,
    the warnings so far (the last 100), and the error that ended the watch (then /readyz fails)."""

    views: dict[str, WorkloadView] = field(default_factory=dict)
    types: list[WatchedType] = field(default_factory=list)
    pods_watched: bool = True
    synced: bool = False
    failure: str | None = None
    warnings: list[str] = field(default_factory=list)
    generation: int = 0  # bumped by every applied batch: a reader's cheap "did anything change"
    resolve_errors: dict[str, str] = field(default_factory=dict)  # UID -> why the workload has no view
    registry: DefinitionRegistry | None = None  # the definitions in force (the engine's; they may change)

    def put(self, uid: str, view: WorkloadView) -> None:
        self.views[uid] = view
        self.resolve_errors.pop(uid, None)

    def drop(self, uid: str) -> None:
        self.views.pop(uid, None)
        self.resolve_errors.pop(uid, None)

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        del self.warnings[:-100]

    def sorted_views(self) -> list[WorkloadView]:
        """Every view by (namespace, kind, name): the order of the API and of the metrics' cap."""
        return sorted(self.views.values(), key=key_of)

    def find(self, namespace: str, kind: str, name: str) -> WorkloadView | None:
        """The workload named so; `kind` is matched case-insensitively (`jobset` finds a JobSet)."""
        wanted = kind.lower()
        for view in self.views.values():
            if view.namespace == namespace and view.name == name and view.kind.lower() == wanted:
                return view
        return None

    def select(
        self,
        *,
        namespace: str | None = None,
        kind: str | None = None,
        phase: str | None = None,
        search: str | None = None,
    ) -> Iterator[WorkloadView]:
        """The views that pass every given filter (kind and phase case-insensitive; `search`: a case-insensitive
        part of the name), in `sorted_views` order."""
        kind_l = kind.lower() if kind else None
        phase_l = phase.lower() if phase else None
        search_l = search.lower() if search else None
        for view in self.sorted_views():
            if search_l and search_l not in view.name.lower():
                continue
            if namespace and view.namespace != namespace:
                continue
            if kind_l and view.kind.lower() != kind_l:
                continue
            if phase_l and view.phase.lower() != phase_l:
                continue
            yield view

    def not_synced(self) -> list[str]:
        """What has not listed yet (empty once the first full LIST of everything is in)."""
        return [] if self.synced else [t.kind for t in self.types if not t.synced and t.error is None]


def key_of(view: WorkloadView) -> WorkloadKey:
    return (view.namespace, view.kind, view.name)


def kinds(views: Iterable[WorkloadView]) -> set[str]:
    return {view.kind for view in views}
