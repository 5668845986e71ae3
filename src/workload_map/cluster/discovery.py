"""Discovery: which resource types the server serves (kind -> plural, scope, verbs, short names), cached on disk.

One pass, two requests on Kubernetes 1.30+: `GET /api` and `GET /apis` with the aggregated-discovery `Accept`
header (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`) describe every group, version and resource. A server
without aggregated discovery answers the same two requests with the legacy documents (the header falls back to
`application/json`), and then each group version is read (`/api/v1`, `/apis/<group>/<version>`, a few at a time).

The result is cached like kubectl's discovery cache: `<cache dir>/discovery/<server host_port>/discovery.json`,
valid for 10 minutes (`DEFAULT_TTL`); the default cache dir is `$WMAP_CACHE_DIR`, else
`$XDG_CACHE_HOME/workload-map`, else `~/.cache/workload-map`. A cached document that does not know a type is
re-read from the server once before the type is declared unknown (a CRD installed a minute ago is found).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map._io import InputError, read_input_text
from workload_map.cluster.core import Call, Gather, Op, Operation
from workload_map.cluster.errors import ApiError

if TYPE_CHECKING:
    from workload_map.cluster.client import ApiClient

AGGREGATED_ACCEPT = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)
DEFAULT_TTL = 600.0
CACHE_FORMAT = 1
LEGACY_WORKERS = 6


class APIResource(msgspec.Struct, frozen=True):
    """One served resource type at one version (subresources left out)."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    verbs: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """`pytorchjobs.kubeflow.org` (`pods` for the core group): how RBAC messages and kubectl name it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def collection_path(self, namespace: str | None = None) -> str:
        """`/apis/g/v/namespaces/ns/plural`; without a namespace (or for a cluster-scoped type) the cluster-wide
        collection."""
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{prefix}/namespaces/{namespace}/{self.plural}"
        return f"{prefix}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None) -> str:
        return f"{self.collection_path(namespace)}/{name}"

    def can(self, verb: str) -> bool:
        return not self.verbs or verb in self.verbs

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "version": self.version,
            "kind": self.kind,
            "plural": self.plural,
            "singular": self.singular,
            "namespaced": self.namespaced,
            "verbs": list(self.verbs),
            "shortNames": list(self.short_names),
            "categories": list(self.categories),
        }

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> APIResource:
        return cls(
            group=str(value["group"]),
            version=str(value["version"]),
            kind=str(value["kind"]),
            plural=str(value["plural"]),
            singular=str(value.get("singular") or ""),
            namespaced=bool(value["namespaced"]),
            verbs=tuple(value.get("verbs") or ()),
            short_names=tuple(value.get("shortNames") or ()),
            categories=tuple(value.get("categories") or ()),
        )


class DiscoveryDocument:
    """Every served resource, with each group's versions in the server's order of preference (pure data)."""

    def __init__(self, resources: Iterable[APIResource], group_versions: Mapping[str, list[str]]) -> None:
        self.resources = list(resources)
        self.group_versions = {group: list(versions) for group, versions in group_versions.items()}
        self._by_gvk: dict[tuple[str, str, str], APIResource] = {}
        self._by_gk: dict[tuple[str, str], list[APIResource]] = {}
        for resource in self.resources:
            self._by_gvk.setdefault((resource.group, resource.version, resource.kind), resource)
            self._by_gk.setdefault((resource.group, resource.kind), []).append(resource)
        for versions in self._by_gk.values():
            versions.sort(key=lambda r: self.version_rank(r.group, r.version))

    def version_rank(self, group: str, version: str) -> int:
        """0 for the group's preferred version, then 1, 2, ... in the server's order."""
        versions = self.group_versions.get(group, [])
        return versions.index(version) if version in versions else len(versions)

    def find(self, group: str, version: str, kind: str) -> APIResource | None:
        """The resource serving exactly this group, version and kind."""
        return self._by_gvk.get((group, version, kind))

    def versions_of(self, group: str, kind: str) -> list[APIResource]:
        """Every served version of a group and kind, the server's preferred first."""
        return list(self._by_gk.get((group, kind), []))

    def preferred(self, group: str, kind: str) -> APIResource | None:
        served = self._by_gk.get((group, kind))
        return served[0] if served else None

    def serving(self, group: str, version: str, kind: str) -> APIResource | None:
        """The resource to read a definition's GVK through: that version when served, else the preferred one."""
        return self.find(group, version, kind) or self.preferred(group, kind)

    def by_name(self, name: str) -> list[APIResource]:
        """Resources whose plural, singular, short name or lowercase kind is `name` (lowercase), every version."""
        return [r for r in self.resources if name in (r.plural, r.singular, r.kind.lower()) or name in r.short_names]

    # --- (de)serialisation ------------------------------------------------------------------------------------

    def to_json(self, server: str) -> str:
        return json.dumps(
            {
                "format": CACHE_FORMAT,
                "server": server,
                "groupVersions": self.group_versions,
                "resources": [r.to_dict() for r in self.resources],
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str, server: str | None = None) -> DiscoveryDocument | None:
        """The cached document, or None when it is unreadable, of another format, or of another server."""
        try:
            data = json.loads(text)
            if data.get("format") != CACHE_FORMAT or (server is not None and data.get("server") != server):
                return None
            return cls(
                (APIResource.from_dict(item) for item in data["resources"]),
                {str(g): [str(v) for v in vs] for g, vs in data["groupVersions"].items()},
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    # --- parsing the server's documents -----------------------------------------------------------------------

    @classmethod
    def from_aggregated(cls, *lists: Mapping[str, Any]) -> DiscoveryDocument:
        """From `APIGroupDiscoveryList`s (the answers of `/api` and `/apis`)."""
        resources: list[APIResource] = []
        group_versions: dict[str, list[str]] = {}
        for listing in lists:
            for item in listing.get("items") or []:
                group = str((item.get("metadata") or {}).get("name") or "")
                versions = group_versions.setdefault(group, [])
                for version_entry in item.get("versions") or []:
                    version = str(version_entry.get("version") or "")
                    if not version:
                        continue
                    versions.append(version)
                    for res in version_entry.get("resources") or []:
                        parsed = _aggregated_resource(group, version, res)
                        if parsed is not None:
                            resources.append(parsed)
        return cls(resources, group_versions)

    @classmethod
    def from_legacy(
        cls, group_versions: Mapping[str, list[str]], resource_lists: Mapping[tuple[str, str], Mapping[str, Any]]
    ) -> DiscoveryDocument:
        """From `APIResourceList`s per (group, version), with each group's versions in preference order."""
        resources: list[APIResource] = []
        for (group, version), listing in resource_lists.items():
            for res in listing.get("resources") or []:
                name = str(res.get("name") or "")
                if not name or "/" in name:
                    continue
                resources.append(
                    APIResource(
                        group=group,
                        version=version,
                        kind=str(res.get("kind") or ""),
                        plural=name,
                        singular=str(res.get("singularName") or "") or str(res.get("kind") or "").lower(),
                        namespaced=bool(res.get("namespaced")),
                        verbs=tuple(res.get("verbs") or ()),
                        short_names=tuple(res.get("shortNames") or ()),
                        categories=tuple(res.get("categories") or ()),
                    )
                )
        return cls(resources, group_versions)


def _aggregated_resource(group: str, version: str, res: Mapping[str, Any]) -> APIResource | None:
    plural = str(res.get("resource") or "")
    response_kind = res.get("responseKind") or {}
    kind = str(response_kind.get("kind") or "")
    if not plural or not kind:
        return None
    return APIResource(
        group=group,
        version=version,
        kind=kind,
        plural=plural,
        singular=str(res.get("singularResource") or "") or kind.lower(),
        namespaced=res.get("scope") == "Namespaced",
        verbs=tuple(res.get("verbs") or ()),
        short_names=tuple(res.get("shortNames") or ()),
        categories=tuple(res.get("categories") or ()),
    )


# --- the cache --------------------------------------------------------------------------------------------------


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$WMAP_CACHE_DIR`, else `$XDG_CACHE_HOME/workload-map`, else `~/.cache/workload-map`."""
    env = os.environ if environ is None else environ
    if env.get("WMAP_CACHE_DIR"):
        return Path(env["WMAP_CACHE_DIR"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "workload-map"


def cache_file(cache_dir: Path, server: str) -> Path:
    """`<cache_dir>/discovery/<host_port[_path]>/discovery.json` for a server URL."""
    host = re.sub(r"^[a-z]+://", "", server.rstrip("/"))
    safe = re.sub(r"[^A-Za-z0-9.\-]", "_", host) or "default"
    return cache_dir / "discovery" / safe / "discovery.json"


def read_cache(path: Path, server: str, ttl: float, now: float | None = None) -> DiscoveryDocument | None:
    """The cached document when it is younger than `ttl` seconds and for this server."""
    try:
        age = (time.time() if now is None else now) - path.stat().st_mtime
        if age < 0 or age > ttl:
            return None
        return DiscoveryDocument.from_json(read_input_text(path, label=str(path))[1], server)
    except (OSError, InputError):  # unreadable or over the 64 MiB limit: fetched again, as a missing cache is
        return None


def write_cache(path: Path, server: str, document: DiscoveryDocument) -> None:
    """Write atomically (a concurrent reader sees the old file or the new one); failures are ignored."""
    import tempfile  # only when the cache is written: a warm `get` never loads it (with shutil, random, bz2, lzma)

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".discovery-", dir=path.parent)
        with os.fdopen(fd, "w") as handle:
            handle.write(document.to_json(server))
        os.replace(tmp, path)
    except OSError:
        pass


# --- fetching ---------------------------------------------------------------------------------------------------


def fetch_op() -> Op[DiscoveryDocument]:
    """Discovery from the server: 2 requests with aggregated discovery, else 2 + one per group version (sent
    concurrently, `LEGACY_WORKERS` at a time). Sans-I/O: run it with a shell (`ApiClient.run`)."""
    core = yield Call("GET", "/api", op=Operation("discover", "the core API group"), accept=AGGREGATED_ACCEPT)
    groups = yield Call("GET", "/apis", op=Operation("discover", "the API groups"), accept=AGGREGATED_ACCEPT)
    if _is_aggregated(core) and _is_aggregated(groups):
        return DiscoveryDocument.from_aggregated(core, groups)
    return (yield from legacy_op(core, groups))


def fetch(client: ApiClient) -> DiscoveryDocument:
    """`fetch_op` over a blocking client."""
    return client.run(fetch_op())


def _is_aggregated(document: Any) -> bool:
    return isinstance(document, dict) and document.get("kind") == "APIGroupDiscoveryList"


def legacy_op(core: Any, groups: Any) -> Op[DiscoveryDocument]:
    """Per-group-version discovery after the legacy `/api` and `/apis` answers."""
    group_versions: dict[str, list[str]] = {}
    if isinstance(core, dict):
        group_versions[""] = [str(v) for v in core.get("versions") or []]
    if isinstance(groups, dict):
        for group in groups.get("groups") or []:
            name = str(group.get("name") or "")
            preferred = str((group.get("preferredVersion") or {}).get("version") or "")
            versions = [str(v.get("version") or "") for v in group.get("versions") or []]
            versions = [v for v in versions if v]
            if preferred in versions:
                versions.remove(preferred)
                versions.insert(0, preferred)
            group_versions[name] = versions
    wanted = [(g, v) for g, versions in group_versions.items() for v in versions]
    calls = tuple(
        Call(
            "GET",
            f"/apis/{group}/{version}" if group else f"/api/{version}",
            op=Operation("discover", f"{group or 'core'}/{version}"),
        )
        for group, version in wanted
    )
    answers = yield Gather(calls, limit=LEGACY_WORKERS)
    lists: dict[tuple[str, str], Mapping[str, Any]] = {}
    for key, answer in zip(wanted, answers, strict=True):
        if isinstance(answer, ApiError):  # a broken aggregated API (e.g. metrics-server down) must not hide the rest
            continue
        if isinstance(answer, BaseException):  # unreachable, timed out: fails the discovery
            raise answer
        if isinstance(answer, dict):
            lists[key] = answer
    return DiscoveryDocument.from_legacy(group_versions, lists)


def _fetch_legacy(client: ApiClient, core: Any, groups: Any) -> DiscoveryDocument:
    return client.run(legacy_op(core, groups))


class DiscoveryCache:
    """The state both shells share: the document in hand, where it came from, and the disk cache."""

    def __init__(self, server: str, cache_dir: Path | None = None, ttl: float = DEFAULT_TTL) -> None:
        self.server = server
        self.cache_path = cache_file(cache_dir, server) if cache_dir is not None else None
        self.ttl = ttl
        self._document: DiscoveryDocument | None = None
        self.from_cache = False

    def current(self) -> DiscoveryDocument | None:
        """The document in hand, or a fresh one from the disk cache (None: read the server)."""
        if self._document is None and self.cache_path is not None:
            cached = read_cache(self.cache_path, self.server, self.ttl)
            if cached is not None:
                self._document, self.from_cache = cached, True
        return self._document

    def needs_refresh(self) -> bool:
        """A re-read can tell something new only when the document came from the cache (or there is none)."""
        return self._document is None or self.from_cache

    def store(self, document: DiscoveryDocument) -> DiscoveryDocument:
        self._document, self.from_cache = document, False
        if self.cache_path is not None:
            write_cache(self.cache_path, self.server, document)
        return document


class Discovery(DiscoveryCache):
    """Discovery for one server: from the disk cache when fresh, else from the server (then cached)."""

    def __init__(self, client: ApiClient, cache_dir: Path | None = None, ttl: float = DEFAULT_TTL) -> None:
        super().__init__(client.server, cache_dir, ttl)
        self.client = client

    def document(self) -> DiscoveryDocument:
        return self.current() or self.store(fetch(self.client))

    def refresh(self) -> DiscoveryDocument | None:
        """Re-read from the server when the current document came from the cache; None when it is already fresh
        (a second read would say the same)."""
        if not self.needs_refresh():
            return None
        return self.store(fetch(self.client))
