"""A scheduler-neutral gang plan for one workload: which gangs, their members, min members and resources.

    from workload_map.gang import plan

    gang_plan = plan(resolution)               # from the spec alone
    gang_plan = plan(resolution, pods)         # and the gang of each (already scoped) pod
    for gang in gang_plan.gangs:
        print(gang.name, gang.min_member, gang.min_resources)

The plan is what every export (KAI, Volcano, coscheduling, Kueue, the Kubernetes Workload API) is written from; see
docs/gang.md for the rules (gang keying, naming, the per-replica scale rule) and docs/compatibility.md for where
they differ from upstream.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workload_map.errors import ArgumentTypeError
from workload_map.gang import alpha, tree
from workload_map.gang.builder import Builder, make_roles, pod_identity
from workload_map.gang.errors import NoGangInstructions
from workload_map.gang.scale import role_counts, scale_mode
from workload_map.gang.summary import StructureSummary
from workload_map.gang.types import GangPlan, GangRole, PodMembership
from workload_map.model.gang_rules import gang_rules
from workload_map.resolve import ExtractionError, Resolution
from workload_map.resolve.replicas import desired_replicas, min_replicas

__all__ = ["no_gang_reason", "plan", "pod_roles", "unganged"]


def _pods(pods: Any) -> list[Mapping[str, Any]]:
    """The pods as a list, each a mapping (a Pod object): ArgumentTypeError, naming the index, for anything else."""
    if isinstance(pods, Mapping | str | bytes) or not isinstance(pods, Iterable):
        raise ArgumentTypeError("pods", "an iterable of Pod objects (mappings) or None", pods)
    found = list(pods)
    for index, pod in enumerate(found):
        if not isinstance(pod, Mapping):
            raise ArgumentTypeError(f"pods[{index}]", "a mapping (a Pod object)", pod)
    return found


def plan(
    resolution: Resolution,
    pods: Iterable[Mapping[str, Any]] | None = None,
    *,
    summary: StructureSummary | None = None,
) -> GangPlan:
    """The gang plan of a resolved workload, from the spec alone or, with `pods`, with each pod's gang.

    `pods` are taken as the workload's own (scope them first, e.g. with `workload_map.pods.attribute`). Raises
    `NoGangInstructions` when the definition has no gangScheduling, `GangError` for rules the definition breaks
    (a sub-group without scale, a bad topology, an unknown sub-group component).
    """
    if not isinstance(resolution, Resolution):
        raise ArgumentTypeError("the workload", "a Resolution (workload_map.resolve.resolve)", resolution)
    if pods is not None:
        pods = _pods(pods)
    summary = summary or StructureSummary(resolution.karta)
    if summary.format is None:
        raise NoGangInstructions(resolution.definition)
    builder = Builder(resolution, summary)
    ref = resolution.object
    base = ref.name or resolution.definition
    no_gang: str | None = None
    if summary.format == "podGroup":
        gangs, memberships, no_gang = tree.build(builder, base, pods)
    else:
        gangs, memberships = alpha.build(builder, base, pods)
    return GangPlan(
        workload=ref,
        uid=ref.uid,
        definition=resolution.definition,
        format=summary.format,
        scale_mode=scale_mode(summary),
        gangs=tuple(gangs),
        pods=tuple(memberships),
        notes=tuple(builder.notes),
        with_pods=pods is not None,
        no_gang=no_gang,
        scheduler_annotations=_scheduler_annotations(resolution),
    )


# The workload's own knobs for a scheduler's grouping (Volcano's group-min-member, ...): kept for the exports.
_SCHEDULER_PREFIXES = ("scheduling.volcano.sh/", "kai.scheduler/", "scheduling.x-k8s.io/", "kueue.x-k8s.io/")
_ANNOTATIONS = '.metadata.annotations // {} | if type == "object" then . else {} end'


def _scheduler_annotations(resolution: Resolution) -> dict[str, str]:
    try:
        (found,) = resolution.evaluate(_ANNOTATIONS, field="metadata.annotations")
    except (ExtractionError, ValueError):
        return {}
    return {
        key: value
        for key, value in found.items()
        if isinstance(key, str) and isinstance(value, str) and key.startswith(_SCHEDULER_PREFIXES)
    }


def no_gang_reason(resolution: Resolution) -> str | None:
    """Why this object needs no gang, or None when it needs one: its definition has no gangScheduling, or the
    `workloadmap.io/gang` annotation's `noGang` gives a reason for this object (a single-node NIMService).
    Evaluates only that expression, not the plan; a `noGang` that cannot be read is left to `plan` to report."""
    if not isinstance(resolution, Resolution):
        raise ArgumentTypeError("the workload", "a Resolution (workload_map.resolve.resolve)", resolution)
    if resolution.karta.gang_scheduling is None:
        return f"definition {resolution.definition!r} has no gangScheduling"
    annotations = resolution.karta.metadata.annotations if resolution.karta.metadata else None
    rules = gang_rules(annotations)
    if rules is None or rules.no_gang is None:
        return None
    try:
        outputs = resolution.evaluate(rules.no_gang, field="noGang")
    except ExtractionError:
        return None
    reason = outputs[0] if len(outputs) == 1 else None
    return reason if isinstance(reason, str) and reason else None


def unganged(resolution: Resolution, pods: Iterable[Mapping[str, Any]] | None = None, *, reason: str) -> GangPlan:
    """The plan of a workload that needs no gang (`reason` says why, e.g. its definition has no gangScheduling):
    no gangs, each given pod listed in none; the KAI export still gives each pod a PodGroup of its own, as KAI's
    default grouper does."""
    if not isinstance(resolution, Resolution):
        raise ArgumentTypeError("the workload", "a Resolution (workload_map.resolve.resolve)", resolution)
    if not isinstance(reason, str) or not reason:
        raise ArgumentTypeError("reason", "a non-empty str", reason)
    found = _pods(pods) if pods is not None else []
    ref = resolution.object
    return GangPlan(
        workload=ref,
        uid=ref.uid,
        definition=resolution.definition,
        format=None,
        scale_mode=scale_mode(StructureSummary(resolution.karta)),
        gangs=(),
        pods=tuple(PodMembership(*pod_identity(pod)) for pod in found),
        with_pods=pods is not None,
        no_gang=reason,
        scheduler_annotations=_scheduler_annotations(resolution),
    )


def pod_roles(resolution: Resolution) -> tuple[tuple[GangRole, ...], tuple[str, ...]]:
    """Every pod the spec asks for, gang or not: one role per (component, instance) with pods, `count` the desired
    pods (replicas times the replicas of its ancestors, as `subtree_scale` counts them), `min_count` the least,
    with one pod's template and requests; and the notes (a template or requests that cannot be read). What
    `workload_map.placement` places pod by pod for a workload that needs no gang (a Deployment). Raises `GangError`
    when a scale cannot be read."""
    if not isinstance(resolution, Resolution):
        raise ArgumentTypeError("the workload", "a Resolution (workload_map.resolve.resolve)", resolution)
    summary = StructureSummary(resolution.karta)
    builder = Builder(resolution, summary)
    root = resolution.root
    least = role_counts(resolution, summary, root, pick=min_replicas)
    desired = role_counts(resolution, summary, root, pick=desired_replicas)
    # a count kept under a component without pods (a logical level whose children give none) is no pod to place
    with_pods = {role for role in [*least, *desired] if resolution.component(role[0]).has_pod_definition}
    roles = make_roles(
        builder,
        {role: count for role, count in least.items() if role in with_pods},
        {role: count for role, count in desired.items() if role in with_pods},
    )
    return roles, tuple(builder.notes)
