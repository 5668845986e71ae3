"""The shape of the component tree a person reads: levels that add depth and no information folded away, the
multiplicity of repeated groups, and names that tell rows apart (docs/cli.md, "Tree names").

Driven by the view's structure only, never by kind or component names:

* **A pass-through level is merged with its only child**: a node with exactly one child and nothing of its own
  (no pods, no replicas, no requests) is the same rows twice. The merged row keeps the more specific name: when
  the words of one name are all in the other (`prefill` and `prefill-main`), the longer; otherwise both,
  `worker/gpu`.
* **A lone grouping level is dropped**: a node with nothing of its own that is not repeated (no scale above 1) and
  has no sibling (the only component of the workload, or the only child of its parent) is shown as its children
  (`component`, `service`, `replica`, `replicatedjob` above their instances).
* **Multiplicity**: a row whose pods come in several copies (a scale above 1 on a node above it, or on itself
  when it groups children) says how many, `replicas: 6 (2 x 3 pods)`.
* **Display names**: a definition's `workloadmap.io/display-names` names component nodes before the rules above
  apply (an instance keeps its id).
* **Objects**: a definition's `workloadmap.io/copies` says how many objects of its kind each instance stands for
  (a JobSet's replicatedJob of 2 Jobs of 4 pods): the row then reads `8 (2 x Job of 4 pods)`.
* **Groups**: a definition's `workloadmap.io/groups` puts instances of a component under a heading row of their own
  (a Grove scaling group over its cliques), with their figures summed and, when the group says so, its copies
  (`4 (2 x 2 pods)`); the heading is a grouping row (left out of the resources table).
* **Names in the resources table** are the tree's; two rows with the same name are told apart by their parent's
  (`decode/worker`, `prefill/worker`).

JSON and YAML never go through this: they print the view as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, TypeVar

import msgspec

from workload_map._regex import LazyPattern
from workload_map.view import ComponentView, Replicas, Resources

if TYPE_CHECKING:
    from workload_map.view import WorkloadView

_N = TypeVar("_N", int, Fraction)


class Row(msgspec.Struct, frozen=True):
    """One row of the tree: `node` is the component node whose replicas, requests, pods and nodes it shows (the
    lowest of the levels merged into it); `copies` how many copies of its pods the workload runs (1: no
    multiplicity to show)."""

    name: str
    node: ComponentView
    copies: int = 1
    children: tuple[Row, ...] = ()
    parent_name: str = ""  # not part of equality (see __eq__)
    unit: str = ""  # the kind of object each copy is, when the definition says (workloadmap.io/copies)

    def _compared(self) -> tuple[object, ...]:
        return (self.name, self.node, self.copies, self.children, self.unit)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Row):
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    @property
    def multiplicity(self) -> str:
        """`2 x 3 pods` (`2 x Job of 4 pods` when each copy is an object of a known kind) when the row's pods come
        in several equal copies, else ""."""
        desired = self.node.replicas.desired
        if self.copies <= 1 or not desired or desired % self.copies:
            return ""
        each = desired // self.copies
        pods = f"{each} pod{'s' * (each != 1)}"
        return f"{self.copies} x {self.unit} of {pods}" if self.unit else f"{self.copies} x {pods}"


def _own_nothing(node: ComponentView) -> bool:
    return not node.pods and node.own_replicas.desired == 0 and node.own_resources.empty


def _scale(node: ComponentView) -> int:
    """How many times the node repeats what is below it (1 without a count)."""
    replicas = node.scale.replicas if node.scale is not None else None
    return replicas if replicas is not None else 1


_WORD = LazyPattern(r"[A-Za-z][a-z]*|[0-9]+")


def _words(name: str) -> set[str]:
    """The words of a name, lower case and singular (`gpu-workers` has `worker`), for comparing two names."""
    words = (word.lower() for word in _WORD.findall(name))
    return {word[:-1] if len(word) > 3 and word.endswith("s") else word for word in words}


def merged_name(upper: str, lower: str) -> str:
    """The name of two merged levels: the more specific when one's words are all in the other, else both."""
    if upper == lower:
        return upper
    up, low = _words(upper), _words(lower)
    if up and up <= low:
        return lower
    if low and low <= up:
        return upper
    return f"{upper}/{lower}"


def _droppable(row: Row) -> bool:
    return bool(row.children) and _own_nothing(row.node) and row.copies <= 1


class Group(msgspec.Struct, frozen=True):
    """The heading a component's instance is shown under (`workloadmap.io/groups`): its name, and how many copies
    of its instances' pods the group stands for (1: none to show)."""

    name: str
    copies: int = 1


class _Hints(msgspec.Struct, frozen=True):
    display: Mapping[str, str]
    copies: Mapping[tuple[str, str], int]
    groups: Mapping[tuple[str, str], Group]


def _rows(nodes: Sequence[ComponentView], above: int, parent_name: str, hints: _Hints) -> tuple[Row, ...]:
    rows = tuple(_row(node, above, parent_name, hints) for node in nodes)
    while len(rows) == 1 and _droppable(rows[0]):
        rows = tuple(msgspec.structs.replace(child, parent_name=parent_name) for child in rows[0].children)
    return _grouped(rows, parent_name, hints) if hints.groups else rows


def _grouped(rows: tuple[Row, ...], parent_name: str, hints: _Hints) -> tuple[Row, ...]:
    """Rows of grouped instances gathered under one heading per group, where the first of them stood."""
    members: dict[str, list[Row]] = {}
    found: dict[str, Group] = {}
    out: list[Row | str] = []
    for row in rows:
        group = hints.groups.get((row.node.component, row.node.instance or "")) if row.node.instance else None
        if group is None:
            out.append(row)
            continue
        if group.name not in members:
            members[group.name] = []
            found[group.name] = group
            out.append(group.name)
        members[group.name].append(msgspec.structs.replace(row, parent_name=group.name))
    if not members:
        return rows
    return tuple(
        entry if isinstance(entry, Row) else _heading(found[entry], tuple(members[entry]), parent_name) for entry in out
    )


def _heading(group: Group, rows: tuple[Row, ...], parent_name: str) -> Row:
    """The heading row of a group: a grouping node over its rows' nodes, their figures summed."""
    nodes = [row.node for row in rows]
    known = all(node.replicas.current is not None and node.replicas.ready is not None for node in nodes)
    replicas = Replicas(
        desired=sum(node.replicas.desired for node in nodes),
        current=sum(node.replicas.current or 0 for node in nodes) if known else None,
        ready=sum(node.replicas.ready or 0 for node in nodes) if known else None,
    )
    resources = Resources(
        requests=_summed(node.resources.requests for node in nodes),
        gpus=sum(node.resources.gpus for node in nodes),
        cpu_millis=sum(node.resources.cpu_millis for node in nodes),
        memory_bytes=sum(node.resources.memory_bytes for node in nodes),
        accelerators=_summed(node.resources.accelerators for node in nodes),
    )
    heading = ComponentView(
        name=group.name,
        component=nodes[0].component,
        kind=None,
        instance=None,
        pod_bearing=False,
        scale=None,
        replicas=replicas,
        resources=resources,
        own_replicas=Replicas(),
        own_resources=Resources(),
        nodes=tuple(sorted({name for node in nodes for name in node.nodes})),
        children=tuple(nodes),
    )
    return Row(group.name, heading, group.copies, rows, parent_name)


def _summed(maps: Iterable[Mapping[str, _N]]) -> dict[str, _N]:
    total: dict[str, _N] = {}
    for amounts in maps:
        for name, amount in amounts.items():
            total[name] = total[name] + amount if name in total else amount
    return total


def _shown(node: ComponentView, display: Mapping[str, str]) -> str:
    """A node's own name: the definition's display name for a component node, the instance id for an instance."""
    return node.name if node.instance is not None else display.get(node.component, node.name)


def _row(node: ComponentView, above: int, parent_name: str, hints: _Hints) -> Row:
    """`above`: the product of the scales of the nodes above `node`."""
    name = _shown(node, hints.display)
    while len(node.children) == 1 and _own_nothing(node):
        above *= _scale(node)
        node = node.children[0]
        name = merged_name(name, _shown(node, hints.display))
    below = above * _scale(node)
    if node.children:
        return Row(name, node, below, _rows(node.children, below, name, hints), parent_name)
    objects = hints.copies.get((node.component, node.instance or ""))
    if objects is None or node.kind is None:
        return Row(name, node, above, (), parent_name)
    return Row(name, node, above * objects, (), parent_name, unit=node.kind.kind)


def shape(
    view: WorkloadView,
    display: Mapping[str, str] | None = None,
    copies: Mapping[tuple[str, str], int] | None = None,
    groups: Mapping[tuple[str, str], Group] | None = None,
) -> tuple[Row, ...]:
    """The rows of the tree, top level first, every level folded as the module says; `display` names components
    (the definition's `workloadmap.io/display-names`), `copies` the objects an instance stands for (by (component,
    instance id); `workloadmap.io/copies`), `groups` the heading an instance is shown under
    (`workloadmap.io/groups`)."""
    return _rows(view.components, 1, "", _Hints(display or {}, copies or {}, groups or {}))


def walk(rows: Sequence[Row]) -> Iterator[Row]:
    """Every row, depth first."""
    for row in rows:
        yield row
        yield from walk(row.children)


def table_names(rows: Sequence[Row]) -> dict[int, str]:
    """The resources table's name of each node shown (by `id` of its `ComponentView`): the tree's name, qualified
    by its parent row's when two rows would read the same."""
    every = list(walk(rows))
    counts: dict[str, int] = {}
    for row in every:
        counts[row.name] = counts.get(row.name, 0) + 1
    return {
        id(row.node): (f"{row.parent_name}/{row.name}" if counts[row.name] > 1 and row.parent_name else row.name)
        for row in every
    }
