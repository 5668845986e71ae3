"""The one path from inputs to workloads, shared by the file and the live front ends:

    manifests (-f)  --from_manifests-->  ResolvedWorkload (label, Resolution, origin)  --cli.views-->  WorkloadView
    a live object   --from_live------->                                                --cli.plans-->  gang documents

`resolve_object` is the step both take: the object through its definition, under the jq policy the caller chooses
for that definition (`policy_for(name, origin)`: `cli.jqmode.definition_policy` in a command). `from_manifests`
says, for each document that is not resolved, why (`Untyped`, `Uncovered`, `Failed`), and leaves what to make of
it to the command (`describe` lists and skips, `gang` warns or stops).

A definition with cross-object references (`workloadmap.io/references`: a TrainJob's runtime) is resolved with
the referenced objects' content when the caller has them: `from_manifests` looks for them among the input's own
documents and the `related` objects (`--with FILE`), and says which ones are missing in the workload's `notes`; a
document that is only referenced (the runtime) is `Uncovered` with `referenced_by` set. The live front end reads
them from the cluster (`cluster.references`) and passes them to `from_live`.

Nothing here prints or reads the run's state. The view step (`cli.views`) and the gang step (`cli.plans`) are
modules of their own so that `describe` never imports `workload_map.gang` and `gang` never imports
`workload_map.view`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cli.errors import CLIError
from workload_map.cli.manifests import Manifest
from workload_map.jq import EvaluationPolicy
from workload_map.model.extensions import REFERENCES
from workload_map.resolve import Resolution, ResolveError, Workload

if TYPE_CHECKING:
    from workload_map.catalog import DefinitionRegistry
    from workload_map.cluster import LiveWorkload
    from workload_map.model import Karta
    from workload_map.resolve.references import ObjectReference

    # The jq policy of a definition, by its name and origin (`cli.jqmode.definition_policy`). For annotations only:
    # subscripting Callable costs ~0.12 M instructions at import, on every describe's path (issue 19).
    PolicyFor = Callable[[str, str], EvaluationPolicy]


class ResolvedWorkload(msgspec.Struct, frozen=True):
    """One workload of the input resolved through its definition.

    `label` names it in messages (the manifest's file and document, or `Kind/name` for a live object); `origin` is
    where its definition came from (`local`, `cluster`, `catalog`). `workload` is the `Workload` the resolution
    was taken of, for strict reads (`get` reads the root status strictly). File mode keeps the `manifest` and, when
    the definition was written for another version of the kind, that version (`definition_version`).
    """

    label: str
    resolution: Resolution
    origin: str
    workload: Workload
    manifest: Manifest | None = None
    definition_version: str | None = None
    notes: tuple[str, ...] = ()  # what the command should warn about it (a referenced object not found)


class Untyped(msgspec.Struct, frozen=True):
    """A document without an apiVersion and kind: there is nothing to find its definition by."""

    manifest: Manifest


class Uncovered(msgspec.Struct, frozen=True):
    """A document no definition covers; `referenced_by` names the workload of the input that refers to it (a
    TrainJob's runtime), which is then not a workload to warn about."""

    manifest: Manifest
    referenced_by: str | None = None


class Failed(msgspec.Struct, frozen=True):
    """A document its definition does not resolve (an invalid definition, or an object of another kind)."""

    manifest: Manifest
    error: ResolveError


class Duplicate(msgspec.Struct, frozen=True):
    """A document naming the same object as an earlier one of the input (same group, kind, namespace and name):
    described once, at its first occurrence (`first` is that one's label)."""

    manifest: Manifest
    first: str


Found = ResolvedWorkload | Untyped | Uncovered | Failed | Duplicate


def resolve_object(
    karta: Karta,
    obj: Mapping[str, Any],
    *,
    label: str,
    origin: str,
    policy: EvaluationPolicy,
    validate: bool = True,
    manifest: Manifest | None = None,
    definition_version: str | None = None,
    related: Sequence[Mapping[str, Any]] | None = None,
    missing: str | None = "is not in the input (give it with --with FILE)",
    from_json: bool = False,
) -> ResolvedWorkload:
    """`obj` resolved through `karta`, its expressions evaluated under `policy`. `validate=False` skips checking the
    definition (done once already). With `related`, the objects the definition refers to are looked for among
    them and offered to its expressions (`resolve.references.follow`); each one not found is a note ending with
    `missing` (None: no note, the caller said why). `from_json`: `obj` is as a LIST through `workload_map.cluster`
    gave it (see `Workload`). Raises `ResolveError` when the definition or the object is
    invalid, or when the policy's recorder does not admit the workload (its definition was stopped earlier in the
    command, or the command's jq budget is spent: `cli.jqmode`)."""
    _admit(policy)
    notes: tuple[str, ...] = ()
    if related is not None and _needs_references(karta):
        from workload_map.resolve.references import follow

        followed = follow(karta, obj, related, policy=policy)
        from_json = from_json and followed.object is obj  # a new object from the references: checked as any
        obj = followed.object
        notes = (*followed.problems, *(_missing_note(karta, ref, missing) for ref in followed.missing if missing))
    workload = Workload(karta, obj, validate=validate, policy=policy, from_json=from_json)
    return ResolvedWorkload(label, workload.resolve(), origin, workload, manifest, definition_version, notes)


def admitted_workload(
    karta: Karta, obj: Mapping[str, Any], *, policy: EvaluationPolicy, validate: bool = True, from_json: bool = False
) -> Workload:
    """`obj`'s `Workload` under `policy`, as `resolve_object` makes it for an object without references, but no
    `Resolution` taken of it: for a caller that reads only its status (`get`'s rows; the resolution's components
    and identity were a sixth of a Deployment's row, issue 19). Raises `ResolveError` as `resolve_object` does."""
    _admit(policy)
    return Workload(karta, obj, validate=validate, policy=policy, from_json=from_json)


def _admit(policy: EvaluationPolicy) -> None:
    admit = getattr(policy.stops, "admit", None)  # cli.jqmode's recorder: a stopped definition, a spent budget
    if admit is not None:
        admit()  # raises a ResolveError (cli.jqmode.NotEvaluated)


def _needs_references(karta: Karta) -> bool:
    """`resolve.references.needs_references`, asked only of a definition with the references annotation: a
    describe of a workload whose definition has none never imports the references modules (~1.4 million
    instructions; issue 19: start-up)."""
    metadata = karta.metadata
    annotations = metadata.annotations if metadata is not None else None
    if not annotations or REFERENCES not in annotations:
        return False
    from workload_map.resolve.references import needs_references

    return needs_references(karta)


def _missing_note(karta: Karta, reference: ObjectReference, where: str | None) -> str:
    from workload_map.resolve.references import without_reference  # a definition with references (see above)

    what = f"reference {reference.name}: {reference.describe()}"
    return f"{what} {where}: {without_reference(karta, reference)}"


def nothing_read(workload: ResolvedWorkload) -> bool:
    """Whether every component that holds pods failed to read its pod spec or replicas: the workload can still be
    shown or planned, but nothing of it was read, so the command ends with exit 1 (`unread_error`)."""
    resolution = workload.resolution
    holders = {component.name for component in resolution.karta.components if component.has_pod_definition}
    failed = {
        error.component
        for error in resolution.errors
        if str(getattr(error, "field", "")).startswith(("specDefinition", "scaleDefinition"))
    }
    return bool(holders) and holders <= failed


def unread_error(labels: Sequence[str]) -> CLIError:
    """The exit-1 error of a command some of whose workloads (`labels`, at least one) nothing could be read of."""
    more = len(labels) - 1
    tail = f" (and {more} more)" if more else ""
    return CLIError(
        f"nothing of {labels[0]}{tail} could be read: every component's pod spec or replicas failed (see the warnings)",
        hint="check the manifest against its definition: wmap validate DEFINITION --against MANIFEST",
    )


def from_manifests(
    manifests: Iterable[Manifest],
    registry: DefinitionRegistry,
    policy_for: PolicyFor,
    related: Sequence[Mapping[str, Any]] = (),
) -> Iterator[Found]:
    """Each document, in order: resolved through the registry's definition for its kind, or why not. Lazy: a
    document is resolved when the caller asks for it. A document naming an object seen earlier in the input is a
    `Duplicate` (an object given twice is one workload, not two to sum). The objects a definition refers to are
    looked for among the documents and `related` (see the module docstring)."""
    documents = list(manifests)
    pool = [*(m.value for m in documents if isinstance(m.value, Mapping)), *related]
    referenced = _referenced(documents, registry, policy_for)
    seen: dict[tuple[str, str, str, str], str] = {}
    for manifest in documents:
        if not manifest.has_type:
            yield Untyped(manifest)
            continue
        identity = _identity(manifest)
        if identity is not None:
            first = seen.setdefault(identity, manifest.label)
            if first != manifest.label:
                yield Duplicate(manifest, first)
                continue
        chosen = registry.for_object(manifest.value)
        if chosen is None:
            referrer = next((who for who, ref in referenced if ref.matches(manifest.value)), None)
            yield Uncovered(manifest, referrer)
            continue
        root = chosen.karta.root_gvk
        found: Found
        try:
            found = resolve_object(
                chosen.karta,
                manifest.value,
                label=manifest.label,
                origin=chosen.origin,
                policy=policy_for(chosen.karta.name, chosen.origin),
                manifest=manifest,
                definition_version=None if chosen.exact or root is None else root.version,
                related=pool,
            )
        except ResolveError as error:
            found = Failed(manifest, error)
        yield found


def _referenced(
    documents: Sequence[Manifest], registry: DefinitionRegistry, policy_for: PolicyFor
) -> list[tuple[str, ObjectReference]]:
    """(workload `Kind/name`, reference) for every reference a covered document of the input makes."""
    found: list[tuple[str, ObjectReference]] = []
    for manifest in documents:
        if not manifest.has_type or not isinstance(manifest.value, Mapping):
            continue
        chosen = registry.for_object(manifest.value)
        if chosen is None or not _needs_references(chosen.karta):
            continue
        from workload_map.resolve.references import references_of

        try:
            wanted, _ = references_of(chosen.karta, manifest.value, policy=policy_for(chosen.karta.name, chosen.origin))
        except ResolveError:
            continue
        found += [(f"{manifest.kind}/{manifest.name}", reference) for reference in wanted]
    return found


def from_live(
    live: LiveWorkload, label: str, policy_for: PolicyFor, related: Sequence[Mapping[str, Any]] | None = None
) -> ResolvedWorkload:
    """A workload read from the cluster, resolved through the definition its type was found by, with the
    `related` objects its definition refers to (read by the caller, which says itself why one is missing). Raises
    `ResolveError`."""
    definition = live.type.definition
    return resolve_object(
        definition.karta,
        live.object,
        label=label,
        origin=definition.origin,
        policy=policy_for(definition.karta.name, definition.origin),
        related=related,
        missing=None,
    )


def duplicate_message(duplicate: Duplicate) -> str:
    """The one warning for an object given twice."""
    manifest = duplicate.manifest
    return (
        f"{manifest.kind}/{manifest.name} in {manifest.label} is the same object as in {duplicate.first}: "
        f"described once"
    )


def _identity(manifest: Manifest) -> tuple[str, str, str, str] | None:
    """(group, kind, namespace, name) of a named object; None for one with only a generateName (each is new)."""
    metadata = manifest.value.get("metadata") if isinstance(manifest.value, Mapping) else None
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        return None
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    group = manifest.api_version.rpartition("/")[0]
    return group, manifest.kind, namespace if isinstance(namespace, str) else "", name
