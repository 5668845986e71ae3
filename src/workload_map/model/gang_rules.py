"""The `workloadmap.io/gang` annotation: gang structure upstream's `podGroup` cannot say.

Upstream's KAI-native format (`gangScheduling.podGroup`) lists sub-groups by component and derives every minimum
from the components' scale; it has no per-sub-group minimum, no nesting below a component, no start-up order. A
definition adds those with this annotation (a YAML mapping in a string; upstream and KAI ignore it):

```yaml
metadata:
  annotations:
    workloadmap.io/gang: |
      noGang: <jq>                     # a string: this object needs no gang (the text says why); null: it does
      gangPerReplicaOf: group          # one gang per replica of this component (its replicaSelector places pods)
      gangKey: <jq on the pod>         # or: one gang per value this gives on the pods (a CronJob's Job run)
      minMember: <jq>                  # root: the pods required, alongside the sub-groups (null: not set)
      minSubGroup: <jq>                # root: the top-level sub-groups required (null: every one not deferred)
      layout: <jq>                     # null: the sub-groups below; a list: each gang's tree, node by node
      layoutIndex: <jq on the pod>     # a pod's index in its component (places it in a layout leaf)
      layoutKey: <jq on the pod>       # ... or the key of its layout leaf (a leaf's `key`)
      layoutGang: <jq on the pod>      # the layout gang a pod is in ("" the gang itself; an entry's `gang`)
      subGroups:
        <componentName>:               # a gangScheduling.podGroup.subGroups[].componentName
          name: headgroup              # the sub-group's name (default: the component's; per instance: the id)
          perInstance: true            # one sub-group per instance of the component, named by the instance id
          minMember: <jq>              # pods required (per leaf when `replicas` is set; null: from the scale)
          replicas: <jq>               # a leaf per replica, `<name>-replica-<index>`; the node is then a parent
          replicaKey: <jq on the pod>  # which replica a pod belongs to (required with replicas)
          minSubGroup: <jq>            # with replicas: the leaves required (null: all)
          deferred: <jq>               # a string: the controller creates these pods later (the text says when)
          after: leader                # ... once every pod of this sub-group's component is scheduled
```

Expressions on a sub-group see the workload and give one output per instance (in instance-id order, like the
component's own paths) or one output for all; `replicaKey` sees the pod. Every expression is a jq field of the
definition: it passes the same safety check and runs under the same containment (`jq_fields` lists them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from workload_map.model import yaml_subset

__all__ = [
    "GANG_RULES",
    "GangRules",
    "SubGroupRule",
    "gang_rule_expressions",
    "gang_rule_problems",
    "gang_rules",
]

GANG_RULES: Final = "workloadmap.io/gang"

_ROOT_EXPRESSIONS: Final = ("noGang", "minMember", "minSubGroup", "layout")
_LAYOUT_POD_KEYS: Final = ("layoutIndex", "layoutKey", "layoutGang")
_ROOT_KEYS: Final = frozenset({"gangPerReplicaOf", "gangKey", "subGroups", *_LAYOUT_POD_KEYS, *_ROOT_EXPRESSIONS})
_GROUP_EXPRESSIONS: Final = ("minMember", "replicas", "replicaKey", "minSubGroup", "deferred")
_GROUP_KEYS: Final = frozenset({"name", "perInstance", "after", *_GROUP_EXPRESSIONS})
_MAX_TEXT: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class SubGroupRule:
    """The extension's rules for the sub-group of one component (each jq, or None when not set)."""

    component: str
    name: str | None = None
    per_instance: bool = False
    min_member: str | None = None
    replicas: str | None = None
    replica_key: str | None = None
    min_sub_group: str | None = None
    deferred: str | None = None
    after: str | None = None


@dataclass(frozen=True, slots=True)
class GangRules:
    """The `workloadmap.io/gang` annotation, parsed."""

    min_member: str | None = None
    min_sub_group: str | None = None
    no_gang: str | None = None
    gang_per_replica_of: str | None = None
    gang_key: str | None = None
    sub_groups: Mapping[str, SubGroupRule] = field(default_factory=dict)
    layout: str | None = None
    layout_index: str | None = None
    layout_key: str | None = None
    layout_gang: str | None = None


def gang_rules(annotations: Mapping[str, str] | None) -> GangRules | None:
    """The annotation's rules; None when it is absent or malformed (`gang_rule_problems` says what is wrong)."""
    return _read(annotations)[0]


def gang_rule_problems(annotations: Mapping[str, str] | None) -> list[str]:
    """What is wrong with the annotation; empty when it is absent or well-formed."""
    return _read(annotations)[1]


def gang_rule_expressions(annotations: Mapping[str, str] | None) -> Iterator[tuple[str, str, bool]]:
    """(field path, expression, evaluated on a pod) of each jq expression in the annotation."""
    rules = gang_rules(annotations)
    if rules is None:
        return
    where = f'metadata.annotations["{GANG_RULES}"]'
    root = (
        ("noGang", rules.no_gang),
        ("minMember", rules.min_member),
        ("minSubGroup", rules.min_sub_group),
        ("layout", rules.layout),
    )
    for key, expression in root:
        if expression:
            yield f"{where}.{key}", expression, False
    if rules.gang_key:
        yield f"{where}.gangKey", rules.gang_key, True
    for key, expression in (
        ("layoutIndex", rules.layout_index),
        ("layoutKey", rules.layout_key),
        ("layoutGang", rules.layout_gang),
    ):
        if expression:
            yield f"{where}.{key}", expression, True
    for component, rule in rules.sub_groups.items():
        here = f"{where}.subGroups.{component}"
        for key, expression in (
            ("minMember", rule.min_member),
            ("replicas", rule.replicas),
            ("replicaKey", rule.replica_key),
            ("minSubGroup", rule.min_sub_group),
            ("deferred", rule.deferred),
        ):
            if expression:
                yield f"{here}.{key}", expression, key == "replicaKey"


# Parsing is pure and the same annotation text is read by every plan: cache by text.
_CACHE: dict[str, tuple[GangRules | None, list[str]]] = {}


def _read(annotations: Mapping[str, str] | None) -> tuple[GangRules | None, list[str]]:
    if not annotations:
        return None, []
    text = annotations.get(GANG_RULES)
    if text is None:
        return None, []
    found = _CACHE.get(text)
    if found is None:
        found = _parse(text)
        if len(_CACHE) < 256:
            _CACHE[text] = found
    return found[0], list(found[1])


def _parse(text: str) -> tuple[GangRules | None, list[str]]:
    if len(text) > _MAX_TEXT:
        return None, [f"is {len(text):,} characters long; at most {_MAX_TEXT // 1024} KiB"]
    loaded = yaml_subset.safe_load(text)  # exactly safe_load's value, or declined: PyYAML reads it
    if loaded is not None:
        value = loaded[0]
    else:
        import yaml  # only for a text the fast reader declines (issue 19: start-up)

        try:
            # A definition is trusted but not infallible: the safe loader, no aliases worth expanding in 64 KiB.
            value = yaml.safe_load(text)
        except yaml.YAMLError as error:
            return None, [f"not YAML: {' '.join(str(error).split())}"]
    if value is None:
        value = {}
    if not isinstance(value, dict):
        return None, [f"expected a mapping, got {_kind(value)}"]
    problems = [
        f"unknown key {key!r} (known: {', '.join(sorted(_ROOT_KEYS))})" for key in value if key not in _ROOT_KEYS
    ]
    root: dict[str, str | None] = {}
    for key in _ROOT_EXPRESSIONS:
        root[key] = _expression(value.get(key), key, problems)
    per_replica = value.get("gangPerReplicaOf")
    if per_replica is not None and (not isinstance(per_replica, str) or not per_replica):
        problems.append("gangPerReplicaOf: expected a component name")
        per_replica = None
    gang_key = _expression(value.get("gangKey"), "gangKey", problems)
    on_pods = {key: _expression(value.get(key), key, problems) for key in _LAYOUT_POD_KEYS}
    for key, expression in on_pods.items():
        if expression is not None and root["layout"] is None:
            problems.append(f"{key}: needs layout (it places pods in the layout's sub-groups)")
    if gang_key is not None and per_replica is not None:
        problems.append("gangKey and gangPerReplicaOf exclude each other (each splits the pods into gangs)")
    groups_in = value.get("subGroups")
    groups: dict[str, SubGroupRule] = {}
    if groups_in is not None and not isinstance(groups_in, dict):
        problems.append(f"subGroups: expected a mapping of component names, got {_kind(groups_in)}")
    for component, rule_in in (groups_in or {}).items() if isinstance(groups_in, dict) else ():
        rule = _sub_group(component, rule_in, problems)
        if rule is not None:
            groups[component] = rule
    if problems:
        return None, problems
    return (
        GangRules(
            min_member=root["minMember"],
            min_sub_group=root["minSubGroup"],
            no_gang=root["noGang"],
            gang_per_replica_of=per_replica,
            gang_key=gang_key,
            sub_groups=groups,
            layout=root["layout"],
            layout_index=on_pods["layoutIndex"],
            layout_key=on_pods["layoutKey"],
            layout_gang=on_pods["layoutGang"],
        ),
        [],
    )


def _sub_group(component: Any, rule_in: Any, problems: list[str]) -> SubGroupRule | None:
    if not isinstance(component, str) or not component:
        problems.append(f"subGroups: expected component names as keys, got {component!r}")
        return None
    where = f"subGroups.{component}"
    if rule_in is None:
        rule_in = {}
    if not isinstance(rule_in, dict):
        problems.append(f"{where}: expected a mapping, got {_kind(rule_in)}")
        return None
    for key in rule_in:
        if key not in _GROUP_KEYS:
            problems.append(f"{where}: unknown key {key!r} (known: {', '.join(sorted(_GROUP_KEYS))})")
    per_instance = rule_in.get("perInstance", False)
    if not isinstance(per_instance, bool):
        problems.append(f"{where}.perInstance: expected true or false")
        per_instance = False
    name = rule_in.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        problems.append(f"{where}.name: expected a sub-group name (a DNS label)")
        name = None
    if name is not None and per_instance:
        problems.append(f"{where}: name and perInstance exclude each other (per instance, the ids name them)")
    found = {key: _expression(rule_in.get(key), f"{where}.{key}", problems) for key in _GROUP_EXPRESSIONS}
    if (found["replicas"] is None) != (found["replicaKey"] is None):
        problems.append(f"{where}: replicas and replicaKey go together (a leaf per replica, and how a pod names it)")
    after = rule_in.get("after")
    if after is not None and (not isinstance(after, str) or not after):
        problems.append(f"{where}.after: expected a sub-group component name")
        after = None
    if after is not None and found["deferred"] is None:
        problems.append(f"{where}.after: needs deferred (it says when a deferred sub-group is required)")
    if found["minSubGroup"] is not None and found["replicas"] is None:
        problems.append(f"{where}.minSubGroup: needs replicas (the leaves it counts)")
    return SubGroupRule(
        component=component,
        name=name,
        per_instance=per_instance,
        min_member=found["minMember"],
        replicas=found["replicas"],
        replica_key=found["replicaKey"],
        min_sub_group=found["minSubGroup"],
        deferred=found["deferred"],
        after=after,
    )


def _expression(value: Any, where: str, problems: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        problems.append(f"{where}: expected a jq expression (a string), got {_kind(value)}")
        return None
    text = str(value).strip()
    if not text:
        problems.append(f"{where}: an empty expression")
        return None
    return text


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return {str: "a string", list: "a list", dict: "a mapping", type(None): "null"}.get(
        type(value), type(value).__name__
    )
