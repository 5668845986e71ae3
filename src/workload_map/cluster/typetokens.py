"""TYPE tokens (`pytorchjob`, `pytorchjobs.kubeflow.org`, `PyTorchJob.v1.kubeflow.org`, `deploy`) to a definition
and the served resource to read it through. Pure: works on a discovery document and a definition registry.

The token is matched as kubectl matches a resource argument (kli-cli §2.3), case-insensitively:

1. Readings: a plain token is a resource name; a dotted one is read as `resource.version.group` (with two or more
   dots) and then as `resource.group`. A resource name is a plural, a singular, a short name or a kind.
2. Discovery first: the served resources the reading names, one per group at the group's preferred version (or the
   version given). Those a definition covers (`registry.for_gvk`, version fallback included) are the candidates:
   one is the answer; several in different groups are ambiguous unless exactly one is a built-in group (core,
   `apps`, `batch`, ...), which wins as in kubectl.
3. Then the definitions themselves, the token read as `Kind`, `kind.group` or `kind.version.group` (plural kinds
   accepted): this is how a type whose CRD is not installed still resolves (and then reads as "not installed"),
   and how a token that names only an uncovered served type (`service`) reaches a covered kind of that name.
4. Nothing: `TypeNotCovered` (exit 4). Several definitions of different GVKs: `AmbiguousType`, each suggestion a
   token that resolves to exactly one (exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

from workload_map.cluster.errors import AmbiguousType, TypeNotCovered

if TYPE_CHECKING:
    from workload_map.catalog import DefinitionRegistry, Resolved
    from workload_map.cluster.discovery import APIResource, DiscoveryDocument
    from workload_map.model import GVK


class Reading(msgspec.Struct, frozen=True):
    """One way to read a token: a name, optionally narrowed to a group and a version."""

    name: str
    group: str | None = None
    version: str | None = None


def readings(token: str) -> list[Reading]:
    """The readings of a token, most specific first (kubectl's `ParseResourceArg` / `ParseKindArg` order)."""
    lowered = token.strip().lower()
    parts = lowered.split(".")
    if len(parts) == 1:
        return [Reading(lowered)]
    found: list[Reading] = []
    if len(parts) >= 3:
        found.append(Reading(parts[0], group=".".join(parts[2:]), version=parts[1]))
    found.append(Reading(parts[0], group=".".join(parts[1:])))
    return found


class ResolvedType(msgspec.Struct, frozen=True):
    """What a TYPE token resolved to: the definition and, when the cluster serves the type, the resource."""

    token: str
    definition: Resolved
    group: str
    version: str
    kind: str
    resource: APIResource | None

    @property
    def served(self) -> bool:
        return self.resource is not None


def _is_builtin_group(group: str) -> bool:
    return "." not in group


def _served_candidates(reading: Reading, discovery: DiscoveryDocument) -> list[APIResource]:
    """One resource per (group, plural) the reading names, at the version given or the group's preferred one."""
    chosen: dict[tuple[str, str], APIResource] = {}
    for resource in discovery.by_name(reading.name):
        if reading.group is not None and resource.group != reading.group:
            continue
        if reading.version is not None and resource.version != reading.version:
            continue
        key = (resource.group, resource.plural)
        current = chosen.get(key)
        if current is None or discovery.version_rank(resource.group, resource.version) < discovery.version_rank(
            current.group, current.version
        ):
            chosen[key] = resource
    return sorted(chosen.values(), key=lambda r: (r.group, r.plural))


def resolve_type(token: str, discovery: DiscoveryDocument | None, registry: DefinitionRegistry) -> ResolvedType:
    """Resolve a TYPE token (see the module docstring). `discovery` None: the definitions alone (no cluster)."""
    token_readings = readings(token)
    if discovery is not None:
        for reading in token_readings:
            found = _through_discovery(token, reading, discovery, registry)
            if found is not None:
                return found
    for reading in token_readings:
        found = _through_definitions(token, reading, discovery, registry)
        if found is not None:
            return found
    raise TypeNotCovered(
        token, hint='"wmap definitions" lists the types covered; add a definition with --definitions FILE'
    )


def _through_discovery(
    token: str, reading: Reading, discovery: DiscoveryDocument, registry: DefinitionRegistry
) -> ResolvedType | None:
    covered: list[tuple[APIResource, Resolved]] = []
    for resource in _served_candidates(reading, discovery):
        definition = registry.for_gvk(resource.group, resource.version, resource.kind)
        if definition is not None:
            covered.append((resource, definition))
    if not covered:
        return None
    groups = {resource.group for resource, _ in covered}
    if len(groups) > 1:
        builtin = [item for item in covered if _is_builtin_group(item[0].group)]
        if len(builtin) == 1:
            covered = builtin
        else:
            names = sorted(
                f"{resource.plural}.{resource.group}" if resource.group else resource.plural for resource, _ in covered
            )
            raise AmbiguousType(
                f'"{token}" matches more than one type, retry with one of: {", ".join(names)}',
                names,
            )
    if len(covered) > 1:  # one group, several plurals (a kind served under two resource names)
        covered.sort(key=lambda item: (item[0].plural != reading.name, item[0].plural))
    resource, definition = covered[0]
    return ResolvedType(token, definition, resource.group, resource.version, resource.kind, resource)


def _root_gvk(definition: Resolved) -> GVK:
    gvk = definition.karta.root_gvk
    assert gvk is not None  # the registry indexes only definitions with a root GVK
    return gvk


def _through_definitions(
    token: str, reading: Reading, discovery: DiscoveryDocument | None, registry: DefinitionRegistry
) -> ResolvedType | None:
    entries = registry.by_kind(reading.name, reading.group)
    if reading.version is not None:
        entries = [e for e in entries if e.gvk is not None and e.gvk.version == reading.version]
    gvks = _distinct(e.gvk for e in entries if e.gvk is not None)
    if not gvks:
        return None
    if len(gvks) > 1:
        suggestions = sorted(
            f"{g.kind.lower()}.{g.version}.{g.group}" if g.group else f"{g.kind.lower()}.{g.version}" for g in gvks
        )
        raise AmbiguousType(
            f'"{token}" matches more than one Karta definition, retry with one of: {", ".join(suggestions)}',
            suggestions,
        )
    gvk = gvks[0]
    definition = registry.for_gvk(gvk.group, gvk.version, gvk.kind)
    if definition is None:  # pragma: no cover - by_kind lists only effective definitions
        return None
    resource = discovery.serving(gvk.group, gvk.version, gvk.kind) if discovery is not None else None
    if resource is not None:
        return ResolvedType(token, definition, resource.group, resource.version, resource.kind, resource)
    return ResolvedType(token, definition, gvk.group, gvk.version, gvk.kind, None)


def _distinct(gvks: Iterable[GVK]) -> list[GVK]:
    seen: dict[tuple[str, str, str], GVK] = {}
    for gvk in gvks:
        seen.setdefault((gvk.group, gvk.version, gvk.kind), gvk)
    return list(seen.values())
