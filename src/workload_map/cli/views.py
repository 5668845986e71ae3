"""The view step of the pipeline (`cli.pipeline`) and its output: the `WorkloadView` of a resolved workload, from
its spec alone (a file) or with its pods attributed to it (live), and views printed as a tree, JSON or YAML.

Used by `describe` from files and from the cluster, `get -o wide` and `validate --against`. One view prints bare
under -o json|yaml; several print as a `WorkloadViewList` (`view_list`), and as one tree after another with a grand
total under -o tree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cli.context import state
from workload_map.cli.pipeline import ResolvedWorkload
from workload_map.cli.render import machine
from workload_map.cli.render.origin import Origin
from workload_map.model.extensions import (
    COPIES,
    GROUPS,
    MAX_DISPLAY_NAME,
    copies_expressions,
    display_names,
    groups_expressions,
)
from workload_map.resolve import ResolveError
from workload_map.view import SCHEMA_VERSION, WorkloadView, build_view

if TYPE_CHECKING:
    from typing import TypeVar

    from workload_map.cli.render.shape import Group
    from workload_map.cli.render.text import Line
    from workload_map.pods import Owners

    _T = TypeVar("_T")  # annotations only: a TypeVar made at import is ~0.1 million instructions (issue 19)

LIST_KIND = "WorkloadViewList"


def view_of(
    workload: ResolvedWorkload, pods: Sequence[Mapping[str, Any]] | None = None, owners: Owners = None
) -> WorkloadView:
    """The view of a resolved workload: from the spec alone without `pods` (file mode); with them (a live
    workload's, even none), the pods attributed through their owner chains (`owners`: ReplicaSets, Jobs, ...)."""
    resolution = workload.resolution
    if pods is None:
        return build_view(resolution, None, origin=workload.origin)
    from workload_map.pods import attribute  # only with pods: `describe -f` never loads the pods layer

    return build_view(resolution, attribute(resolution, pods, owners), origin=workload.origin)


def tree_origin(workload: ResolvedWorkload) -> Origin:
    """What the tree says of where a workload came from: its manifest and whether that carried a status, and the
    version its definition was written for when it is another (nothing for a live workload); and, for its hints,
    what the definition found nothing of (`_unread`)."""
    empty, no_template = _unread(workload)
    metadata_of = workload.workload.definition.metadata
    annotations = metadata_of.annotations if metadata_of else None
    display = display_names(annotations)
    copies = _copies(workload, copies_expressions(annotations))
    groups = _groups(workload, groups_expressions(annotations))
    manifest = workload.manifest
    if manifest is None:
        return Origin(
            empty_components=empty, no_pod_template=no_template, display_names=display, copies=copies, groups=groups
        )
    metadata = manifest.value.get("metadata") if isinstance(manifest.value, dict) else None
    generated = isinstance(metadata, dict) and not metadata.get("name") and bool(metadata.get("generateName"))
    return Origin(
        source=manifest.label,
        manifest_status=manifest.has_status,
        definition_version=workload.definition_version,
        generated_name=generated,
        empty_components=empty,
        no_pod_template=no_template,
        display_names=display,
        copies=copies,
        groups=groups,
    )


def _copies(workload: ResolvedWorkload, expressions: Mapping[str, str]) -> dict[tuple[str, str], int]:
    """(component, instance id) -> how many objects of its kind the instance stands for, from the definition's
    `workloadmap.io/copies` expressions (evaluated under the workload's policy, once each). An expression that
    fails, or does not give one positive whole number per instance, is a warning and shows no copies."""
    return _per_instance(
        workload,
        expressions,
        annotation=COPIES,
        read=_copy_count,
        expected="one positive whole number",
        otherwise="the tree shows no copies of",
    )


def _groups(workload: ResolvedWorkload, expressions: Mapping[str, str]) -> dict[tuple[str, str], Group]:
    """(component, instance id) -> the heading the tree shows the instance under, from the definition's
    `workloadmap.io/groups` expressions (evaluated under the workload's policy, once each). An expression that
    fails, or does not give one value (null, a name, or {name, copies}) per instance, is a warning and groups
    nothing."""
    return _per_instance(
        workload,
        expressions,
        annotation=GROUPS,
        read=_group,
        expected="one group (null, a name or {name, copies})",
        otherwise="the tree groups no instance of",
    )


def _per_instance(
    workload: ResolvedWorkload,
    expressions: Mapping[str, str],
    *,
    annotation: str,
    read: Callable[[object], _T | None],
    expected: str,
    otherwise: str,
) -> dict[tuple[str, str], _T]:
    """(component, instance id) -> what `read` makes of the instance's output of the component's expression in
    `annotation` (None: nothing for that instance). A component whose expression fails, gives another number of
    outputs than it has instances, or an output `read` refuses (ValueError), is a warning and gives nothing."""
    found: dict[tuple[str, str], _T] = {}
    if not expressions:
        return found
    components = {component.name: component for component in workload.resolution}
    for name, expression in expressions.items():
        component = components.get(name)
        if component is None:
            continue  # validation warns of an unknown component
        where = f'metadata.annotations["{annotation}"].{name}'
        try:
            outputs = workload.resolution.evaluate(expression, field=where)
        except ResolveError as exc:
            state().warn(f"{workload.label}: {where}: {exc}; {otherwise} {name}")
            continue
        ids = component.instance_ids
        try:
            if len(outputs) != len(ids):
                raise ValueError(name)
            values = [read(value) for value in outputs]
        except ValueError:
            state().warn(
                f"{workload.label}: {where} gave {len(outputs)} values for {len(ids)} instances, not {expected} "
                f"each; {otherwise} {name}"
            )
            continue
        found.update(
            {(name, instance): value for instance, value in zip(ids, values, strict=True) if value is not None}
        )
    return found


def _copy_count(value: object) -> int:
    """One instance's copies: a positive whole number (ValueError otherwise)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise ValueError(value)


def _group(value: object) -> Group | None:
    """A group from one output: None (not grouped); ValueError when the value is not one."""
    if value is None:
        return None
    from workload_map.cli.render.shape import Group  # the tree's shape: only for a definition that groups

    if isinstance(value, str) and value and value.isprintable() and len(value) <= MAX_DISPLAY_NAME:
        return Group(value)
    if isinstance(value, dict) and set(value) <= {"name", "copies"}:
        name, copies = value.get("name"), value.get("copies", 1)
        if not isinstance(name, str) or not name or not name.isprintable() or len(name) > MAX_DISPLAY_NAME:
            raise ValueError(value)
        if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
            raise ValueError(value)
        return Group(name, copies)
    raise ValueError(value)


def _unread(workload: ResolvedWorkload) -> tuple[tuple[str, ...], frozenset[tuple[str, str]]]:
    """The multi-instance components whose instance path finds none (an empty JobSet), and the (component,
    instance id) pairs of pod-bearing instances without a pod template with containers (the path finds nothing
    or an empty spec the controller fills in, or it fails): the view shows them with no requests, which the tree
    must not present as nothing requested."""
    empty: list[str] = []
    missing: set[tuple[str, str]] = set()
    for component in workload.resolution:
        if component.multi_instance and not component.instance_ids and component.ids_error is None:
            empty.append(component.name)
        if not component.has_pod_definition:
            continue
        for instance_id, instance in component.instances.items():
            template = instance.pod_template
            spec = template.get("spec") if isinstance(template, dict) else None
            if not isinstance(spec, dict) or not spec.get("containers"):
                missing.add((component.name, instance_id))
    return tuple(empty), frozenset(missing)


class Described(msgspec.Struct, frozen=True):
    """A view to print, and what the tree says about where it came from."""

    view: WorkloadView
    origin: Origin


# --- output -------------------------------------------------------------------------------------------------


def view_list(
    views: Sequence[WorkloadView],
    skipped: Sequence[Mapping[str, Any]] = (),
    errors: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The `WorkloadViewList` printed for several views under -o json|yaml (a stream, a directory or a List in
    `describe -f`, with the documents it skipped and those it could not describe)."""
    return {
        "schemaVersion": SCHEMA_VERSION,
        "kind": LIST_KIND,
        "count": len(views),
        "items": [view.to_dict() for view in views],
        "skipped": list(skipped),
        "errors": list(errors),
    }


def _sum(views: Sequence[WorkloadView], resource: str) -> Fraction:
    return sum((Fraction(view.resources.requests.get(resource, 0)) for view in views), Fraction(0))


def grand_total(views: Sequence[WorkloadView]) -> str:
    """`Total of 3 workloads: 17 replicas, 105 GPUs, CPU 85, memory 474Gi` (accelerators named too)."""
    from workload_map.cli.render.fmt import accelerator_labels, cpu_text, memory_text

    replicas = sum(view.replicas.desired for view in views)
    gpus = sum(view.resources.gpus for view in views)
    accelerators: dict[str, int] = {}
    for view in views:
        for name, count in view.resources.accelerators.items():
            accelerators[name] = accelerators.get(name, 0) + count
    labels = accelerator_labels(accelerators)
    parts = [
        f"{replicas} replica{'s' * (replicas != 1)}",
        f"{gpus} GPU{'s' * (gpus != 1)}",
        *(f"{labels[name]} {count}" for name, count in sorted(accelerators.items())),
        f"CPU {cpu_text(_sum(views, 'cpu'))}",
        f"memory {memory_text(_sum(views, 'memory'))}",
    ]
    return f"Total of {len(views)} workloads: {', '.join(parts)}"


def write_views(
    items: Sequence[Described], fmt: str, *, pod_limit: int = 0, component_limit: int = 0, bare: bool = True
) -> None:
    """Print views in `fmt` (tree, json or yaml) on stdout: one bare view when `bare` and there is one, else a
    list (JSON/YAML) or the trees one after another and a grand total."""
    out = state().stdout
    if fmt in ("json", "yaml"):
        if bare and len(items) == 1:
            machine.write(items[0].view.to_dict(), fmt, out)
        else:
            machine.write(view_list([item.view for item in items]), fmt, out)
        return
    # the tree renderer only for a tree: -o json|yaml never imports it (issue 19: start-up)
    from workload_map.cli.render.text import write_lines
    from workload_map.cli.render.tree import TreeOptions, render_workload

    color = state().color(out)
    encoding = (getattr(out, "encoding", "") or "").lower().replace("-", "")
    options = TreeOptions(
        pod_limit=pod_limit,
        component_limit=component_limit,
        width=state().width(out),
        unicode=color and encoding == "utf8",
    )
    lines: list[Line] = []
    for index, item in enumerate(items):
        if index:
            lines += [[], [("---", "glyph")], []]
        lines += render_workload(item.view, options, item.origin)
    if len(items) > 1:
        lines += [[], [("---", "glyph")], [], [(grand_total([item.view for item in items]), "total")]]
    write_lines(lines, out, color=color)
