"""Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules: a candidate takes the Lease when it
is free or its holder has not renewed it within `leaseDurationSeconds`; the leader renews it every retry period and
steps down when it could not renew within the renew deadline; on shutdown the leader releases it (holder cleared)
so the next one need not wait out the lease.

The Lease's resourceVersion guards each write: two candidates that race get one `Conflict`, and only the other
leads.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import logging
import time
from typing import Any

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.core import Operation
from workload_map.cluster.errors import ClusterError, Conflict, NotFound

__all__ = ["LeaderElector"]

log = logging.getLogger("workload_map.controller")
_JSON = "application/json"


def _micro_time() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(text: object) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class LeaderElector:
    """Campaigns for the Lease `namespace/name` as `identity`; `leading` is set while it holds it."""

    def __init__(
        self,
        client: AsyncApiClient,
        *,
        namespace: str,
        name: str,
        identity: str,
        lease_duration: float,
        renew_deadline: float,
        retry_period: float,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.leading = asyncio.Event()
        self.lost = asyncio.Event()
        self._op = Operation("update", "leases.coordination.k8s.io", namespace, name)

    @property
    def _path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    def _spec(self, previous: dict[str, Any] | None) -> dict[str, Any]:
        stamp = _micro_time()
        transitions = int((previous or {}).get("leaseTransitions") or 0)
        held_before = (previous or {}).get("holderIdentity") == self.identity
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, round(self.lease_duration)),
            "acquireTime": (previous or {}).get("acquireTime") if held_before else stamp,
            "renewTime": stamp,
            "leaseTransitions": transitions if held_before or previous is None else transitions + 1,
        }

    async def _put(self, lease: dict[str, Any]) -> None:
        await self.client.request("PUT", self._path, op=self._op, body=json.dumps(lease).encode(), content_type=_JSON)

    async def _try(self) -> bool:
        """One attempt to take or renew the Lease: True when this process holds it afterwards."""
        try:
            lease = await self.client.get(self._path, op=self._op)
        except NotFound:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(None),
            }
            try:
                await self.client.request(
                    "POST",
                    self._path.rpartition("/")[0],
                    op=self._op,
                    body=json.dumps(body).encode(),
                    content_type=_JSON,
                )
            except Conflict:
                return False  # another candidate created it first
            return True
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        if holder and holder != self.identity:
            renewed = _parse_time(spec.get("renewTime"))
            duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
            if renewed is not None and renewed + duration > time.time():
                return False  # held, and fresh
        lease["spec"] = self._spec(spec)
        try:
            await self._put(lease)
        except Conflict:
            return False
        return True

    async def run(self) -> None:
        """Campaign until leading, then renew until the Lease is lost (sets `lost` and returns) or cancelled."""
        while True:
            try:
                if await self._try():
                    break
            except ClusterError as exc:
                log.warning("leader election: %s", exc)
            await asyncio.sleep(self.retry_period)
        log.info("leader election: %s leads (Lease %s/%s)", self.identity, self.namespace, self.name)
        self.leading.set()
        last_renewal = time.monotonic()
        while True:
            await asyncio.sleep(self.retry_period)
            try:
                if await self._try():
                    last_renewal = time.monotonic()
                    continue
            except ClusterError as exc:
                log.warning("leader election: cannot renew: %s", exc)
            if time.monotonic() - last_renewal > self.renew_deadline:
                log.error("leader election: %s lost the Lease %s/%s", self.identity, self.namespace, self.name)
                self.leading.clear()
                self.lost.set()
                return

    async def release(self) -> None:
        """Clear the holder (when this process holds the Lease), so a successor takes it at once."""
        if not self.leading.is_set():
            return
        try:
            lease = await self.client.get(self._path, op=self._op)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            spec["holderIdentity"] = ""
            spec["leaseDurationSeconds"] = 1
            lease["spec"] = spec
            await self._put(lease)
            log.info("leader election: released the Lease %s/%s", self.namespace, self.name)
        except ClusterError as exc:
            log.warning("leader election: cannot release the Lease: %s", exc)
        finally:
            self.leading.clear()
