"""The Karta definition format (`run.ai/v1alpha1`, kind `Karta`) as typed structs.

Attribute names are snake_case; wire names are the upstream camelCase ones, so a definition written for the Go
project loads unchanged and what we dump loads there. Unknown fields are rejected (a typo such as `runing` is an
error, not a silently ignored matcher). `None` means "absent": it is kept apart from an empty value wherever
upstream gives the two different meanings (`matchLabels: {}` is an error, an absent map is not; `ownerRef: ""` on
the root is an error, an absent one is not).
"""

# No `from __future__ import annotations` here: the annotations are evaluated once, when each class is made, so the
# catalog's decoder (and every other decoder over these types) gets them as objects; as strings, msgspec compiles
# and evaluates each one (some 170 `compile()` calls, ~0.7 ms of every start; issue 19). The classes are declared
# after the ones they name, so only `GVK.from_api_version`'s own name is quoted.
from typing import Any, ClassVar

import msgspec

API_VERSION = "run.ai/v1alpha1"
KIND = "Karta"

# The statuses a definition can map, in upstream's evaluation order (the order of `phases`).
STATUS_EVALUATION_ORDER: tuple[str, ...] = (
    "Resuming",
    "Suspending",
    "Suspended",
    "Running",
    "Failed",
    "Completed",
    "Initializing",
    "Degraded",
)
# The precedence that picks the one primary phase among the matched ones (conformance/README.md).
PRIMARY_PHASE_PRECEDENCE: tuple[str, ...] = (
    "Failed",
    "Completed",
    "Suspended",
    "Suspending",
    "Resuming",
    "Degraded",
    "Running",
    "Initializing",
)
UNDEFINED = "Undefined"


class _Wire(msgspec.Struct, rename="camel", forbid_unknown_fields=True, omit_defaults=True, kw_only=True, frozen=True):
    """Base of every definition struct: camelCase on the wire, unknown fields rejected, absent fields omitted.

    Frozen, with tuples for lists: a definition is final once built, so one object can be shared (the catalog
    registry hands out the same objects to every caller) and keyed by identity (the validation cache). Make a
    changed copy with `msgspec.structs.replace`.
    """


class GVK(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A Kubernetes group/version/kind; an empty group is the core API group.

    All three keys are always written: the CRD requires them, so `group: ""` must survive a round trip.
    """

    group: str = ""
    version: str = ""
    kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.group or 'core'}/{self.version}/{self.kind}"

    @classmethod
    def from_api_version(cls, api_version: str, kind: str) -> "GVK":
        group, _, version = api_version.rpartition("/")
        return cls(group=group, version=version, kind=kind)


# --- how to find the pod specs ------------------------------------------------------------------------------


class FragmentedPodSpecDefinition(_Wire, frozen=True):
    """Paths to the pod fields of a CRD that scatters them (the 11 fields upstream models)."""

    scheduler_name_path: str | None = None
    labels_path: str | None = None
    annotations_path: str | None = None
    resources_path: str | None = None
    resource_claims_path: str | None = None
    pod_affinity_path: str | None = None
    node_affinity_path: str | None = None
    containers_path: str | None = None
    container_path: str | None = None
    priority_class_name_path: str | None = None
    image_path: str | None = None


class SpecDefinition(_Wire, frozen=True):
    pod_template_spec_path: str | None = None
    pod_spec_path: str | None = None
    metadata_path: str | None = None
    fragmented_pod_spec_definition: FragmentedPodSpecDefinition | None = None

    @property
    def has_pod_definition(self) -> bool:
        """`metadataPath` alone does not make a component pod-bearing (upstream's predicate)."""
        return bool(self.pod_template_spec_path or self.pod_spec_path) or (
            self.fragmented_pod_spec_definition is not None
        )


class ScaleDefinition(_Wire, frozen=True):
    replicas_path: str | None = None
    min_replicas_path: str | None = None
    max_replicas_path: str | None = None


# --- status -------------------------------------------------------------------------------------------------


class PhaseDefinition(_Wire, frozen=True):
    path: str


class ConditionsDefinition(
    msgspec.Struct, rename="camel", forbid_unknown_fields=True, omit_defaults=False, kw_only=True, frozen=True
):
    """Where the conditions are and which keys they use.

    The CRD defaults are applied on load (upstream applies them only in the API server), and every field is
    written on dump so the Go library reads the same field names whether or not the definition went through
    the API server. `""` for message/reason means "do not read it" (`None` given in code becomes `""`).
    """

    path: str
    type_field_name: str = "type"
    status_field_name: str = "status"
    message_field_name: str | None = "message"
    reason_field_name: str | None = "reason"

    def __post_init__(self) -> None:
        # "Do not read it" has one spelling on the wire, "" (null means the CRD default there): keep one here too,
        # so a definition built in code dumps and reloads unchanged. This runs inside construction (msgspec's way
        # to finish a frozen struct), so the object is final before anyone sees it; the loader never passes None.
        if self.message_field_name is None:
            msgspec.structs.force_setattr(self, "message_field_name", "")
        if self.reason_field_name is None:
            msgspec.structs.force_setattr(self, "reason_field_name", "")


class ExpectedCondition(_Wire, frozen=True):
    type: str
    status: str | None = None
    reason: str | None = None


class ExpressionMatcher(_Wire, frozen=True):
    expression: str
    expected_result: str


class StatusMatcher(_Wire, frozen=True):
    """One way to recognise a status: every criterion set must hold; a matcher with none set always matches."""

    by_phase: str | None = None
    by_conditions: tuple[ExpectedCondition, ...] | None = None
    by_expression: ExpressionMatcher | None = None


class StatusMappings(_Wire, frozen=True):
    initializing: tuple[StatusMatcher, ...] | None = None
    running: tuple[StatusMatcher, ...] | None = None
    completed: tuple[StatusMatcher, ...] | None = None
    failed: tuple[StatusMatcher, ...] | None = None
    degraded: tuple[StatusMatcher, ...] | None = None
    suspended: tuple[StatusMatcher, ...] | None = None
    suspending: tuple[StatusMatcher, ...] | None = None
    resuming: tuple[StatusMatcher, ...] | None = None

    FIELD_BY_STATUS: ClassVar[dict[str, str]] = {status: status.lower() for status in STATUS_EVALUATION_ORDER}

    def entries(self) -> list[tuple[str, tuple[StatusMatcher, ...] | None]]:
        """(status, matchers) for all 8 statuses, in upstream's evaluation order."""
        return [(status, getattr(self, self.FIELD_BY_STATUS[status])) for status in STATUS_EVALUATION_ORDER]


class StatusDefinition(_Wire, kw_only=True, frozen=True):
    phase_definition: PhaseDefinition | None = None
    conditions_definition: ConditionsDefinition | None = None
    # Required (as in the CRD) yet declared last, for the readable dump order; kw_only allows it.
    status_mappings: StatusMappings


# --- suspend ------------------------------------------------------------------------------------------------


class Action(_Wire, frozen=True):
    """Set `path` to `value`, a JSON literal held in a string (`"true"`, `"\\"Suspended\\""`)."""

    path: str
    value: str


class SuspendDefinition(_Wire, frozen=True):
    suspend_actions: tuple[Action, ...]
    resume_actions: tuple[Action, ...]


# --- pod selectors ------------------------------------------------------------------------------------------


class ComponentTypeSelector(_Wire, frozen=True):
    key_path: str | None = None
    value: str | None = None
    match_labels: dict[str, str] | None = None


class ComponentInstanceSelector(_Wire, frozen=True):
    id_path: str


class ReplicaSelector(_Wire, frozen=True):
    key_path: str


class PodSelector(_Wire, frozen=True):
    component_type_selector: ComponentTypeSelector | None = None
    component_instance_selector: ComponentInstanceSelector | None = None
    replica_selector: ReplicaSelector | None = None


# --- components ---------------------------------------------------------------------------------------------


class ComponentDefinition(_Wire, frozen=True):
    name: str
    kind: GVK | None = None
    owner_ref: str | None = None
    spec_definition: SpecDefinition | None = None
    scale_definition: ScaleDefinition | None = None
    status_definition: StatusDefinition | None = None
    suspend_definition: SuspendDefinition | None = None
    instance_id_path: str | None = None
    pod_selector: PodSelector | None = None

    @property
    def has_pod_definition(self) -> bool:
        return self.spec_definition is not None and self.spec_definition.has_pod_definition


class StructureDefinition(_Wire, frozen=True):
    root_component: ComponentDefinition
    child_components: tuple[ComponentDefinition, ...] | None = None
    additional_child_kinds: tuple[GVK, ...] | None = None


# --- gang scheduling ----------------------------------------------------------------------------------------


class PodGroupMember(_Wire, frozen=True):
    component_name: str
    group_by_key_paths: tuple[str, ...] | None = None
    filters: tuple[str, ...] | None = None


class PodGroupDefinition(_Wire, frozen=True):
    """An entry of the alpha `podGroups` list."""

    name: str
    members: tuple[PodGroupMember, ...]


class TopologyConstraint(_Wire, frozen=True):
    topology_name: str
    preferred_topology_level: str | None = None
    required_topology_level: str | None = None


class SubGroup(_Wire, frozen=True):
    component_name: str
    topology: TopologyConstraint | None = None


class PodGroup(_Wire, frozen=True):
    """The KAI-native `podGroup` object; wins over `podGroups` when both are set."""

    name: str
    sub_groups: tuple[SubGroup, ...] | None = None
    topology: TopologyConstraint | None = None


class GangScheduling(_Wire, frozen=True):
    pod_groups: tuple[PodGroupDefinition, ...] | None = None
    pod_group: PodGroup | None = None


class OptimizationInstructions(_Wire, frozen=True):
    gang_scheduling: GangScheduling | None = None


# --- the resource -------------------------------------------------------------------------------------------


class KartaSpec(_Wire, frozen=True):
    structure_definition: StructureDefinition
    optimization_instructions: OptimizationInstructions | None = None


class ObjectMeta(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True, frozen=True):
    """The part of ObjectMeta a definition uses. Server-populated fields (uid, managedFields, ...) are dropped."""

    name: str = ""
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None


class Karta(msgspec.Struct, rename="camel", forbid_unknown_fields=True, omit_defaults=True, kw_only=True, frozen=True):
    """A whole definition. Field order is the dump order: apiVersion, kind, metadata, spec.

    `dump.to_dict` always writes apiVersion and kind (omit_defaults would otherwise drop them).
    """

    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: KartaSpec
    status: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def structure(self) -> StructureDefinition:
        return self.spec.structure_definition

    @property
    def root(self) -> ComponentDefinition:
        return self.spec.structure_definition.root_component

    @property
    def children(self) -> list[ComponentDefinition]:
        return list(self.spec.structure_definition.child_components or [])

    @property
    def components(self) -> list[ComponentDefinition]:
        """Root first, then children in declaration order."""
        return [self.root, *self.children]

    @property
    def root_gvk(self) -> GVK | None:
        return self.root.kind

    @property
    def gang_scheduling(self) -> GangScheduling | None:
        instructions = self.spec.optimization_instructions
        return instructions.gang_scheduling if instructions else None
