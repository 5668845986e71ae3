"""What the tree says when its figures alone would mislead: a workload with nothing to run, a phase no mapping
gave, and components whose requests the definition could not read (shown as `?`, never as 0).

Every note is one line and names what it is about; the strings in it are escaped where the lines are written
(`render.text.write_lines`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

    from workload_map.view import WorkloadView

# The definition fields whose failure leaves a component's requests unknown (resolve.extract).
_SPEC_FIELDS = "specDefinition."
_COUNT_FAILED = "cannot count the requests"


def unreadable(view: WorkloadView, no_pod_template: Collection[tuple[str, str]]) -> dict[int, str]:
    """Why the requests of a component node are unknown, by `id` of its `ComponentView` (only nodes with pods of
    their own, the resources table's rows): a failed pod-spec path or quantity, or no pod template at all
    (`no_pod_template`: the (component, instance id) pairs, `Origin.no_pod_template`)."""
    failed: dict[str, str] = {}
    for error in view.errors:
        if error.field.startswith(_SPEC_FIELDS) or error.message.startswith(_COUNT_FAILED):
            failed.setdefault(error.component, f"{error.field or 'the pod spec'} failed (see the warning)")
    out: dict[int, str] = {}
    for _, node in view.walk():
        if node.children or not node.pod_bearing:
            continue
        if node.component in failed:
            out[id(node)] = failed[node.component]
        elif (node.component, node.instance or "") in no_pod_template:
            out[id(node)] = "no containers at the definition's pod path (the controller may add them)"
    return out


def _plural(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def notes(view: WorkloadView, empty_components: tuple[str, ...], *, no_status_yet: bool) -> list[str]:
    """The workload's notes, printed under its phase: `empty_components` are the multi-instance components that
    found no instance; `no_status_yet` that the phase line already says the manifest has no status."""
    out: list[str] = []
    if not view.components and not view.unclaimed_pods:
        if empty_components:
            out.append(f"Note: nothing to run: the workload declares no {_plural(empty_components)}")
        else:
            out.append("Note: nothing to run: the definition finds no component in this workload")
    elif view.replicas.desired == 0 and not view.pods and not view.unclaimed_pods:
        out.append("Note: nothing to run: every component asks for 0 replicas")
    if view.phase == "Undefined" and not no_status_yet:
        out.append(f"Note: no status mapping of {view.definition} matches this status, so the phase is Undefined")
    return out
