"""The gang step of the pipeline (`cli.pipeline`) and its output: the gang plan of a resolved workload (the CLI's
one call to `workload_map.gang.plan`), or the objects a scheduler needs for it, printed as YAML documents or JSON.

Used by `gang` from files (with the pods of `--pods`, scoped to each workload) and from the cluster (with the pods
whose owner chain reaches the workload). See docs/gang.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workload_map.cli.context import state
from workload_map.cli.errors import CLIError
from workload_map.cli.pipeline import ResolvedWorkload
from workload_map.cli.render import machine
from workload_map.cli.render.gangtree import plan_lines
from workload_map.cli.render.text import write_lines
from workload_map.gang import (
    ExportError,
    GangError,
    GangPlan,
    NoGangInstructions,
    export,
    joined_pod,
    plan,
    unganged,
)

if TYPE_CHECKING:
    from workload_map.cli.context import Reporter


@dataclass(frozen=True)
class GangOptions:
    """What to produce for each workload: the format and the scheduler parameters the plan leaves to the caller."""

    format: str = "plan"
    queue: str | None = None
    priority_class: str | None = None
    priority: int | None = None
    schedule_timeout_seconds: int | None = None
    workload_api_version: str = "scheduling.k8s.io/v1alpha2"
    volcano_sub_groups: bool = False
    joined_pods: bool = False  # after the scheduler's objects, each given pod carrying its links (`joined_pod`)


def gang_plan_of(workload: ResolvedWorkload, pods: Sequence[Mapping[str, Any]] | None, report: Reporter) -> GangPlan:
    """The gang plan of one workload (and its pods, None: from the spec alone); its notes and the pods in no gang
    go to `report`. A definition without gang instructions gives a plan that says no gang is needed (`unganged`);
    one that breaks a gang rule, or a plan that can never be met, raises `CLIError` (exit 1). `gang` and `place`
    both plan through here."""
    ref = workload.resolution.object
    what = f"{ref.kind}/{ref.name}" if ref.name else ref.kind
    try:
        gang_plan = plan(workload.resolution, pods)  # under the policy the workload was resolved with
    except NoGangInstructions:  # scheduled pod by pod: a plan saying so (exit 0), as for a Deployment
        gang_plan = unganged(
            workload.resolution,
            pods,
            reason=f"definition {workload.resolution.definition!r} has no gangScheduling: "
            "each pod is scheduled on its own",
        )
    except GangError as error:
        raise CLIError(f"{what}: {error}") from None
    for note in gang_plan.notes:
        report.warn(f"{what}: {note}")
    for pod in gang_plan.unplaced:
        report.warn(f"{what}: pod {pod.name} is in no gang: {pod.error or 'no gang matches it'}")
    return gang_plan


def gang_documents(
    workload: ResolvedWorkload, pods: Sequence[Mapping[str, Any]] | None, options: GangOptions, report: Reporter
) -> list[dict[str, Any]]:
    """The documents to print for one workload: its plan (`format` plan) or the scheduler's objects
    (`gang_plan_of` plans it)."""
    ref = workload.resolution.object
    what = f"{ref.kind}/{ref.name}" if ref.name else ref.kind
    gang_plan = gang_plan_of(workload, pods, report)
    if options.format == "plan":
        return [gang_plan.to_dict()]
    if gang_plan.no_gang is not None and options.format != "kai":
        report.warn(f"{what} needs no gang ({gang_plan.no_gang}): nothing to write for --format {options.format}")
        return []
    flat = options.format in ("coscheduling", "workload") and any(gang.sub_groups for gang in gang_plan.gangs)
    if flat:  # say what the format cannot carry rather than dropping it silently
        report.warn(
            f"{what}: --format {options.format} has no sub-groups: each gang is one group of its fewest pods "
            "(gang.minMember); the per-role minimums are not enforced"
        )
    try:
        documents = export(
            gang_plan,
            options.format,
            queue=options.queue,
            priority_class=options.priority_class,
            priority=options.priority,
            schedule_timeout_seconds=options.schedule_timeout_seconds,
            workload_api_version=options.workload_api_version,
            volcano_sub_groups=options.volcano_sub_groups,
        )
        if options.joined_pods and pods:
            documents.extend(_joined_pods(gang_plan, pods, options))
    except (ExportError, GangError) as error:
        raise CLIError(f"{what}: {error}") from None
    return documents


def _joined_pods(gang_plan: GangPlan, pods: Sequence[Mapping[str, Any]], options: GangOptions) -> list[dict[str, Any]]:
    """Each pod the plan places, as given, with the labels, annotations (and for the Workload API the spec field)
    that join it to its gang and leaf in the scheduler's form; a pod the plan does not place is left out (it is
    reported as unplaced)."""
    placed = {(member.namespace or "", member.name) for member in gang_plan.pods if member.gang is not None}
    if gang_plan.no_gang is not None:  # KAI's one PodGroup per pod: every pod is joined to its own
        placed = {(member.namespace or "", member.name) for member in gang_plan.pods}
    joined: list[dict[str, Any]] = []
    for pod in pods:
        metadata = pod.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        if (metadata.get("namespace") or "", metadata.get("name")) not in placed:
            continue
        joined.append(
            joined_pod(
                gang_plan,
                pod,
                options.format,
                queue=options.queue,
                workload_api_version=options.workload_api_version,
                volcano_sub_groups=options.volcano_sub_groups,
            )
        )
    return joined


def write_documents(documents: Sequence[Mapping[str, Any]], output: str) -> None:
    """YAML: one document per object (`---` between them). JSON: the object itself when there is one, else a
    `v1` `List` of them (as kubectl prints several). Text: each plan as a tree (`render.gangtree`)."""
    out = state().stdout
    if output == "text":
        write_lines(plan_lines(documents), out, color=state().color(out))
        return
    if output == "json":
        if len(documents) == 1:
            machine.write(documents[0], "json", out)
        else:
            machine.write({"apiVersion": "v1", "kind": "List", "items": list(documents)}, "json", out)
        return
    for index, document in enumerate(documents):
        if index:
            out.write("---\n")
        machine.write(document, "yaml", out)
