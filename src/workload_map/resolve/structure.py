"""The shape of a definition that every resolution of it shares: components by name, their YAML paths, the
parent -> children map, and every workload-side expression (the plan one object's evaluation prefetches).

Built once per definition (definitions are immutable once loaded), so resolving many objects of one kind
walks the definition once.
"""

from __future__ import annotations

from _thread import allocate_lock
from collections import OrderedDict
from collections.abc import Iterator
from typing import Final

import msgspec

from workload_map.jq import facts
from workload_map.jq.errors import JqError
from workload_map.model import ComponentDefinition, Karta
from workload_map.model.extensions import ResourceAliases, resource_aliases
from workload_map.resolve._json import ReadPart, read_part
from workload_map.resolve.reasons import reason_expressions
from workload_map.resolve.results import FRAGMENTED_FIELDS

_STRUCTURE_FIELD = "spec.structureDefinition"

# the parts of a component a resolution computes, each once (the keys of `ResolvedComponent`'s cache)
PART_IDS: Final = "ids"
PART_TEMPLATES: Final = "templates"
PART_SPECS: Final = "specs"
PART_METADATA: Final = "metadata"
PART_FRAGMENTED: Final = "fragmented"
PART_SCALES: Final = "scales"
PART_REQUESTS: Final = "requests"
PART_STATUS: Final = "status"


class ComponentSlot(msgspec.Struct, frozen=True):
    """One component of a definition and where it is declared (`spec.structureDefinition.childComponents[1]`)."""

    definition: ComponentDefinition
    yaml_path: str
    is_root: bool
    # the parts the definition has no path for, so None in every resolution (`absent_parts`)
    absent: frozenset[str] = frozenset()
    # the component's children (their names, in declaration order) and `definition.has_pod_definition`, worked out
    # once per definition: a `ResolvedComponent` reads them here instead of being handed its own copies
    children: tuple[str, ...] = ()
    has_pod_definition: bool = False

    @property
    def name(self) -> str:
        return self.definition.name


class Structure(msgspec.Struct, frozen=True):
    """Components of one definition: the root first, then the children in declaration order."""

    karta: Karta
    root: str
    slots: dict[str, ComponentSlot]
    children: dict[str, tuple[str, ...]]
    expressions: tuple[str, ...]
    # the expressions evaluated together: the structure's (ids, pod paths, scales), then the status's, so a reader of
    # the status alone (`wmap get`) converts and evaluates only what the status reads
    plan_groups: tuple[tuple[str, ...], ...] = ()
    # the definition's `workloadmap.io/resource-aliases` / `resources-shape` (None: it sets neither)
    resource_aliases: ResourceAliases | None = None
    # pod template, pod spec and metadata paths that are plain paths and nothing else of the definition: read in
    # place (`Snapshot.objects`), in no group, so the objects they give are copied (normalised) only when a reader
    # is handed them, and the request formula reads them where they are
    in_place: frozenset[str] = frozenset()
    # every status expression of the definition (the status group of `plan_groups`), and what they read
    # (`status_reads`, worked out on first use and kept here: a list of at most one entry)
    status: tuple[str, ...] = ()
    status_reads_found: list[StatusReads] = msgspec.field(default_factory=list)

    def children_of(self, name: str) -> tuple[str, ...]:
        return self.children.get(name, ())


def structure_of(karta: Karta) -> Structure:
    """The structure of `karta`, built once per definition object.

    Keyed by identity: definitions are frozen, so an object never changes shape; the cache holds the definition
    itself, so an id is never reused while its entry lives. Bounded, least recently used first out.
    """
    key = id(karta)
    with _LOCK:
        found = _CACHE.get(key)
        if found is not None:
            _CACHE.move_to_end(key)
            return found
    built = _build(karta)
    with _LOCK:
        _CACHE[key] = built
        if len(_CACHE) > _CACHE_MAX:
            _CACHE.popitem(last=False)
    return built


_LOCK = allocate_lock()  # threading.Lock() without importing threading (~0.6 ms of a start; issue 19)
_CACHE: OrderedDict[int, Structure] = OrderedDict()
_CACHE_MAX = 512


def _build(karta: Karta) -> Structure:
    children: dict[str, list[str]] = {}
    for child in karta.children:
        if child.owner_ref:
            children.setdefault(child.owner_ref, []).append(child.name)

    def slot_of(component: ComponentDefinition, yaml_path: str, is_root: bool) -> ComponentSlot:
        return ComponentSlot(
            component,
            yaml_path,
            is_root,
            absent_parts(component),
            tuple(children.get(component.name, ())),
            component.has_pod_definition,
        )

    slots: dict[str, ComponentSlot] = {}
    root = karta.root
    slots[root.name] = slot_of(root, f"{_STRUCTURE_FIELD}.rootComponent", True)
    for index, child in enumerate(karta.children):
        # a later duplicate name never shadows the first (validation reports it)
        slots.setdefault(child.name, slot_of(child, f"{_STRUCTURE_FIELD}.childComponents[{index}]", False))
    expressions = tuple(dict.fromkeys(expr for component in karta.components for expr in _expressions(component)))
    status = tuple(dict.fromkeys(expr for component in karta.components for expr in _status_expressions(component)))
    objects = {path for component in karta.components for path in _object_paths(component)}
    others = {expr for component in karta.components for expr in _expressions(component, objects=False)}
    in_place = frozenset(path for path in objects if path not in others and _plain(path))
    shape = tuple(expr for expr in expressions if expr not in status and expr not in in_place)
    return Structure(
        karta=karta,
        root=root.name,
        slots=slots,
        children={name: tuple(names) for name, names in children.items()},
        expressions=expressions,
        plan_groups=tuple(group for group in (shape, status) if group),
        resource_aliases=resource_aliases(karta.metadata.annotations if karta.metadata else None),
        in_place=in_place,
        status=status,
    )


class StatusReads(msgspec.Struct, frozen=True):
    """What the status expressions of a definition read: `expressions` (a snapshot evaluating only these needs
    only `part` checked) and `part`, the union of their read patterns (`jq.reads`) compiled for
    `_json.part_shareable`; None when some expression may read anything (then the whole object is checked)."""

    expressions: frozenset[str]
    part: ReadPart | None


def status_reads(structure: Structure) -> StatusReads:
    """The status read patterns of `structure`'s definition, worked out once per structure (two threads may both
    work them out: equal results)."""
    found = structure.status_reads_found
    if found:
        return found[0]
    patterns: set[tuple[str | int | None, ...]] | None = set()
    for expr in structure.status:
        roots = _roots(expr)
        if roots is None:
            patterns = None
            break
        patterns.update(roots)  # type: ignore[union-attr]
    reads = StatusReads(frozenset(structure.status), read_part(patterns))
    if not found:
        found.append(reads)
    return found[0]


def _plain(path: str) -> bool:
    """Whether the fast path reads `path` on the caller's object in place (`fastpath.compile_fast_raw`): the
    catalog's stored fact (`jq.facts.plain`), else the fast path's own answer."""
    known = facts.plain(path)
    if known is not None:
        return known
    from workload_map.jq.fastpath import compile_fast_raw  # the front end: for a path no stored fact covers

    return compile_fast_raw(path) is not None


def _roots(expr: str) -> frozenset[tuple[str | int | None, ...]] | None:
    """What `expr` reads, as the jq engine prunes its input by (`engine.compile_expression(expr).roots`: the
    catalog's stored fact, else `reads` of its tree); None: anything (or it does not parse)."""
    known = facts.roots(expr)
    if known is not None:
        return known[0]
    from workload_map.jq import parser  # the front end: for an expression no stored fact covers
    from workload_map.jq.reads import reads

    try:
        found = reads(parser.parse(expr))
    except (JqError, RecursionError):
        return None
    return None if found is None else frozenset(found)


def absent_parts(component: ComponentDefinition) -> frozenset[str]:
    """The parts a component's definition has no path for (no pod template, pod spec or metadata path, no
    fragmented spec, scale or status definition): None in every resolution, whatever the object holds."""
    spec = component.spec_definition
    absent = set()
    if spec is None or not spec.pod_template_spec_path:
        absent.add(PART_TEMPLATES)
    if spec is None or not spec.pod_spec_path:
        absent.add(PART_SPECS)
    if spec is None or not spec.metadata_path:
        absent.add(PART_METADATA)
    if spec is None or spec.fragmented_pod_spec_definition is None:
        absent.add(PART_FRAGMENTED)
    if component.scale_definition is None:
        absent.add(PART_SCALES)
    if component.status_definition is None:
        absent.add(PART_STATUS)
    return frozenset(absent)


def _object_paths(component: ComponentDefinition) -> Iterator[str]:
    """The paths of a component whose outputs are objects read whole: pod template, pod spec, metadata."""
    spec = component.spec_definition
    if spec is not None:
        for path in (spec.pod_template_spec_path, spec.pod_spec_path, spec.metadata_path):
            if path:
                yield path


def _expressions(component: ComponentDefinition, *, objects: bool = True) -> Iterator[str]:
    """Every workload-side expression of a component (pod selectors run on pods, actions are writes); without
    its object paths (`_object_paths`) unless `objects`."""
    if component.instance_id_path:
        yield component.instance_id_path
    spec = component.spec_definition
    if objects:
        yield from _object_paths(component)
    if spec is not None:
        fragmented = spec.fragmented_pod_spec_definition
        if fragmented is not None:
            for item in FRAGMENTED_FIELDS:
                path = getattr(fragmented, item.path_attr)
                if path:
                    yield path
    scale = component.scale_definition
    if scale is not None:
        for path in (scale.replicas_path, scale.min_replicas_path, scale.max_replicas_path):
            if path:
                yield path
    yield from _status_expressions(component)


def _status_expressions(component: ComponentDefinition) -> Iterator[str]:
    status = component.status_definition
    if status is not None:
        if status.phase_definition is not None:
            yield status.phase_definition.path
        if status.conditions_definition is not None:
            yield status.conditions_definition.path
        for _, matchers in status.status_mappings.entries():
            for matcher in matchers or ():
                if matcher.by_expression is not None:
                    yield matcher.by_expression.expression
        yield from reason_expressions(status)  # what the reason of the primary phase reads


__all__ = ["ComponentSlot", "StatusReads", "Structure", "status_reads", "structure_of"]
