"""The JSON API's documents, built from the store (sans I/O; `serve.http` routes requests to them).

* `GET /api/v1/workloads?namespace=&kind=&phase=&q=&limit=&continue=`: `{"apiVersion": API_VERSION, "kind":
  "WorkloadList", "total": n, "continue": token|null, "namespaces", "kinds", "phases", "items": [view, ...]}`,
  each item the workload's view in its versioned schema (`workloadmap.io/view/v1`, docs/view.md), in (namespace,
  kind, name) order; `q` is a case-insensitive part of the name;
* `GET /api/v1/workloads/{namespace}/{kind}/{name}`: one view (kind case-insensitive);
* `GET /api/v1/definitions`: the definitions in force, and whether the server serves and we watch each type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from workload_map.catalog import DefinitionRegistry
from workload_map.errors import WorkloadMapError
from workload_map.serve.store import Store
from workload_map.view import WorkloadView

Allowed = Callable[[WorkloadView], bool]

__all__ = ["API_VERSION", "DEFAULT_LIMIT", "MAX_LIMIT", "RequestError", "definitions", "workload", "workloads"]

API_VERSION: Final = "workloadmap.io/api/v1"
DEFAULT_LIMIT: Final = 500
MAX_LIMIT: Final = 5000


class RequestError(WorkloadMapError):
    """A request the API answers with an error status: `status`, and a one-line `message`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def document(self) -> dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": "Status", "status": self.status, "message": self.message}


def _limit(query: Mapping[str, str]) -> int:
    raw = query.get("limit")
    if raw is None or raw == "":
        return DEFAULT_LIMIT
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise RequestError(400, f"limit must be a whole number from 1 to {MAX_LIMIT}, not {raw!r}")
    return int(raw)


def _offset(query: Mapping[str, str]) -> int:
    raw = query.get("continue") or "0"
    if not raw.isdigit():
        raise RequestError(400, f"continue must be a token from an earlier answer, not {raw!r}")
    return int(raw)


def workloads(store: Store, query: Mapping[str, str], allowed: Allowed | None = None) -> dict[str, Any]:
    """The workload list (see the module docstring), of the workloads `allowed` lets through (all without it);
    raises `RequestError` (400) for a bad limit or continue."""
    limit, offset = _limit(query), _offset(query)
    selected = [
        view
        for view in store.select(
            namespace=query.get("namespace"), kind=query.get("kind"), phase=query.get("phase"), search=query.get("q")
        )
        if allowed is None or allowed(view)
    ]
    views = [view for view in store.views.values() if allowed is None or allowed(view)]
    page = selected[offset : offset + limit]
    following = offset + limit if offset + limit < len(selected) else None
    return {
        "apiVersion": API_VERSION,
        "kind": "WorkloadList",
        "total": len(selected),
        "continue": str(following) if following is not None else None,
        # what the filters can choose from (over every workload, not this page): the dashboard's menus
        "namespaces": sorted({view.namespace for view in views}),
        "kinds": sorted({view.kind for view in views}),
        "phases": sorted({view.phase for view in views}),
        "items": [view.to_dict() for view in page],
    }


def workload(store: Store, namespace: str, kind: str, name: str, allowed: Allowed | None = None) -> dict[str, Any]:
    """One workload's view; raises `RequestError` (404) when the server does not hold it, or `allowed` hides it
    (the same answer: a user learns nothing of what they may not list)."""
    view = store.find(namespace, kind, name)
    if view is None or (allowed is not None and not allowed(view)):
        raise RequestError(404, f"no {kind} {name!r} in namespace {namespace!r} among the watched workloads")
    return view.to_dict()


def definitions(store: Store, registry: DefinitionRegistry) -> dict[str, Any]:
    """Each definition in force: its name, origin and root type, and whether the server watches that type."""
    watched = {(t.group, t.kind): t for t in store.types}
    items: list[dict[str, Any]] = []
    for entry in registry.effective():
        gvk = entry.gvk
        if gvk is None:
            continue
        target = watched.get((gvk.group, gvk.kind))
        items.append(
            {
                "name": entry.name,
                "origin": entry.origin,
                "group": gvk.group,
                "version": gvk.version,
                "kind": gvk.kind,
                "watched": target is not None and target.error is None and target.definition == entry.name,
                "servedVersion": target.version if target is not None else None,
                "error": target.error if target is not None else None,
            }
        )
    return {"apiVersion": API_VERSION, "kind": "DefinitionList", "items": items}


def readiness(store: Store) -> tuple[bool, dict[str, Any]]:
    """Ready once every informer has listed, and while the watch has not failed."""
    if store.failure is not None:
        return False, {"ready": False, "reason": store.failure}
    waiting = store.not_synced()
    if not store.synced:
        return False, {"ready": False, "reason": "the first LIST has not finished", "waiting": waiting}
    refused = [f"{t.kind}: {t.error}" for t in store.types if t.error is not None]
    return True, {
        "ready": True,
        "workloads": len(store.views),
        "notWatched": refused,
        "podsWatched": store.pods_watched,
    }
