"""`wmap describe TYPE/NAME` (and `TYPE NAME`): one live workload as a tree, with its pods.

Reads, in order: the workload (one GET), every pod of its namespace (one LIST, paged), and the owners that connect
them (one metadata LIST per owner kind the pods' controller chains pass through: ReplicaSets for a Deployment,
Jobs for a JobSet, StatefulSets for a LeaderWorkerSet; none for a PyTorchJob, whose pods it owns directly). Pods are
attributed to components by the pods layer (owner chain, then the definition's selectors) and the view is rendered
by the same renderers as `describe -f` (tree, json, yaml). Called from `describe` when no `-f` is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workload_map.cli.context import state
from workload_map.cli.errors import CLIError
from workload_map.cli.live import (
    cli_error,
    live_session,
    no_definition_payload,
    parse_target,
    translate_errors,
)

if TYPE_CHECKING:
    from workload_map.cli.options import ConnectionOptions


def describe_live(
    args: tuple[str, ...],
    *,
    fmt: str,
    connection: ConnectionOptions,
    cache_dir: str | None,
    definition_paths: tuple[str, ...],
    pod_limit: int,
    component_limit: int,
) -> None:
    from workload_map.cli.commands.describe import Described, render_described
    from workload_map.cli.jqmode import definition_policy
    from workload_map.cli.manifests import Manifest
    from workload_map.cli.render.tree import Origin
    from workload_map.cluster import ClusterError, TypeNotCovered
    from workload_map.pods import attribute
    from workload_map.resolve import ResolveError
    from workload_map.view import build_view

    token, name = parse_target(args, name_required=True, command="describe")
    assert name is not None
    with live_session(connection, cache_dir=cache_dir, definition_paths=definition_paths) as session:
        try:
            rtype = session.cluster.resolve_type(token, session.registry)
        except TypeNotCovered as exc:
            if fmt in ("json", "yaml"):
                from workload_map.cli.render import machine

                machine.write(no_definition_payload(token), fmt, state().stdout)
            raise cli_error(exc) from None
        except ClusterError as exc:
            raise cli_error(exc) from None
        with translate_errors():
            live = session.cluster.fetch_workload(rtype, name, namespace=session.namespace)
        for message in live.warnings:
            state().warn(message)
        try:
            workload = live.workload(policy=definition_policy(rtype.definition.karta.name, live.origin))
            resolution = workload.resolve()
            view = build_view(resolution, attribute(resolution, live.pods, live.owners), origin=live.origin)
        except ResolveError as exc:
            raise CLIError(f"{rtype.kind}/{name}: {exc}") from None
        for error in view.errors:
            state().warn(f"{view.kind}/{view.name}: {error}")
        manifest = Manifest(source="cluster", label=f"{rtype.kind}/{name}", value=live.object)
        render_described(
            [Described(manifest, view, Origin())], fmt, pod_limit=pod_limit, component_limit=component_limit
        )
