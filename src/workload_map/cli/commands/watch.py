"""`wmap watch TYPE/NAME`: one live workload, its tree kept current as the workload and its pods change.

Requests: one LIST + WATCH of the workload (a field selector on its name), one LIST + WATCH of the pods of its
namespace, and one metadata-only LIST + WATCH per owner kind its pods' chains pass through (ReplicaSets, Jobs,
StatefulSets), never a request per pod; a watch that ends is resumed from its resourceVersion, a 410 re-lists, a
server that goes away is retried with backoff, and a watch RBAC forbids (list allowed) falls back to polling with a
warning. The view is recomputed only when the workload's resourceVersion or one of its pods' changes
(`cluster.index.ResolutionCache`), through the same pipeline and renderer as `describe TYPE/NAME`.

Output: on a terminal, the tree redrawn in place after each change; off a terminal, or with `-o json`, one JSON
document (the view, on one line) per change, and `{"deleted": true, ...}` when the workload is deleted (the watch
goes on: it may be created again). Ctrl-C ends it with exit 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from workload_map.cli.commands.watch_loop import (
    open_watch,
    poll_interval_option,
    run_until_interrupted,
    workload_resource,
)
from workload_map.cli.complete_args import complete_target
from workload_map.cli.context import state
from workload_map.cli.jqmode import definition_policy
from workload_map.cli.live import cli_error, live_session, no_definition_payload, parse_target
from workload_map.cli.options import (
    ConnectionOptions,
    OutputSpec,
    cache_dir_option,
    chunk_size_option,
    component_limit_option,
    connection_options,
    definitions_option,
    output_option,
    pod_limit_option,
    resolve_output,
)
from workload_map.cli.pipeline import from_live
from workload_map.cli.render import machine
from workload_map.cli.views import Described, tree_origin, view_of, write_views
from workload_map.cluster import ClusterError, LiveWorkload, ResolvedType, TypeNotCovered, WorkloadNotFound
from workload_map.cluster.index import ResolutionCache
from workload_map.pods import OwnerIndex
from workload_map.resolve import ResolveError

OUTPUT = OutputSpec("watch", ("tree", "json"), aliases={"table": "tree"})
CLEAR_SCREEN = "\x1b[H\x1b[2J"


def _describer(rtype: ResolvedType, label: str) -> Callable[[dict[str, Any], list[dict[str, Any]], OwnerIndex], Any]:
    def describe(workload: dict[str, Any], pods: list[dict[str, Any]], owners: OwnerIndex) -> Described | str:
        if rtype.group == "" and rtype.kind == "Pod":
            pods = [workload]  # a bare Pod is its own only pod
        live = LiveWorkload(object=workload, type=rtype, pods=pods, owners=owners)
        try:
            resolved = from_live(live, label, definition_policy)
            return Described(view_of(resolved, pods, owners), tree_origin(resolved))
        except ResolveError as exc:
            return f"{label}: {exc}"

    return describe


_HELP = """\
Watch one workload: its tree of components and pods, redrawn as it changes.

On a terminal the tree is redrawn in place; off a terminal, or with -o json, each change prints the view as one
line of JSON. Press Ctrl-C to stop.

\b
Examples:
  wmap watch jobset/train
  wmap watch pytorchjob llama -n research -o json | jq -c .phase
"""


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("args", nargs=-1, metavar="TYPE/NAME", shell_complete=complete_target)
@output_option(OUTPUT)
@pod_limit_option
@component_limit_option(0, "Show at most N components of each level (0: all). Tree output only.")
@poll_interval_option
@chunk_size_option
@definitions_option
@cache_dir_option
@connection_options
def watch(
    *,
    args: tuple[str, ...],
    output: str | None,
    pod_limit: int,
    component_limit: int,
    poll_interval: float,
    chunk_size: int,
    definition_paths: tuple[str, ...],
    cache_dir: str | None,
    connection: ConnectionOptions,
) -> None:
    fmt = resolve_output(OUTPUT, output)
    token, name = parse_target(args, name_required=True, command="watch")
    assert name is not None
    out = state().stdout
    redraw = fmt == "tree" and out.isatty()
    with live_session(
        connection, cache_dir=cache_dir, definition_paths=definition_paths, chunk_size=chunk_size
    ) as session:
        try:
            rtype = session.cluster.resolve_type(token, session.registry)
        except TypeNotCovered as exc:
            if fmt == "json":
                machine.write(no_definition_payload(token), fmt, out)
            raise cli_error(exc) from None
        except ClusterError as exc:
            raise cli_error(exc) from None
        namespace = session.namespace
        try:
            resource = workload_resource(rtype, namespace=namespace, name=name)
        except ClusterError as exc:
            raise cli_error(exc) from None
        label = f"{rtype.kind}/{name}"
        cache: ResolutionCache[Described | str] = ResolutionCache(_describer(rtype, label))
        bare_pod = rtype.group == "" and rtype.kind == "Pod"

        def show(described: Described | str) -> None:
            if isinstance(described, str):
                state().warn(described)
                state().flush_warnings()
                return
            for error in described.view.errors:
                state().warn(f"{described.view.kind}/{described.view.name}: {error}")
            if redraw:
                out.write(CLEAR_SCREEN)
                write_views([described], "tree", pod_limit=pod_limit, component_limit=component_limit)
            else:
                out.write(machine.to_json_line(described.view.to_dict()))
            out.flush()
            state().flush_warnings()

        def deleted() -> None:
            where = f" in namespace {resource.namespace}" if resource.namespace else ""
            if redraw:
                out.write(CLEAR_SCREEN)
                state().note(f"{label} was deleted{where}; waiting for it to be created again (Ctrl-C to stop)")
            else:
                gone = {"deleted": True, "kind": rtype.kind, "name": name, "namespace": resource.namespace or ""}
                out.write(machine.to_json_line(gone))
            out.flush()

        async def main() -> None:
            shown: Described | str | None = None
            async with open_watch(
                session, resource, with_pods=not bare_pod, chunk_size=chunk_size, poll_interval=poll_interval
            ) as (live, updates):
                async for update in updates:
                    objects = list(live.workloads.store)
                    if not objects:
                        if update.initial:
                            where = f" in namespace {resource.namespace}" if resource.namespace else ""
                            raise cli_error(WorkloadNotFound(f'{rtype.kind} "{name}" not found{where}'))
                        if shown is not None:
                            deleted()
                            shown = None
                        continue
                    described = cache.get(live.index, str(objects[0]["metadata"].get("uid") or ""))
                    if described is None or described is shown:
                        continue  # nothing this view shows changed
                    shown = described
                    show(described)

        run_until_interrupted(main)
