"""Per-user access (`wmap serve --user-tokens`): each request's bearer token is checked by the API server
(TokenReview), and a user sees a workload only when they may list its type in its namespace (SubjectAccessReview:
`list` on the type's resource there). Both answers are cached for `ttl` seconds (60 at most), by a hash of the
token and by (user, namespace, group, resource); the server's own credentials need `create` on tokenreviews and
subjectaccessreviews (the `system:auth-delegator` ClusterRole).

Where the token comes from, in order: `Authorization: Bearer ...`, an auth proxy's `X-Forwarded-Access-Token`,
the `wmap_token` HttpOnly cookie (set by `POST /api/v1/session` with `{"token": "..."}`).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.errors import ClusterError
from workload_map.errors import WorkloadMapError
from workload_map.serve.store import WatchedType
from workload_map.view import WorkloadView

__all__ = ["COOKIE", "MAX_TTL", "Access", "User"]

COOKIE = "wmap_token"
MAX_TTL = 60.0
_JSON = "application/json"


@dataclass(frozen=True)
class User:
    name: str
    uid: str
    groups: tuple[str, ...]
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


class Access:
    """TokenReview and SubjectAccessReview through the server's client, cached (see the module docstring)."""

    def __init__(
        self, client: AsyncApiClient, *, ttl: float = MAX_TTL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.client = client
        self.ttl = min(ttl, MAX_TTL)
        self.clock = clock
        self._users: dict[str, tuple[float, User | None]] = {}
        self._decisions: dict[tuple[str, str, str, str], tuple[float, bool]] = {}
        self.reviews = 0  # requests sent: TokenReviews and SubjectAccessReviews

    async def user(self, token: str) -> User | None:
        """Who the token is, or None when the API server does not authenticate it."""
        key = hashlib.sha256(token.encode()).hexdigest()
        now = self.clock()
        cached = self._users.get(key)
        if cached is not None and now - cached[0] < self.ttl:
            return cached[1]
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        answer = await self._post("/apis/authentication.k8s.io/v1/tokenreviews", review)
        status = answer.get("status") or {}
        found: User | None = None
        if status.get("authenticated") is True:
            info = status.get("user") or {}
            extra = info.get("extra") or {}
            found = User(
                str(info.get("username") or ""),
                str(info.get("uid") or ""),
                tuple(str(g) for g in info.get("groups") or ()),
                tuple(sorted((str(k), tuple(str(x) for x in v)) for k, v in extra.items())),
            )
        self._users[key] = (now, found)
        return found

    async def may_list(self, user: User, namespace: str, group: str, resource: str) -> bool:
        attributes = {"namespace": namespace, "verb": "list", "group": group, "resource": resource}
        return await self._review(user, (user.name, namespace, group, resource), {"resourceAttributes": attributes})

    async def may_get_path(self, user: User, path: str) -> bool:
        """May the user GET this non-resource path (what kube-rbac-proxy asks of a /metrics scraper)."""
        attributes = {"path": path, "verb": "get"}
        return await self._review(user, (user.name, "", "nonResource", path), {"nonResourceAttributes": attributes})

    async def _review(self, user: User, key: tuple[str, str, str, str], attributes: dict[str, Any]) -> bool:
        """One SubjectAccessReview for the user, its answer cached for `ttl` under `key`."""
        now = self.clock()
        cached = self._decisions.get(key)
        if cached is not None and now - cached[0] < self.ttl:
            return cached[1]
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user.name,
                "uid": user.uid,
                "groups": list(user.groups),
                "extra": {k: list(v) for k, v in user.extra},
                **attributes,
            },
        }
        answer = await self._post("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
        allowed = (answer.get("status") or {}).get("allowed") is True
        self._decisions[key] = (now, allowed)
        return allowed

    async def visible(self, user: User, views: Iterable[WorkloadView], types: Iterable[WatchedType]) -> set[str]:
        """The (namespace, kind) pairs among `views` the user may list, as `namespace/kind` strings."""
        resource_of = {(t.group, t.kind): t.resource.partition(".")[0] for t in types}
        pairs = sorted({(v.namespace, v.api_version.rpartition("/")[0], v.kind) for v in views})
        decisions = await asyncio.gather(
            *(self.may_list(user, ns, group, resource_of.get((group, kind), "")) for ns, group, kind in pairs)
        )
        return {f"{ns}/{kind}" for (ns, _, kind), allowed in zip(pairs, decisions, strict=True) if allowed}

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.reviews += 1
        try:
            answer = await self.client.request("POST", path, body=msgspec.json.encode(body), content_type=_JSON)
        except ClusterError as exc:
            raise AccessUnavailable(exc.message) from None
        return answer if isinstance(answer, dict) else {}


class AccessUnavailable(WorkloadMapError):  # noqa: N818 (reads as the condition it reports)
    """The API server could not answer a review (the server's credentials may not create them, or it is down)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
