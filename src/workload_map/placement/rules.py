"""Whether a pod may go onto a node at all, whatever is free there: its node selector, its tolerations against the
node's taints, and its required node affinity (the scheduler's NodeAffinity and TaintToleration filters).

`PodConstraints.from_template(template)` reads them once from a pod template (`{metadata, spec}`);
`constraints.mismatch(node)` is None when the node is acceptable, else why not in words (the placement reasons
quote it). Preferred affinity, pod (anti-)affinity and topology spread are not filters here (docs/placement.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workload_map.placement.snapshot import NodeState, PlacementError, Taint

__all__ = ["PodConstraints", "expression_matches", "tolerates"]


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """The scheduler's rule: an empty effect matches every effect, an empty key with `Exists` every taint,
    `Exists` any value, `Equal` (the default) the same value."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if not toleration.key:
        return toleration.operator == "Exists"
    if toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    return toleration.value == taint.value


def expression_matches(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One `matchExpressions` entry (In, NotIn, Exists, DoesNotExist, Gt, Lt) against a node's labels. NotIn and
    DoesNotExist match a node without the label, as in Kubernetes; Gt and Lt compare integers (a label that is not
    one does not match)."""
    key = str(expression.get("key") or "")
    operator = expression.get("operator")
    raw_values = expression.get("values") or []
    values: list[str] = [str(v) for v in raw_values] if isinstance(raw_values, list) else []
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        try:
            have, bound = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > bound if operator == "Gt" else have < bound
    raise PlacementError(f"node affinity: unknown operator {operator!r} for key {key!r}")


def _field_matches(expression: Mapping[str, Any], node: NodeState) -> bool:
    # matchFields supports metadata.name only (as the API server validates)
    if expression.get("key") != "metadata.name":
        return False
    return expression_matches(expression, {"metadata.name": node.name})


def _term_matches(term: Mapping[str, Any], node: NodeState) -> bool:
    expressions = term.get("matchExpressions") or ()
    fields = term.get("matchFields") or ()
    if not expressions and not fields:
        return False  # an empty term matches no node
    return all(expression_matches(e, node.labels) for e in expressions) and all(_field_matches(f, node) for f in fields)


@dataclass(frozen=True)
class PodConstraints:
    """What a pod template says about the nodes it may use. `required_terms` None: no required node affinity."""

    node_selector: Mapping[str, str]
    tolerations: tuple[Toleration, ...]
    required_terms: tuple[Mapping[str, Any], ...] | None

    @classmethod
    def from_template(cls, template: Mapping[str, Any] | None, *, where: str = "pod template") -> PodConstraints:
        """Read from a PodTemplateSpec-shaped dict (`spec` inside) or None (no constraints)."""
        spec = (template or {}).get("spec") or {}
        if not isinstance(spec, Mapping):
            raise PlacementError(f"{where}: spec is not an object")
        selector = spec.get("nodeSelector") or {}
        if not isinstance(selector, Mapping):
            raise PlacementError(f"{where}: spec.nodeSelector is not an object")
        return cls(
            {str(k): str(v) for k, v in selector.items()},
            tuple(_toleration(raw, where) for raw in _entries(spec.get("tolerations"), f"{where}: spec.tolerations")),
            _required_terms(spec.get("affinity"), where),
        )

    @property
    def constrained(self) -> bool:
        return bool(self.node_selector or self.tolerations or self.required_terms is not None)

    def mismatch(self, node: NodeState) -> str | None:
        """None when a pod with these constraints may go onto `node`, else the first reason it may not."""
        for taint in node.taints:
            if taint.blocks and not any(tolerates(t, taint) for t in self.tolerations):
                return f"the taint {taint} is not tolerated"
        for key, value in self.node_selector.items():
            if node.labels.get(key) != value:
                return f"nodeSelector {key}={value} does not match"
        if self.required_terms is not None and not any(_term_matches(t, node) for t in self.required_terms):
            return "the required node affinity does not match"
        return None


def _entries(value: Any, where: str) -> Sequence[Any]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise PlacementError(f"{where} is not a list")
    return value


def _toleration(raw: Any, where: str) -> Toleration:
    if not isinstance(raw, Mapping):
        raise PlacementError(f"{where}: spec.tolerations has an entry that is not an object")
    return Toleration(
        str(raw.get("key") or ""),
        str(raw.get("operator") or "Equal"),
        str(raw.get("value") or ""),
        str(raw.get("effect") or ""),
    )


def _required_terms(affinity: Any, where: str) -> tuple[Mapping[str, Any], ...] | None:
    if not isinstance(affinity, Mapping):
        return None
    node_affinity = affinity.get("nodeAffinity")
    if not isinstance(node_affinity, Mapping):
        return None
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, Mapping):
        return None
    terms = _entries(required.get("nodeSelectorTerms"), f"{where}: spec.affinity.nodeAffinity nodeSelectorTerms")
    if not all(isinstance(term, Mapping) for term in terms):
        raise PlacementError(f"{where}: a nodeSelectorTerms entry is not an object")
    return tuple(terms)
