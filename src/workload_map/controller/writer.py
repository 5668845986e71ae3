"""Every write the controller makes, in one place: create, replace, merge patch, delete and Events, each counted
in the metrics, and with `--dry-run` logged (one line naming the verb and the object) instead of sent.

The writes go through the cluster layer's `AsyncApiClient.request` (the same request records and errors as every
other call: `Conflict`, `NotFound`, `Forbidden`); the field manager is `workload-map-controller`.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
from collections.abc import Mapping
from typing import Any

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.core import MERGE_PATCH, Operation
from workload_map.cluster.errors import ClusterError, NotFound
from workload_map.controller.health import Metrics

__all__ = ["FIELD_MANAGER", "Writer", "now"]

FIELD_MANAGER = "workload-map-controller"
_JSON = "application/json"
_EVENT_MESSAGE_LIMIT = 1024

log = logging.getLogger("workload_map.controller")


def now() -> str:
    """The current time as Kubernetes writes it (RFC 3339, seconds, UTC)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _name(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    return f"{obj.get('kind', '?')} {namespace + '/' if namespace else ''}{metadata.get('name', '?')}"


class Writer:
    """Writes to the cluster (or, `dry_run`, log lines saying what would have been written)."""

    def __init__(self, client: AsyncApiClient, metrics: Metrics, *, dry_run: bool, component: str) -> None:
        self.client = client
        self.metrics = metrics
        self.dry_run = dry_run
        self.component = component

    async def _send(self, verb: str, method: str, path: str, what: str, kind: str, **kwargs: Any) -> dict[str, Any]:
        self.metrics.wrote(verb, kind)
        if self.dry_run:
            log.info("dry-run: would %s %s", verb, what)
            return {}
        params = {"fieldManager": FIELD_MANAGER} if method in ("POST", "PUT", "PATCH") else None
        answer = await self.client.request(method, path, op=Operation(verb, kind), params=params, **kwargs)
        log.info("%s %s", verb, what)
        return answer if isinstance(answer, dict) else {}

    async def create(self, collection: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        body = json.dumps(obj).encode()
        kind = str(obj.get("kind", ""))
        return await self._send("create", "POST", collection, _name(obj), kind, body=body, content_type=_JSON)

    async def replace(self, path: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """PUT (the object carries the resourceVersion it was read at: a change since is a `Conflict`)."""
        body = json.dumps(obj).encode()
        kind = str(obj.get("kind", ""))
        return await self._send("update", "PUT", path, _name(obj), kind, body=body, content_type=_JSON)

    async def merge_patch(self, path: str, patch: Mapping[str, Any], *, what: str, kind: str) -> dict[str, Any]:
        body = json.dumps(patch).encode()
        return await self._send(
            "patch",
            "PATCH",
            path,
            f"{what}: {json.dumps(patch, sort_keys=True)}",
            kind,
            body=body,
            content_type=MERGE_PATCH,
        )

    async def delete(self, path: str, *, what: str, kind: str) -> None:
        with contextlib.suppress(NotFound):  # gone already: what a delete wants
            await self._send("delete", "DELETE", path, what, kind)

    async def event(
        self,
        involved: Mapping[str, Any],
        *,
        reason: str,
        message: str,
        warning: bool = True,
        namespace: str | None = None,
    ) -> None:
        """A core/v1 Event about `involved` (a cluster-scoped object's Events go to `namespace`, default)."""
        metadata = involved.get("metadata") or {}
        ns = metadata.get("namespace") or namespace or "default"
        stamp = now()
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{metadata.get('name', 'object')}.", "namespace": ns},
            "involvedObject": {
                "apiVersion": involved.get("apiVersion"),
                "kind": involved.get("kind"),
                "name": metadata.get("name"),
                "uid": metadata.get("uid"),
                **({"namespace": metadata["namespace"]} if metadata.get("namespace") else {}),
                **({"resourceVersion": metadata["resourceVersion"]} if metadata.get("resourceVersion") else {}),
            },
            "reason": reason,
            "message": message[:_EVENT_MESSAGE_LIMIT],
            "type": "Warning" if warning else "Normal",
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        try:
            await self.create(f"/api/v1/namespaces/{ns}/events", event)
        except ClusterError as exc:  # an Event is advice: failing to write one never stops a reconcile
            log.warning("cannot write an Event about %s: %s", _name(involved), exc)
