"""`Workload`: a Kubernetes object resolved through its Karta definition (karta-spec §11, §12.1)."""

from __future__ import annotations

from _thread import allocate_lock
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workload_map.errors import ArgumentTypeError
from workload_map.jq import INPROCESS, EvaluationPolicy
from workload_map.model import GVK, Karta
from workload_map.model.validated import is_validated
from workload_map.resolve._json import NotJSONError, fast_copy, json_copy, merge_patch, plain_identity, shareable
from workload_map.resolve.component import Component
from workload_map.resolve.errors import (
    ComponentNotFound,
    ExtractionError,
    GVKMismatchError,
    InvalidDefinitionError,
    InvalidObjectError,
    SuspendNotSupported,
)
from workload_map.resolve.resolution import Resolution
from workload_map.resolve.results import ObjectRef, WorkloadStatus
from workload_map.resolve.session import Session
from workload_map.resolve.structure import StatusReads, structure_of
from workload_map.resolve.structure import status_reads as status_reads_of

if TYPE_CHECKING:
    from workload_map.resolve.tree import WorkloadTree
    from workload_map.validation import Finding


class Workload:
    """A Kubernetes object seen through its Karta definition.

    The caller's object is never changed. A dict JSON can carry as it stands (what msgspec encodes: plain JSON,
    tuples, timestamps; string keys, no NaN, no nesting over 500 levels) is read in place, not copied: what each
    read needs is converted from it when first read, and a write or `to_object()` works on a copy made then, so do
    not change the object while this workload or a `Resolution` from it is in use. Any other object is copied once
    (which names what JSON cannot carry).

    A plain dict (not `from_json`, its identity fields plain) is checked when read, as far as the read needs
    (issue 19; docs/resolve.md, step 2): the status (`.status`, `Component.status`) checks only what the
    definition's status expressions read and reads the object in place when that passes; every other read
    (`resolve()`, `tree()`, the components' parts, `to_object()`, `merge_patch()`, writes) first checks the whole
    object once. So the `InvalidObjectError` for an object JSON cannot carry comes from the first read that needs
    the part holding the bad value (and from each later one), not from the constructor; any other mapping, or a
    dict whose identity fields are not plain, is checked (or copied) here as before. Every component
    reads and writes one shared document, so an update through one component is seen by every later read;
    `to_object()` and `merge_patch()` give the result. Strict accessors (`components[...]`, `.status`,
    `Component.pod_specs`, ...) raise on a broken path; `resolve()` captures each failure as a `ComponentError`
    and returns everything that did resolve.

    Raises `InvalidDefinitionError` (validation errors; warnings do not block), `InvalidObjectError` (not a mapping;
    not JSON, for an object checked here) and `GVKMismatchError` (another group or kind than the definition's root;
    another version of the same group and kind resolves). `validate=False` skips validation (e.g. already done by
    the caller); `check_gvk=False` skips the kind check (partial objects in tests). `policy` (a
    `jq.EvaluationPolicy`; None: in process) says where the definition's jq expressions run, for this workload and
    its pods (`.policy`). `from_json=True` is the caller's word that `obj` is a dict just made by a JSON decoder
    (`json.loads`, msgspec) or by `workload_map`'s YAML loader and nests at most 500 levels (`workload_map.cluster`
    checks that of every object it lists): the plain-JSON check, one encode of the whole object, is skipped and the
    object is read in place. It is not checked, so give it only for what such a decoder made; anything else still
    takes the check (and a copy, or the error naming what JSON cannot carry).
    """

    def __init__(
        self,
        definition: Karta,
        obj: Mapping[str, Any],
        *,
        validate: bool = True,
        check_gvk: bool = True,
        policy: EvaluationPolicy | None = None,
        related: Sequence[Mapping[str, Any]] = (),
        from_json: bool = False,
    ) -> None:
        if not isinstance(definition, Karta):
            raise ArgumentTypeError("definition", "a Karta (see workload_map.load_definitions)", definition)
        if policy is not None and not isinstance(policy, EvaluationPolicy):
            raise ArgumentTypeError("policy", "a workload_map.jq.EvaluationPolicy or None", policy)
        if type(from_json) is not bool:
            raise ArgumentTypeError("from_json", "True or False", from_json)
        related = _related(related)
        if validate:
            if not is_validated(definition):  # the catalog's are (a call less per workload `wmap get` lists)
                _check_definition(definition)
        elif not is_validated(definition):  # a validated definition has passed the depth rule too
            from workload_map.validation.rules import component_depth_findings

            if too_deep := component_depth_findings(definition):  # a hard limit: views and plans are trees
                raise InvalidDefinitionError(definition.name, too_deep)
        if type(obj) is not dict and not isinstance(obj, Mapping):
            raise InvalidObjectError(
                f"the workload object must be a mapping (a Kubernetes object), not {type(obj).__name__}"
            )
        # A plain-JSON object is read in place (never changed: reads convert what they need, writes copy); any
        # other is copied once, which also names what JSON cannot carry. A decoder's fresh output needs no check:
        # the check's encode was a fifth of resolving the status alone (benchmarks/RESULTS.md). Any other dict
        # whose identity fields are plain is checked when read, as far as the read needs (`Snapshot`): the status
        # along what its expressions read, anything else the whole object (issue 19: the whole object's check
        # was more than reading the status).
        structure = structure_of(definition)
        status_reads: StatusReads | None = None
        identity_plain: bool | None
        if type(obj) is dict and not from_json and plain_identity(obj):
            document: dict[str, Any] = obj
            shared = identity_plain = True
            status_reads = status_reads_of(structure)
        else:
            shared = (from_json and type(obj) is dict) or shareable(obj)
            try:
                document = obj if shared else json_copy(obj)  # type: ignore[assignment]
            except NotJSONError as exc:
                raise InvalidObjectError(f"the workload object cannot be read as JSON: {exc}") from None
            identity_plain = plain_identity(document) if shared else None  # the resolution's identity too
        self.definition = definition
        self.object_gvk = _object_gvk(document if not shared or identity_plain else json_copy(document))
        if check_gvk:
            checked = _CHECKED_GVK
            if checked is None or checked[0] is not definition or checked[1] is not self.object_gvk:
                _check_gvk(definition, self.object_gvk)
        self.policy = INPROCESS if policy is None else policy
        self._session = Session(
            document,
            structure,
            policy=self.policy,
            related=related,
            shared=shared,
            identity_plain=identity_plain,
            status_reads=status_reads,
        )
        self._root = structure.root
        self._built: dict[str, Component] | None = None  # the components, made on first use (`.status` needs none)

    @property
    def _components(self) -> dict[str, Component]:
        built = self._built
        if built is None:
            built = {}
            for name, slot in self._session.structure.slots.items():
                built[name] = Component(slot, self._session, built)
            self._built = built
        return built

    def __repr__(self) -> str:
        ref = self.object_ref
        where = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
        return f"<Workload {ref.kind} {where!r} via {self.definition.name!r}>"

    # --- structure ---------------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.object_ref.name

    @property
    def object_ref(self) -> ObjectRef:
        """apiVersion, kind, name, namespace, uid and creation time of the object (cheap: no copy)."""
        return self._session.resolution.object

    @property
    def root(self) -> Component:
        return self._components[self.definition.root.name]

    @property
    def components(self) -> dict[str, Component]:
        """Every component by name: the root first, then the children in declaration order."""
        return dict(self._components)

    def component(self, name: str) -> Component:
        """The component of that name; `ComponentNotFound` (a KeyError) names the known ones."""
        try:
            return self._components[name]
        except KeyError:
            raise ComponentNotFound(name, self.definition.name, list(self._components)) from None

    def __iter__(self) -> Iterator[Component]:
        return iter(self._components.values())

    def children_of(self, name: str) -> list[Component]:
        """Direct children of a component, in declaration order."""
        return self.component(name).children

    def parent_of(self, name: str) -> Component | None:
        """The parent of a component (None for the root, or for a child whose ownerRef names no component)."""
        parent = self.component(name).parent
        return self._components.get(parent) if parent else None

    # --- status ------------------------------------------------------------------------------------------------

    @property
    def status(self) -> WorkloadStatus:
        """The root's status: primary `phase`, all matched `phases`, `raw_phase`, `conditions`."""
        status = self._session.status(self._root)  # what `self.root.status` reads, the components unmade
        if status is None:
            raise ExtractionError(
                self._root, "statusDefinition", "the root component has no statusDefinition; add one to read status"
            )
        return status

    # --- lenient resolution ------------------------------------------------------------------------------------

    def resolve(self) -> Resolution:
        """The resolution of the current document: frozen, each part computed on first use, failures in its
        `errors` (nothing raises). A later write makes a new one; this one keeps describing the document it was
        taken of. Raises `InvalidObjectError` when the object cannot be read as JSON (a plain dict's whole check,
        see `Workload`)."""
        self._session.snapshot.check_whole()
        return self._session.resolution

    def tree(self) -> WorkloadTree:
        """The structural tree: components, their instances sorted by key, child components (failures carried as
        errors on their nodes, as in `resolve()`)."""
        from workload_map.resolve.tree import build_tree  # here: a view or a plan never needs it (~1 ms at start)

        return build_tree(self.resolve())

    # --- suspend and resume ------------------------------------------------------------------------------------

    @property
    def can_suspend(self) -> bool:
        """True when some component of the definition has a suspendDefinition."""
        return any(component.can_suspend for component in self._components.values())

    def suspend(self) -> None:
        """Apply the suspend actions of every component that has a suspendDefinition (root first)."""
        with self._session.transaction():  # every component or none
            for component in self._suspendable("suspended"):
                component.suspend()

    def resume(self) -> None:
        """Apply the resume actions of every component that has a suspendDefinition (root first)."""
        with self._session.transaction():
            for component in self._suspendable("resumed"):
                component.resume()

    def _suspendable(self, verb: str) -> list[Component]:
        components = [component for component in self._components.values() if component.can_suspend]
        if not components:
            kind = self.definition.root_gvk
            raise SuspendNotSupported(
                self.root.name,
                "suspendDefinition",
                f"{kind.kind if kind else 'this workload type'} cannot be {verb}: definition "
                f"{self.definition.name!r} has no suspendDefinition",
            )
        return components

    # --- the result --------------------------------------------------------------------------------------------

    @property
    def modified(self) -> bool:
        """True once any write changed the document."""
        return self._session.original is not None and self._session.original != self._session.obj

    def to_object(self) -> dict[str, Any]:
        """The current document as a plain dict, ready to apply; it must still be a Kubernetes object."""
        obj = self._session.obj
        metadata = obj.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        for missing, present in (
            ("apiVersion", obj.get("apiVersion")),
            ("kind", obj.get("kind")),
            ("metadata.name or metadata.generateName", metadata.get("name") or metadata.get("generateName")),
        ):
            if not present:
                raise InvalidObjectError(f"invalid Kubernetes object: missing {missing}")
        return fast_copy(obj)  # type: ignore[no-any-return]

    def merge_patch(self) -> dict[str, Any]:
        """The JSON merge patch (RFC 7386) from the original object to the current document; `{}` if unchanged."""
        self._session.snapshot.check_whole()
        original = self._session.original
        if original is None:
            return {}
        patch: dict[str, Any] = merge_patch(original, self._session.obj)
        return patch

    diff_patch = merge_patch


def resolve(
    definition: Karta,
    obj: Mapping[str, Any],
    *,
    validate: bool = True,
    check_gvk: bool = True,
    policy: EvaluationPolicy | None = None,
    related: Sequence[Mapping[str, Any]] = (),
    from_json: bool = False,
) -> Resolution:
    """Resolve `obj` through `definition`: the frozen `Resolution` (see `Workload.resolve`). `related` are the
    objects a definition may reference besides `obj` (supplied by the caller: resolving never fetches);
    `from_json` as for `Workload`."""
    return Workload(
        definition, obj, validate=validate, check_gvk=check_gvk, policy=policy, related=related, from_json=from_json
    ).resolve()


# --- helpers ------------------------------------------------------------------------------------------------------


def _related(related: Any) -> tuple[Mapping[str, Any], ...]:
    if type(related) is tuple and not related:  # the default: nothing to check (two ABC checks per workload)
        return ()
    if isinstance(related, Mapping | str | bytes) or not isinstance(related, Iterable):
        raise ArgumentTypeError("related", "a sequence of objects (mappings)", related)
    found = tuple(related)
    for index, item in enumerate(found):
        if not isinstance(item, Mapping):
            raise ArgumentTypeError(f"related[{index}]", "a mapping (a Kubernetes object)", item)
    return found


# (apiVersion, kind) -> its GVK (frozen, so one object serves every workload of that kind); bounded
_GVKS: dict[tuple[str, str], GVK] = {}
_GVKS_MAX = 1024
# the last (definition, GVK) pair `_check_gvk` passed (GVKs come from `_GVKS`, so identity is equality here): the
# objects of one LIST pass it once, not once each
_CHECKED_GVK: tuple[Karta, GVK] | None = None


def _object_gvk(obj: Mapping[str, Any]) -> GVK | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if type(api_version) is str and type(kind) is str and api_version and kind:
        found = _GVKS.get((api_version, kind))
        if found is not None:
            return found
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        return None
    gvk = GVK.from_api_version(api_version, kind)
    if type(api_version) is str and type(kind) is str:
        if len(_GVKS) >= _GVKS_MAX:
            _GVKS.clear()
        _GVKS[(api_version, kind)] = gvk
    return gvk


def _check_gvk(definition: Karta, actual: GVK | None) -> None:
    global _CHECKED_GVK
    expected = definition.root_gvk
    if expected is None or not expected.kind:
        return
    wanted = f"{expected.api_version}, kind {expected.kind}"
    if actual is None:
        raise GVKMismatchError(
            f"the object has no apiVersion or kind; definition {definition.name!r} resolves {wanted}",
            expected=str(expected),
            actual="",
        )
    if actual.group != expected.group or actual.kind != expected.kind:
        hint = ""
        if actual.group == expected.group and actual.kind.lower() == expected.kind.lower():
            hint = " (kinds are case-sensitive)"
        raise GVKMismatchError(
            f"the object is {actual.api_version}, kind {actual.kind}, but definition {definition.name!r} resolves "
            f"{wanted}{hint}; pick the definition for this kind",
            expected=str(expected),
            actual=str(actual),
        )
    _CHECKED_GVK = (definition, actual)


def _check_definition(definition: Karta) -> None:
    global _CLEAN
    if definition is _CLEAN:
        return
    findings = _validation_errors(definition)
    if findings:
        raise InvalidDefinitionError(definition.name, findings)
    _CLEAN = definition


# The definition that passed `_check_definition` last: a run of workloads of one definition (a `get` of one type, a
# benchmark) skips the validation cache's lock and LRU update (frozen: the same object validates the same).
_CLEAN: Karta | None = None


# id(definition) -> (definition, its error findings), least recently used first. Holding the definition keeps its
# id from being reused by another object while the entry lives.
_VALIDATED: OrderedDict[int, tuple[Karta, list[Finding]]] = OrderedDict()
_VALIDATED_MAX = 256
_VALIDATED_LOCK = allocate_lock()  # threading.Lock() without importing threading (issue 19: start-up)
_VALIDATIONS = 0  # definitions validated (cache misses) since the process started; read by the tests


def _validation_errors(definition: Karta) -> list[Finding]:
    """The error findings of the validator (warnings never block), cached by the definition's identity.

    The model is frozen, so one definition object always validates the same: resolving many objects through it
    validates it once (a changed copy made with `msgspec.structs.replace` is another object, validated anew).
    Thread-safe; two threads missing at once may both validate, with equal results.
    """
    global _VALIDATIONS
    if is_validated(definition):  # the catalog's, validated when its precompiled blob was built
        return []
    key = id(definition)
    with _VALIDATED_LOCK:
        held = _VALIDATED.get(key)
        if held is not None and held[0] is definition:
            _VALIDATED.move_to_end(key)
            return held[1]
    # imported here, on a miss only: resolving catalog workloads never loads the validation layer (issue 19:
    # start-up), and a cached definition does not pay the import statements on every workload
    from workload_map.validation import errors
    from workload_map.validation import validate as validate_definition

    found = errors(validate_definition(definition))
    with _VALIDATED_LOCK:
        _VALIDATIONS += 1
        _VALIDATED[key] = (definition, found)
        _VALIDATED.move_to_end(key)
        while len(_VALIDATED) > _VALIDATED_MAX:
            _VALIDATED.popitem(last=False)
    return found


__all__ = ["Workload", "resolve"]
