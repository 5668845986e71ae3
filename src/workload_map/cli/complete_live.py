"""Completion of a live command's TYPE and NAME from the cluster (`wmap get <TAB>`, `wmap describe jobset/<TAB>`).

Only a shell's completion call-back reaches this module (`cli.complete_args` imports it inside the callback), so no
command pays for it. What it offers:

* TYPE: each served resource a definition covers (local `--definitions`, the cluster's Kartas, the catalog), by its
  plural (`pytorchjobs`), or `plural.group` when two covered groups serve the same plural. The served resources
  come from the discovery cache (`--cache-dir`; one read of `/api` and `/apis` when it is stale, then cached).
* NAME, after `TYPE/` or as the word after `TYPE`: the names of that type's objects in the namespace (`-n`, else
  the context's; every namespace with `-A`), from metadata-only LIST pages, at most `NAME_LIMIT` names.

The connection flags already on the command line are honoured. The whole answer has `BUDGET` seconds (each request
is cut at that too): past it, or on any failure (no kubeconfig, an unreachable server, a refused LIST, a TYPE no
definition covers), nothing is offered and nothing is printed: a completion must never write an error into the
user's prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
from click.shell_completion import CompletionItem

from workload_map.catalog import DefinitionRegistry
from workload_map.cli.definitions_source import build_registry
from workload_map.cli.live import _RequiredClusterSource, connection_settings
from workload_map.cli.options import ConnectionOptions
from workload_map.cluster import Cluster
from workload_map.cluster.core import METADATA_LIST, Operation
from workload_map.cluster.discovery import APIResource, DiscoveryDocument

BUDGET = 2.0
"""Seconds the whole completion answer may take (the requests included)."""

NAME_LIMIT = 5000
"""At most this many names are read for a NAME completion (a completion is not a full listing)."""

PAGE = 500
"""Names per metadata-only LIST page."""


class _Silent:
    """The Reporter of a completion run: warnings (a skipped cluster definition, ...) are not for the prompt."""

    def warn(self, message: str) -> None:
        pass


def connection_from_params(params: Mapping[str, Any]) -> ConnectionOptions:
    """The connection flags click has parsed so far (`conn_*` parameters; `--context` repeatable or not)."""
    values = {key[len("conn_") :]: value for key, value in params.items() if key.startswith("conn_")}
    fields = {f.name for f in msgspec.structs.fields(ConnectionOptions)}
    if "contexts" in values:
        contexts = tuple(values.pop("contexts") or ())
        values["context"] = contexts[0] if contexts else None
    if "impersonate_groups" in values:  # click hands a repeatable option over as a list while completing
        values["impersonate_groups"] = tuple(values["impersonate_groups"] or ())
    kept = {key: value for key, value in values.items() if key in fields and value is not None}
    return ConnectionOptions(**kept)


def covered_types(document: DiscoveryDocument, registry: DefinitionRegistry) -> list[tuple[str, str]]:
    """(word, description) for every served resource a definition covers, sorted by word (see the module doc)."""
    chosen: dict[tuple[str, str], APIResource] = {}
    for resource in document.resources:
        if "list" not in resource.verbs and resource.verbs:
            continue
        if registry.for_gvk(resource.group, resource.version, resource.kind) is None:
            continue
        key = (resource.group, resource.plural)
        current = chosen.get(key)
        if current is None or document.version_rank(resource.group, resource.version) < document.version_rank(
            current.group, current.version
        ):
            chosen[key] = resource
    groups_of: dict[str, set[str]] = {}
    for group, plural in chosen:
        groups_of.setdefault(plural, set()).add(group)
    words: list[tuple[str, str]] = []
    for (group, plural), resource in chosen.items():
        word = plural if len(groups_of[plural]) == 1 or not group else f"{plural}.{group}"
        words.append((word, f"{resource.kind} ({resource.api_version})"))
    return sorted(words)


def _registry(cluster: Cluster, params: Mapping[str, Any]) -> DefinitionRegistry:
    # stdin ("-") is the shell's, not a definitions file, while completing
    local = tuple(path for path in params.get("definition_paths") or () if path != "-")
    return build_registry(local, report=_Silent(), cluster=_RequiredClusterSource(cluster, debug=False))


def _names(cluster: Cluster, resource: APIResource, namespace: str | None) -> list[str]:
    """The objects' names from metadata-only pages of `PAGE` until the list ends or `NAME_LIMIT` names are in."""
    names: set[str] = set()
    pages = cluster.client.list_pages(
        resource.collection_path(namespace),
        op=Operation("list", resource.qualified, namespace),
        chunk_size=PAGE,
        accept=METADATA_LIST,
    )
    for page in pages:
        for item in page.get("items") or []:
            if isinstance(item, dict):
                names.add(str((item.get("metadata") or {}).get("name") or ""))
        if len(names) >= NAME_LIMIT:
            break
    names.discard("")
    return sorted(names)


def answer(args: Sequence[str], incomplete: str, params: Mapping[str, Any]) -> list[CompletionItem]:
    """The candidates for the word being completed after `args` (the TYPE/NAME words already given); raises on
    any failure (`complete` turns that into no candidates)."""
    if len(args) > 1 or (args and "/" in args[0]) or params.get("all_types"):
        return []
    token: str | None = None
    prefix = ""
    if args:
        token = args[0]
    elif "/" in incomplete:
        token, _, incomplete = incomplete.partition("/")
        prefix = f"{token}/"
    settings = connection_settings(connection_from_params(params), request_timeout=BUDGET)
    if settings.request_timeout is None or settings.request_timeout > BUDGET:
        settings = msgspec.structs.replace(settings, request_timeout=BUDGET)
    cache_dir = params.get("cache_dir")
    kwargs: dict[str, Any] = {} if cache_dir is None else {"cache_dir": Path(cache_dir).expanduser()}
    with Cluster(settings, **kwargs) as cluster:
        registry = _registry(cluster, params)
        if token is None:
            document = cluster.discovery_document()
            return [
                CompletionItem(word, help=text)
                for word, text in covered_types(document, registry)
                if word.startswith(incomplete)
            ]
        rtype = cluster.resolve_type(token, registry)
        resource = cluster.served(rtype)
        namespace = None if params.get("all_namespaces") else cluster.namespace
        if not resource.namespaced:
            namespace = None
        return [
            CompletionItem(f"{prefix}{name}")
            for name in _names(cluster, resource, namespace)
            if name.startswith(incomplete)
        ]


def complete(
    args: Sequence[str],
    incomplete: str,
    params: Mapping[str, Any],
    *,
    budget: float = BUDGET,
    run: Callable[[Sequence[str], str, Mapping[str, Any]], list[CompletionItem]] = answer,
) -> list[CompletionItem]:
    """`answer` on a worker thread, waited for `budget` seconds: its candidates, or none when it fails or is late
    (the thread is a daemon: a late answer is abandoned, not waited for, when the completion process exits)."""
    found: list[list[CompletionItem]] = []

    def work() -> None:
        try:
            found.append(run(args, incomplete, params))
        except BaseException:  # silent on every failure, by design (see the module docstring)
            return

    worker = threading.Thread(target=work, name="wmap-complete", daemon=True)
    worker.start()
    worker.join(budget)
    return found[0] if found else []
