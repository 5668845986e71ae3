"""`wmap describe TYPE/NAME` (and `TYPE NAME`): one live workload as a tree, with its pods.

Reads, in order: the workload (one GET), every pod of its namespace (one LIST, paged), and the owners that connect
them (one metadata LIST per owner kind the pods' controller chains pass through: ReplicaSets for a Deployment,
Jobs for a JobSet, StatefulSets for a LeaderWorkerSet; none for a PyTorchJob, whose pods it owns directly). Pods are
attributed to components by the pods layer (owner chain, then the definition's selectors) and the view is rendered
by the same renderers as `describe -f` (tree, json, yaml): the same pipeline (`cli.pipeline.from_live`, then
`cli.views`). Called from `describe` when no `-f` is given.

A definition with cross-object references (`workloadmap.io/references`: a TrainJob's runtime) costs one GET per
referenced object (`cli.live.referenced_objects`), unless `--with` gave it; one that is missing or forbidden is a
warning and the workload is shown from what it says alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.cli.context import state
from workload_map.cli.errors import CLIError
from workload_map.cli.jqmode import definition_policy
from workload_map.cli.live import (
    cli_error,
    live_session,
    no_definition_payload,
    parse_target,
    referenced_objects,
    translate_errors,
)
from workload_map.cli.options import ConnectionOptions
from workload_map.cli.pipeline import from_live
from workload_map.cli.render import machine
from workload_map.cli.views import Described, tree_origin, view_of, write_views
from workload_map.cluster import ClusterError, TypeNotCovered
from workload_map.resolve import ResolveError


def describe_live(
    args: tuple[str, ...],
    *,
    fmt: str,
    connection: ConnectionOptions,
    cache_dir: str | None,
    definition_paths: tuple[str, ...],
    pod_limit: int,
    component_limit: int,
    related: Sequence[Mapping[str, Any]] = (),
) -> None:
    token, name = parse_target(args, name_required=True, command="describe")
    assert name is not None
    with live_session(connection, cache_dir=cache_dir, definition_paths=definition_paths) as session:
        try:
            rtype = session.cluster.resolve_type(token, session.registry)
        except TypeNotCovered as exc:
            if fmt in ("json", "yaml"):
                machine.write(no_definition_payload(token), fmt, state().stdout)
            raise cli_error(exc) from None
        except ClusterError as exc:
            raise cli_error(exc) from None
        with translate_errors():
            live = session.cluster.fetch_workload(rtype, name, namespace=session.namespace)
        for message in live.warnings:
            state().warn(message)
        label = f"{rtype.kind}/{name}"
        try:
            found = referenced_objects(session.cluster, live, related)
            workload = from_live(live, label, definition_policy, related=found)
            view = view_of(workload, live.pods, live.owners)
        except ResolveError as exc:
            raise CLIError(f"{rtype.kind}/{name}: {exc}") from None
        for error in view.errors:
            state().warn(f"{view.kind}/{view.name}: {error}")
        write_views([Described(view, tree_origin(workload))], fmt, pod_limit=pod_limit, component_limit=component_limit)
