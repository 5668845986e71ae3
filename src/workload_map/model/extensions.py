"""Definition extensions that live only in `metadata.annotations` under `workloadmap.io/`.

Upstream's schema rejects unknown spec fields, so what this project adds to a Karta is written as annotations: a
definition stays loadable by upstream (which ignores them) and by the API server. This module parses them; the
layers that use them (the resource arithmetic, the validator) import it. See docs/definitions.md, "Extensions".

`workloadmap.io/resource-aliases`: how a framework's own resource keys map onto Kubernetes resource names, for CRDs
that write resources in a shape of their own (Dynamo v1alpha1's `limits: {gpu: "1", gpuType: ...}`). A JSON object
whose keys are the keys the framework writes inside its requests and limits, and whose values are

- a string: the Kubernetes resource name the key is counted as (`"gpu": "nvidia.com/gpu"`);
- `null`: the key is not a resource (`"gpuType": null`);
- `{"nameFrom": "<key>", "default": "<name>"}`: counted as the resource the sibling key `<key>` names, else as
  `<name>` (`"gpu": {"nameFrom": "gpuType", "default": "nvidia.com/gpu"}`);
- `{"entries": true}`: the key holds a map of Kubernetes resource names to quantities (Dynamo's `custom`).

`workloadmap.io/resources-shape: resource-list`: the CR-level resources the definition reads
(`fragmentedPodSpecDefinition.resourcesPath`) are one flat resource list, applied as both requests and limits
(NIMCache's `spec.resources: {cpu, memory}`), instead of a ResourceRequirements object.

Both apply where a resolution computes one replica's requests and builds a pod template from fragments; the paths
themselves stay plain jq paths, so write-back still works.

`workloadmap.io/display-names`: what the text outputs call a component (the tree, the resources table), a JSON
object of component name to display name (`{"workload-worker": "decode-worker"}`); the view and its JSON keep the
component names.

`workloadmap.io/copies`: how many objects of its kind each instance of a component stands for, when one scale path
counts objects times pods (a JobSet's replicatedJob: `replicas` Jobs of `parallelism` pods): a JSON object of
component name to a jq expression that gives one number per instance, in instance order
(`{"replicatedjob": ".spec.replicatedJobs[]? | .replicas // 1"}`); the text outputs then say `2 x Job of 4 pods`.

`workloadmap.io/groups`: instances of a component the text outputs show under a heading of their own (a Grove
scaling group over its cliques): a JSON object of component name to a jq expression that gives one value per
instance, in instance order: null (not grouped), a group name, or `{"name": ..., "copies": n}` (the group stands
for n copies of its instances' pods: `4 (2 x 2 pods)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from workload_map._regex import LazyPattern

__all__ = [
    "COPIES",
    "DISPLAY_NAMES",
    "GROUPS",
    "REFERENCES",
    "RESOURCES_SHAPE",
    "RESOURCES_SHAPE_LIST",
    "RESOURCE_ALIASES",
    "ResourceAlias",
    "ResourceAliases",
    "copies_expressions",
    "copies_problems",
    "display_name_problems",
    "display_names",
    "groups_expressions",
    "groups_problems",
    "is_valid_resource_name",
    "resource_alias_problems",
    "resource_aliases",
]

REFERENCES: Final = "workloadmap.io/references"
"""The annotation of a definition's cross-object references (read by `model.references`)."""

RESOURCE_ALIASES: Final = "workloadmap.io/resource-aliases"
RESOURCES_SHAPE: Final = "workloadmap.io/resources-shape"
RESOURCES_SHAPE_LIST: Final = "resource-list"
_SHAPES: Final = ("resource-requirements", RESOURCES_SHAPE_LIST)
DISPLAY_NAMES: Final = "workloadmap.io/display-names"
MAX_DISPLAY_NAME: Final = 63  # a display name is a label a person reads, as short as a Kubernetes name


def display_names(annotations: Mapping[str, str] | None) -> dict[str, str]:
    """Component name -> display name from `workloadmap.io/display-names`; lenient: a malformed annotation or
    entry is left out (`display_name_problems` says what is wrong)."""
    return _display(annotations)[0]


def display_name_problems(annotations: Mapping[str, str] | None) -> list[str]:
    """What is wrong with `workloadmap.io/display-names`, one message per problem."""
    return _display(annotations)[1]


def _display(annotations: Mapping[str, str] | None) -> tuple[dict[str, str], list[str]]:
    names, problems = _string_map(annotations, DISPLAY_NAMES, "display name", '{"worker": "decode-worker"}')
    kept: dict[str, str] = {}
    for component, shown in names.items():
        if len(shown) > MAX_DISPLAY_NAME or any(not char.isprintable() for char in shown):
            problems.append(f"{component!r}: a display name is at most {MAX_DISPLAY_NAME} printable characters")
        else:
            kept[component] = shown
    return kept, problems


COPIES: Final = "workloadmap.io/copies"


def copies_expressions(annotations: Mapping[str, str] | None) -> dict[str, str]:
    """Component name -> the jq expression of `workloadmap.io/copies` (one number per instance); lenient, as
    `display_names`."""
    return _string_map(
        annotations, COPIES, "jq expression", '{"replicatedjob": ".spec.replicatedJobs[]? | .replicas"}'
    )[0]


def copies_problems(annotations: Mapping[str, str] | None) -> list[str]:
    """What is wrong with `workloadmap.io/copies`, one message per problem."""
    return _string_map(annotations, COPIES, "jq expression", "")[1]


GROUPS: Final = "workloadmap.io/groups"


def groups_expressions(annotations: Mapping[str, str] | None) -> dict[str, str]:
    """Component name -> the jq expression of `workloadmap.io/groups` (one group or null per instance); lenient,
    as `display_names`."""
    return _string_map(annotations, GROUPS, "jq expression", '{"clique": "<a group name or null per clique>"}')[0]


def groups_problems(annotations: Mapping[str, str] | None) -> list[str]:
    """What is wrong with `workloadmap.io/groups`, one message per problem."""
    return _string_map(annotations, GROUPS, "jq expression", "")[1]


def _json_loads(text: str) -> Any:
    """`json.loads(text)`, through msgspec's decoder where it takes the text (a definition's annotations are plain
    JSON objects, and a start-up then never imports json; issue 19). msgspec refuses some texts json reads (NaN,
    Infinity, 1e999, lone surrogate escapes) and, as tests/unit/test_model_extensions_json.py checks, reads none
    that json refuses and gives the same value for every text both read; so on a refusal json decides, its value or
    its error (a ValueError) as before."""
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        import json

        return json.loads(text)


def _string_map(
    annotations: Mapping[str, str] | None, key: str, what: str, example: str
) -> tuple[dict[str, str], list[str]]:
    """A JSON object of component name to a non-empty string, from the annotation `key`."""
    raw = (annotations or {}).get(key)
    if raw is None:
        return {}, []
    try:
        value = _json_loads(raw)
    except ValueError as exc:
        return {}, [f"not JSON: {exc}"]
    if not isinstance(value, dict):
        shown = f", e.g. {example}" if example else ""
        return {}, [f"a JSON object of component name to {what}{shown}"]
    found: dict[str, str] = {}
    problems: list[str] = []
    for component, text in value.items():
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{component!r}: the {what} must be a non-empty string")
        else:
            found[component] = text.strip()
    return found, problems


class ResourceAlias(msgspec.Struct, frozen=True):
    """How one framework key is counted: as `name` (None: not a resource), or as the resource its sibling key
    `name_from` names (falling back to `name`), or (`entries`) as a map of resource names to quantities."""

    name: str | None
    name_from: str | None = None
    entries: bool = False

    def target(self, siblings: Mapping[str, object]) -> str | None:
        """The resource name this key is counted as, given the other keys of the same requests/limits map."""
        if self.name_from is not None:
            named = siblings.get(self.name_from)
            if isinstance(named, str) and named:
                return named
        return self.name


class ResourceAliases(msgspec.Struct, frozen=True):
    """A definition's resource conventions: key aliases, and whether CR-level resources are one flat list."""

    aliases: Mapping[str, ResourceAlias] = msgspec.field(default_factory=dict)
    flat: bool = False

    def __bool__(self) -> bool:
        return bool(self.aliases) or self.flat

    def names(self) -> list[str]:
        """Every Kubernetes resource name the aliases count a key as (targets and defaults), in key order."""
        return [alias.name for alias in self.aliases.values() if alias.name is not None]


def resource_aliases(annotations: Mapping[str, str] | None) -> ResourceAliases | None:
    """The resource conventions in a definition's annotations; None when it sets neither annotation.

    Lenient: a malformed annotation is left out (`resource_alias_problems` says what is wrong with it; the
    validator reports it as an error), so a resolution then counts the resources as written.
    """
    return _read(annotations)[0]


def resource_alias_problems(annotations: Mapping[str, str] | None) -> list[tuple[str, str]]:
    """(annotation, message) for each malformed resource annotation of a definition; empty when all are fine."""
    return _read(annotations)[1]


def _read(annotations: Mapping[str, str] | None) -> tuple[ResourceAliases | None, list[tuple[str, str]]]:
    if not annotations:
        return None, []
    text = annotations.get(RESOURCE_ALIASES)
    shape = annotations.get(RESOURCES_SHAPE)
    if text is None and shape is None:
        return None, []
    problems: list[tuple[str, str]] = []
    aliases: dict[str, ResourceAlias] = {}
    if text is not None:
        found = _parse_aliases(text)
        if isinstance(found, str):
            problems.append((RESOURCE_ALIASES, found))
        else:
            aliases = found
    if shape is not None and shape not in _SHAPES:
        problems.append((RESOURCES_SHAPE, f"expected one of {', '.join(_SHAPES)}, got {shape!r}"))
    return ResourceAliases(aliases, flat=shape == RESOURCES_SHAPE_LIST), problems


def _parse_aliases(text: str) -> dict[str, ResourceAlias] | str:
    """The aliases, or what is wrong with the annotation."""
    try:
        value = _json_loads(text)
    except ValueError as error:
        return f"not JSON: {error}"
    if not isinstance(value, dict):
        return f"expected a JSON object, got {_json_type(value)}"
    out: dict[str, ResourceAlias] = {}
    for key, target in value.items():
        if not key:
            return "an empty key"
        alias = _alias(key, target)
        if isinstance(alias, str):
            return alias
        out[key] = alias
    return out


def _alias(key: str, target: object) -> ResourceAlias | str:
    where = f"{key!r}"
    if target is None:
        return ResourceAlias(None)
    if isinstance(target, str):
        if not target:
            return f"{where}: an empty resource name (use null for a key that is not a resource)"
        return ResourceAlias(target)
    if isinstance(target, dict):
        if set(target) == {"entries"}:
            if target["entries"] is not True:
                return f"{where}: entries must be true"
            return ResourceAlias(None, entries=True)
        unknown = sorted(set(target) - {"nameFrom", "default"})
        if unknown or "nameFrom" not in target:
            expected = '{"nameFrom": <key>, "default": <resource name>} or {"entries": true}'
            return f"{where}: expected {expected}" + (f" (unknown {', '.join(unknown)})" if unknown else "")
        name_from, default = target["nameFrom"], target.get("default")
        if not isinstance(name_from, str) or not name_from:
            return f"{where}: nameFrom must be a non-empty key"
        if default is not None and (not isinstance(default, str) or not default):
            return f"{where}: default must be a resource name or null"
        return ResourceAlias(default, name_from=name_from)
    return f"{where}: expected a resource name, null or an object, got {_json_type(target)}"


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object", type(None): "null"}.get(type(value), type(value).__name__)


# Kubernetes' rule for a container's resource names (k8s.io/kubernetes pkg/apis/core/validation,
# validateContainerResourceName): a qualified name; without a domain prefix only the standard container resources.
_NAME: Final = LazyPattern(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_LABEL: Final = LazyPattern(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_STANDARD: Final = frozenset({"cpu", "memory", "ephemeral-storage"})


def is_valid_resource_name(name: str) -> bool:
    """Whether a container may request `name`: `cpu`, `memory`, `ephemeral-storage`, `hugepages-<size>`, or a
    domain-prefixed extended resource (`nvidia.com/gpu`) outside the `kubernetes.io` domain. A bare `gpu` is not."""
    if "/" not in name:
        return name in _STANDARD or (name.startswith("hugepages-") and len(name) > len("hugepages-"))
    prefix, _, local = name.partition("/")
    if not local or len(local) > 63 or not _NAME.fullmatch(local) or len(prefix) > 253:
        return False
    if not all(_DNS_LABEL.fullmatch(label) for label in prefix.split(".")):
        return False
    return prefix != "kubernetes.io" and not prefix.endswith(".kubernetes.io")
