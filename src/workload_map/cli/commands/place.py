"""`wmap place -f WORKLOAD` (or `wmap place TYPE/NAME`): for each cluster, whether every gang of the workload fits
now, the clusters that can host it ranked by the placement score, and the first reason for each other one; exit 1
when none fits (docs/placement.md).

The workload is planned from its spec (`cli.plans.gang_plan_of`, the plan `wmap gang` prints); each cluster is read
with two LISTs (`cluster.nodes.read_snapshot`), concurrently, and placed on by `workload_map.placement.place`. A
TYPE/NAME is read from the first `--context` (or the current one). A workload without a gang is placed pod by pod
(`placement.PodByPod`). What the rules leave out is said after the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click
import msgspec

from workload_map.cli.clusters import CURRENT, ClusterAnswer, context_names, each_cluster
from workload_map.cli.complete_args import complete_target
from workload_map.cli.context import State, state
from workload_map.cli.definitions_source import build_registry
from workload_map.cli.errors import CLIError, NoDefinition, UsageError
from workload_map.cli.jqmode import definition_policy
from workload_map.cli.live import live_session, parse_target, referenced_objects, translate_errors
from workload_map.cli.manifests import read_manifests, related_objects
from workload_map.cli.options import (
    ConnectionOptions,
    OutputSpec,
    chunk_size_option,
    definitions_option,
    manifest_files_option,
    multi_cluster_options,
    output_option,
    resolve_output,
    with_files_option,
)
from workload_map.cli.pipeline import Duplicate, Failed, ResolvedWorkload, Uncovered, from_live, from_manifests
from workload_map.cli.plans import gang_plan_of
from workload_map.cli.render import machine
from workload_map.cli.render.text import Cell, align, seg, write_lines
from workload_map.cli.safe import safe_text
from workload_map.cluster import Cluster
from workload_map.cluster.nodes import read_snapshot
from workload_map.gang import GangError, GangPlan
from workload_map.placement import NOT_MODELLED, ClusterPlacement, PlacementError, PodByPod, rank
from workload_map.placement import place as place_gangs
from workload_map.resolve import ResolveError

OUTPUT = OutputSpec("place", ("table", "json", "yaml"))
HEADERS = ("CLUSTER", "FITS", "SCORE", "NODES", "REASON")

_HELP = """\
Say which clusters can run a workload now: every gang placed whole onto nodes with room.

Each pod of a gang goes onto a node by its requests against what the node has free (allocatable minus the pods
bound to it), its node selector, its tolerations of the node's taints and its required node affinity; a gang fits
only whole, and --topology-key (or the gang's own required topology level) keeps it inside one value of a node
label (a zone, a rack). A workload that needs no gang (a Deployment) is placed pod by pod: it fits when each of
its pods does. The clusters that fit are ranked by their score: the nodes the placement leaves partly used (fewer
is better). Exit 1 when no cluster fits.

\b
Examples:
  wmap place -f lws.yaml --context prod-a --context prod-b
  wmap place -f jobset.yaml --all-contexts --topology-key topology.kubernetes.io/zone
  wmap place leaderworkerset/llama --all-contexts -o json
"""


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("args", nargs=-1, metavar="[TYPE/NAME]", shell_complete=complete_target)
@manifest_files_option("Workload manifests to place (a file, a directory, or - for stdin).")
@with_files_option
@click.option("--topology-key", metavar="LABEL", help="Keep each gang on nodes sharing one value of this node label.")
@chunk_size_option
@output_option(OUTPUT)
@definitions_option
@multi_cluster_options
def place(
    *,
    args: tuple[str, ...],
    files: tuple[str, ...],
    with_files: tuple[str, ...],
    topology_key: str | None,
    chunk_size: int,
    output: str | None,
    definition_paths: tuple[str, ...],
    connection: ConnectionOptions,
) -> None:
    fmt = resolve_output(OUTPUT, output)
    if files and args:
        raise UsageError(f'-f reads the kind from the manifest, so it cannot be combined with "{" ".join(args)}"')
    if not files and not args:
        raise UsageError("nothing to place: give -f FILE, or TYPE/NAME", hint="e.g. wmap place -f lws.yaml")
    contexts = context_names(connection)
    report = state()
    related = _related(with_files, report)
    plans = (
        _plans_from_files(files, definition_paths, related, report)
        if files
        else _plan_live(args, contexts, connection, related)
    )
    workloads = [_label(gang_plan) for gang_plan in plans]
    if not any(p.roles if isinstance(p, PodByPod) else p.gangs for p in plans):
        raise CLIError(
            f"nothing to place: {', '.join(workloads)} asks for no pods",
            hint="the spec gives no pod template or a scale of 0",
        )

    def ask(cluster: Cluster, name: str) -> ClusterPlacement:
        try:
            return place_gangs(plans, read_snapshot(cluster, name), topology_key=topology_key)
        except PlacementError as error:
            raise CLIError(str(error)) from None

    answers = each_cluster(connection, ask, contexts=contexts, chunk_size=chunk_size)
    for answer in answers:
        if answer.error is not None:
            report.warn(f"cluster {answer.context or CURRENT}: {answer.error}")
        elif answer.value is not None:
            for note in answer.value.notes:
                report.warn(f"cluster {answer.value.cluster}: {note}")
    ranked = rank(answer.value for answer in answers if answer.value is not None)
    if fmt in ("json", "yaml"):
        machine.write(_document(workloads, answers, ranked), fmt, state().stdout)
    else:
        _table(ranked, answers)
    if all(answer.error is not None for answer in answers):
        raise CLIError("no cluster could be read")
    if not any(placement.fits for placement in ranked):
        raise CLIError(f"no cluster can run {', '.join(workloads)} now", hint="the reasons are in the table")


def _label(gang_plan: GangPlan | PodByPod) -> str:
    if isinstance(gang_plan, PodByPod):
        return gang_plan.workload
    ref = gang_plan.workload
    return f"{ref.kind}/{ref.name}" if ref.name else ref.kind


def _demand(workload: ResolvedWorkload, report: State) -> GangPlan | PodByPod:
    """What to place for one workload: its gang plan from the spec, or, when it needs no gang, its pods one by
    one (each scheduled on its own, as the scheduler does for a Deployment's)."""
    gang_plan = gang_plan_of(workload, None, report)  # the spec's gangs: where it could run, not where it runs
    if gang_plan.no_gang is None:
        return gang_plan
    try:
        return PodByPod.of(workload.resolution, gang_plan.no_gang)
    except GangError as error:
        raise CLIError(f"{_label(gang_plan)}: {error}") from None


def _owned(workload: ResolvedWorkload) -> bool:
    """Whether the object names a controller owner (a Pod of a ReplicaSet): its owner schedules it."""
    metadata = workload.workload.to_object().get("metadata")
    owners = metadata.get("ownerReferences") if isinstance(metadata, dict) else None
    return isinstance(owners, list) and any(isinstance(ref, dict) and ref.get("controller") is True for ref in owners)


def _related(paths: tuple[str, ...], report: State) -> list[dict[str, Any]]:
    """The `--with` objects (a document that cannot be read is named, and the run ends with exit 1)."""
    objects, bad = related_objects(paths)
    for problem in bad:
        report.partial(str(problem))
    return objects


def _plans_from_files(
    files: tuple[str, ...], definition_paths: tuple[str, ...], related: list[dict[str, Any]], report: State
) -> list[GangPlan | PodByPod]:
    manifests = read_manifests(files)
    for bad in manifests.bad:
        report.partial(str(bad))
    registry = build_registry(definition_paths, report=report)
    found: list[ResolvedWorkload] = []
    for item in from_manifests(manifests.documents, registry, definition_policy, related):
        if isinstance(item, Failed):
            raise CLIError(f"{item.manifest.label}: {item.error}")
        if isinstance(item, Uncovered):
            if item.manifest.workload_like and item.referenced_by is None:  # not a TrainJob's runtime
                report.warn(f"no definition covers {item.manifest.gvk_text} ({item.manifest.label})")
        elif isinstance(item, ResolvedWorkload) and not isinstance(item, Duplicate):
            found.append(item)
            for note in item.notes:  # a referenced object not in the input
                report.warn(f"{item.label}: {note}")
    # objects a controller owns (the workload's own Pods, given in the same file) are placed through their owner
    plannable = [w for w in found if not _owned(w)] or found
    if not plannable:
        raise NoDefinition("no workload of the input is covered by a definition", hint="-f reads workload manifests")
    return [_demand(workload, report) for workload in plannable]


def _plan_live(
    args: tuple[str, ...], contexts: Sequence[str], connection: ConnectionOptions, given: list[dict[str, Any]]
) -> list[GangPlan | PodByPod]:
    token, name = parse_target(args, name_required=True, command="place")
    assert name is not None
    source = msgspec.structs.replace(connection, context=contexts[0] or connection.context)
    with live_session(source) as session:
        rtype = session.resolve(token)
        with translate_errors():
            live = session.cluster.fetch_workload(rtype, name, namespace=session.namespace)
        try:  # the objects its definition refers to (a TrainJob's runtime: its roles), one GET each
            related = referenced_objects(session.cluster, live, given)
            workload = from_live(live, f"{rtype.kind}/{name}", definition_policy, related=related)
        except ResolveError as exc:
            raise CLIError(f"{rtype.kind}/{name}: {exc}") from None
    return [_demand(workload, state())]


def _document(
    workloads: list[str], answers: list[ClusterAnswer[ClusterPlacement]], ranked: list[ClusterPlacement]
) -> dict[str, Any]:
    clusters: dict[str, Any] = {}
    for answer in answers:
        if answer.value is not None:
            clusters[answer.value.cluster] = answer.value.to_dict()
        else:
            clusters[answer.context or CURRENT] = {"error": answer.error}
    return {
        "workloads": workloads,
        "ranked": [placement.cluster for placement in ranked if placement.fits],
        "clusters": clusters,
        "notModelled": list(NOT_MODELLED),
    }


def _table(ranked: list[ClusterPlacement], answers: list[ClusterAnswer[ClusterPlacement]]) -> None:
    table: list[list[Cell]] = [[seg(title, "heading") for title in HEADERS]]
    for placement in ranked:
        if placement.fits:
            table.append(
                [
                    seg(safe_text(placement.cluster)),
                    seg("yes", "ok"),
                    seg(str(placement.score)),
                    seg(str(placement.nodes_used)),
                ]
            )
        else:
            reason = safe_text(placement.reason or "", None)
            table.append([seg(safe_text(placement.cluster)), seg("no", "error"), seg("-"), seg("-"), seg(reason)])
    for answer in answers:
        if answer.error is not None:
            name = safe_text(answer.context or CURRENT)
            table.append([seg(name), seg("?", "warn"), seg("-"), seg("-"), seg(f"not read: {safe_text(answer.error)}")])
    out = state().stdout
    write_lines(align(table, padding=3), out, color=state().color(out))
    one_by_one = dict.fromkeys(gang.workload for placement in ranked for gang in placement.gangs if gang.pod_by_pod)
    if one_by_one:
        names = ", ".join(safe_text(name) for name in one_by_one)
        out.write(f"Placed pod by pod (no gang: each pod is scheduled on its own): {names}.\n")
    out.write(f"Not modelled: {'; '.join(NOT_MODELLED)}.\n")
