"""The human rendering of one `WorkloadView`: header, component tree, phase, and the resources table.

Layout (after upstream's describe, kli-cli.md §4.6), readable in 80 columns:

    PyTorchJob/llama-finetune   namespace: ml-team
    definition: kubeflow-org-pytorchjob-v1 (catalog)   file: examples/pytorchjob.yaml

    |-- master   replicas: 1   gpu: 1
    `-- worker   replicas: 4   gpu: 32

    Phase: Running

    Resources:
    COMPONENT   REPLICAS   GPU   CPU   MEMORY
    master      1          1     4     16Gi
    worker      4          32    16    64Gi
    TOTAL       5          33    20    80Gi

Tree rows have four aligned cells: the name behind its glyphs, the replicas (`replicas: N` from a file,
`ready/desired ready` live), the accelerators, and the nodes. Under each component its pods come first, then its
child components. `--pod-limit` and `--component-limit` trim the tree (never the resources table), keeping
unhealthy pods and components first and saying what they hid. The renderer reads only the view.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from workload_map.cli.render import hints
from workload_map.cli.render.fmt import accelerator_labels, accelerators_text, age, cpu_text, memory_text
from workload_map.cli.render.origin import Origin
from workload_map.cli.render.shape import Group, Row, shape, table_names
from workload_map.cli.render.text import PHASE_STYLES, Cell, Line, align, plain, seg

if TYPE_CHECKING:
    from workload_map.view import ComponentView, PodView, WorkloadView

ASCII_GLYPHS = ("|-- ", "`-- ", "|   ", "    ")
UNICODE_GLYPHS = ("├── ", "└── ", "│   ", "    ")
MAX_NODES_SHOWN = 3


class TreeOptions(msgspec.Struct, frozen=True):
    pod_limit: int = 0
    component_limit: int = 0
    width: int = 80
    unicode: bool = False
    now: datetime.datetime | None = None


# --- entries of the tree ------------------------------------------------------------------------------------


class _Entry(msgspec.Struct, frozen=True):
    kind: str  # "component", "pod", "note", "unclaimed"
    component: Row | None = None
    pod: PodView | None = None
    text: str = ""
    pods: tuple[PodView, ...] = ()


def _pod_entries(pods: Sequence[PodView], limit: int) -> list[_Entry]:
    if not limit or len(pods) <= limit:
        return [_Entry("pod", pod=pod) for pod in pods]
    ordered = sorted(pods, key=lambda pod: not pod.unhealthy)  # stable: unhealthy first, then as given
    shown = ordered[:limit]
    hidden = len(pods) - len(shown)
    unhealthy = sum(1 for pod in pods if pod.unhealthy)
    unhealthy_shown = sum(1 for pod in shown if pod.unhealthy)
    text = f"and {hidden} more"
    if unhealthy and unhealthy_shown == unhealthy:
        text += f" ({unhealthy_shown} unhealthy shown)"
    elif unhealthy:
        text += f" ({unhealthy_shown} of {unhealthy} unhealthy shown)"
    return [*(_Entry("pod", pod=pod) for pod in shown), _Entry("note", text=text)]


def _rank(component: ComponentView) -> int:
    if component.unhealthy_pods:
        return 0
    if component.missing_pods:
        return 1
    return 2


def _component_entries(components: Sequence[Row], limit: int) -> list[_Entry]:
    if not limit or len(components) <= limit:
        return [_Entry("component", component=c) for c in components]
    chosen = set(sorted(range(len(components)), key=lambda i: (_rank(components[i].node), i))[:limit])
    shown = [components[i] for i in range(len(components)) if i in chosen]
    hidden = [components[i].node for i in range(len(components)) if i not in chosen]
    count = len(hidden)
    text = f"and {count} more component{'' if count == 1 else 's'}"
    unhealthy = sum(1 for c in hidden if c.unhealthy_pods)
    missing = sum(1 for c in hidden if not c.unhealthy_pods and c.missing_pods)
    notes = ([f"{unhealthy} unhealthy"] if unhealthy else []) + ([f"{missing} with missing pods"] if missing else [])
    if notes:
        text += f" ({', '.join(notes)})"
    return [*(_Entry("component", component=c) for c in shown), _Entry("note", text=text)]


def _nodes_cell(nodes: Sequence[str]) -> Cell:
    if not nodes:
        return []
    shown = ",".join(nodes[:MAX_NODES_SHOWN])
    if len(nodes) > MAX_NODES_SHOWN:
        shown += f" +{len(nodes) - MAX_NODES_SHOWN} more"
    return seg(shown, "muted")


class _TreeBuilder:
    def __init__(
        self,
        view: WorkloadView,
        options: TreeOptions,
        unknown: Mapping[int, str],
        display: Mapping[str, str],
        copies: Mapping[tuple[str, str], int],
        *,
        groups: Mapping[tuple[str, str], Group] | None = None,
    ) -> None:
        self.view = view
        self.options = options
        self.unknown = unknown
        self.glyphs = UNICODE_GLYPHS if options.unicode else ASCII_GLYPHS
        self.labels = accelerator_labels(view.resources.accelerators)
        self.shape = shape(view, display, copies, groups)
        self.rows: list[list[Cell]] = []

    def children(self, row: Row) -> list[_Entry]:
        return _pod_entries(row.node.pods, self.options.pod_limit) + _component_entries(
            row.children, self.options.component_limit
        )

    def top(self) -> list[_Entry]:
        entries = _component_entries(self.shape, self.options.component_limit)
        if self.view.unclaimed_pods:
            entries.append(_Entry("unclaimed", pods=self.view.unclaimed_pods))
        return entries

    def build(self) -> list[list[Cell]]:
        self.walk(self.top(), "")
        return self.rows

    def walk(self, entries: list[_Entry], prefix: str) -> None:
        mid, last, bar, space = self.glyphs
        for index, entry in enumerate(entries):
            is_last = index == len(entries) - 1
            lead = seg(prefix + (last if is_last else mid), "glyph")
            below = prefix + (space if is_last else bar)
            if entry.kind == "component" and entry.component is not None:
                self.rows.append(self.component_row(lead, entry.component))
                self.walk(self.children(entry.component), below)
            elif entry.kind == "pod" and entry.pod is not None:
                self.rows.append(self.pod_row(lead, entry.pod))
            elif entry.kind == "unclaimed":
                count = len(entry.pods)
                self.rows.append([lead + seg("(unclaimed pods)", "warn"), seg(f"{count} pod{'s' * (count != 1)}")])
                self.walk(_pod_entries(entry.pods, self.options.pod_limit), below)
            else:
                self.rows.append([lead + seg("...", "muted"), seg(entry.text, "muted"), [], []])

    def component_row(self, lead: Cell, row: Row) -> list[Cell]:
        component = row.node
        replicas = component.replicas
        if replicas.current is None or replicas.ready is None:
            status = seg(f"replicas: {replicas.desired}")
        else:
            style = "ok" if replicas.ready >= replicas.desired else "warn"
            status = seg(f"{replicas.ready}/{replicas.desired} ready", style)
        if row.multiplicity:
            status += seg(f" ({row.multiplicity})", "muted")
        resources = component.resources
        if id(component) in self.unknown:
            accel_cell = seg("requests: not read", "warn")
        else:
            accel_cell = seg(accelerators_text(resources.gpus, resources.accelerators, self.labels), "accent")
        return [lead + seg(row.name, "title"), status, accel_cell, _nodes_cell(component.nodes)]

    def pod_row(self, lead: Cell, pod: PodView) -> list[Cell]:
        status_text = f"{pod.phase} ({pod.reason})" if pod.reason else pod.phase
        if pod.ready:
            style = "ok"
        elif pod.phase == "Succeeded":
            style = "muted"
        else:
            style = "bad" if pod.phase == "Failed" else "warn"
        resources = pod.resources
        accel = accelerators_text(resources.gpus, resources.accelerators, self.labels)
        node = seg(pod.node, "muted") if pod.node else seg("<none>", "warn")
        return [lead + seg(pod.name), seg(status_text, style), seg(accel, "accent"), node]


# --- the sections -------------------------------------------------------------------------------------------


def _wrap_fields(fields: list[Cell], width: int) -> list[Line]:
    """Fields joined by three spaces, starting a new line where the next one would pass `width`."""
    lines: list[Line] = []
    current: Line = []
    for cell in fields:
        if current and len(plain(current)) + 3 + len(plain(cell)) > width:
            lines.append(current)
            current = []
        if current:
            current.append(("   ", ""))
        current.extend(cell)
    if current:
        lines.append(current)
    return lines


def header(view: WorkloadView, options: TreeOptions, origin: Origin) -> list[Line]:
    definition = f"{view.definition} ({view.origin or 'unknown origin'}"
    if origin.definition_version:
        definition += f", written for {origin.definition_version}"
    definition += ")"
    name = f"{view.kind}/{view.name}"
    if origin.generated_name:
        name += "<suffix>"
    namespace = view.namespace or ("not set (the context's namespace applies)" if view.file_mode else "<none>")
    fields: list[Cell] = [
        seg(name, "title"),
        *([seg("(generateName: the API server adds the suffix)", "muted")] if origin.generated_name else []),
        seg(f"namespace: {namespace}"),
        seg(f"definition: {definition}"),
    ]
    if view.file_mode:
        fields.append(seg(f"file: {origin.source} (no live pods)" if origin.source else "(file mode: no live pods)"))
    else:
        fields.append(seg(f"age: {age(view.created_at, options.now)}"))
    return _wrap_fields(fields, options.width)


def phase_line(view: WorkloadView, origin: Origin, width: int = 80) -> Line:
    line: Line = [("Phase: ", "heading")]
    for index, phase in enumerate(view.phases or (view.phase,)):
        if index:
            line.append((",", ""))
        line.append((phase, PHASE_STYLES.get(phase, "")))
    if view.file_mode and origin.manifest_status is False:
        line.append((" (the manifest has no status yet)", "muted"))
    elif view.reason:
        room = width - len(plain(line)) - 3
        line.append((f" ({reason_text(view.reason, room)})", "muted"))
    return line


def reason_text(reason: str, limit: int) -> str:
    """The reason behind the phase in at most `limit` characters of one line: its first line, cut with `...` (the
    whole text is `reason` in `-o json`); the line writer escapes what a terminal must not receive raw."""
    first, _, rest = reason.strip().partition("\n")
    limit = max(limit, 12)
    if rest.strip() and len(first) + 4 <= limit:
        return first + " ..."
    return first if len(first) <= limit else first[: limit - 3] + "..."


def _is_table_row(component: ComponentView) -> bool:
    """A row of the resources table: anything but a node whose children hold all it has (a grouping node, or the
    parent of a component's instances)."""
    return not (
        component.children
        and not component.pods
        and component.own_replicas.desired == 0
        and component.own_resources.empty
    )


def resources_table(
    view: WorkloadView,
    unknown: Mapping[int, str] | None = None,
    width: int = 80,
    display: Mapping[str, str] | None = None,
) -> list[Line]:
    """The `Resources:` section; a row in `unknown` (by `id` of its node: why its requests are not known) reads
    `?` in every request column, and a line under the table (two past `width`) says why and that TOTAL leaves
    it out."""
    unknown = unknown or {}
    labels = accelerator_labels(view.resources.accelerators)
    names = sorted(labels)
    header: list[Cell] = [
        seg(title, "heading")
        for title in ("COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY", *(labels[n].upper() for n in names))
    ]
    rows: list[list[Cell]] = [header]
    replicas = 0
    row_names = table_names(shape(view, display))
    footnotes: list[Line] = []
    for _, component in view.walk():
        if not _is_table_row(component):
            continue
        own = component.own_resources
        replicas += component.own_replicas.desired
        name = row_names.get(id(component), component.name)
        why = unknown.get(id(component))
        if why is not None:
            rows.append(
                [
                    seg(name),
                    seg(str(component.own_replicas.desired)),
                    *(seg("?", "warn") for _ in range(3 + len(names))),
                ]
            )
            head, tail = f"{name}: requests unknown, not in TOTAL:", why
            if len(head) + len(tail) + 3 <= width:
                footnotes.append([("? ", "warn"), (f"{head} {tail}", "muted")])
            else:
                footnotes += [[("? ", "warn"), (head, "muted")], [(f"  {tail}", "muted")]]
            continue
        rows.append(
            [
                seg(name),
                seg(str(component.own_replicas.desired)),
                seg(str(own.gpus)),
                seg(cpu_text(own.requests.get("cpu", 0))),
                seg(memory_text(own.requests.get("memory", 0))),
                *(seg(str(own.accelerators.get(name, 0))) for name in names),
            ]
        )
    total = view.resources
    rows.append(
        [
            seg("TOTAL", "total"),
            seg(str(replicas), "total"),
            seg(str(total.gpus), "total"),
            seg(cpu_text(total.requests.get("cpu", 0)), "total"),
            seg(memory_text(total.requests.get("memory", 0)), "total"),
            *(seg(str(total.accelerators.get(name, 0)), "total") for name in names),
        ]
    )
    return [[("Resources:", "heading")], *align(rows), *footnotes]


def render_workload(view: WorkloadView, options: TreeOptions | None = None, origin: Origin | None = None) -> list[Line]:
    """Every line of one workload's human rendering (no trailing blank line)."""
    opts = options or TreeOptions()
    where = origin or Origin()
    lines = header(view, opts, where)
    unknown = hints.unreadable(view, where.no_pod_template)
    rows = _TreeBuilder(view, opts, unknown, where.display_names, where.copies, groups=where.groups).build()
    if rows:
        lines += [[], *align(rows)]
    lines += [[], phase_line(view, where, opts.width)]
    no_status_yet = view.file_mode and where.manifest_status is False
    lines += [[(note, "muted")] for note in hints.notes(view, where.empty_components, no_status_yet=no_status_yet)]
    lines += [[], *resources_table(view, unknown, opts.width, where.display_names)]
    return lines
