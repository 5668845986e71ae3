"""What the Karta operator writes on a Karta, decided without I/O: its three conditions and the labels KAI's pod
grouper selects it by (docs/controller.md, "The Karta operator").

* `KartaValidated`: the definition loads and our validator finds no error (`Valid`, `InvalidDefinition`,
  `ValidationFailed`);
* `CRDExists`: the root GVK is served by the cluster (`Served`, `NotServed`, `NoRootKind`);
* `Ready`: both are True and no other Karta defines the same root GVK (`Ready`, `NotValidated`, `CRDMissing`,
  `DuplicateKind`).

Every message that is about a field names its path (`spec.structureDefinition.rootComponent.kind: ...`). The
condition names are upstream's (`KartaValidated`, not `Validated`), so tools written for upstream's operator read
ours.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workload_map.model import DefinitionError, karta_from_dict
from workload_map.validation import errors, validate

__all__ = [
    "GVK_LABELS",
    "KartaStatus",
    "karta_status",
    "merge_conditions",
    "root_gvk_of",
]

GROUP_LABEL = "run.ai/karta-group"
VERSION_LABEL = "run.ai/karta-version"
KIND_LABEL = "run.ai/karta-kind"
GVK_LABELS = (GROUP_LABEL, VERSION_LABEL, KIND_LABEL)
ROOT_KIND_PATH = "spec.structureDefinition.rootComponent.kind"
_MESSAGE_LIMIT = 32768
_FINDINGS_SHOWN = 20


@dataclass(frozen=True)
class KartaStatus:
    """The conditions (type -> (status, reason, message)), the labels to stamp (None: remove), and the messages
    worth an Event (each failing condition's)."""

    conditions: dict[str, tuple[str, str, str]]
    labels: dict[str, str | None]
    failures: list[tuple[str, str]]


def root_gvk_of(obj: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """The root component's (group, version, kind) as written in the object (read even when the Karta is invalid,
    so duplicates and labels do not depend on the rest of it)."""
    kind = (((obj.get("spec") or {}).get("structureDefinition") or {}).get("rootComponent") or {}).get("kind")
    if not isinstance(kind, Mapping):
        return None
    group, version, name = kind.get("group", ""), kind.get("version"), kind.get("kind")
    if not (isinstance(group, str) and isinstance(version, str) and isinstance(name, str)) or not (version and name):
        return None
    return group, version, name


def _validated(obj: Mapping[str, Any], name: str) -> tuple[str, str, str]:
    try:
        karta = karta_from_dict(obj, f'Karta "{name}"')
    except DefinitionError as exc:
        where = f"{exc.path}: " if exc.path else ""
        return "False", "InvalidDefinition", f"{where}{exc.message}"
    problems = errors(validate(karta))
    if not problems:
        return "True", "Valid", "the definition passed validation"
    shown = [f"{p.path}: {p.message}" if p.path else p.message for p in problems[:_FINDINGS_SHOWN]]
    more = f"; and {len(problems) - _FINDINGS_SHOWN} more" if len(problems) > _FINDINGS_SHOWN else ""
    return "False", "ValidationFailed", f"{len(problems)} error(s): " + "; ".join(shown) + more


def karta_status(
    obj: Mapping[str, Any],
    *,
    served: Callable[[str, str, str], bool],
    same_kind: Iterable[str] = (),
) -> KartaStatus:
    """The status of one Karta object: `served(group, version, kind)` answers from discovery; `same_kind` names
    the other Kartas whose root GVK is this one's."""
    name = str((obj.get("metadata") or {}).get("name") or "?")
    validated = _validated(obj, name)
    gvk = root_gvk_of(obj)
    if gvk is None:
        crd = ("False", "NoRootKind", f"{ROOT_KIND_PATH}: the root component has no full kind (group, version, kind)")
        labels: dict[str, str | None] = dict.fromkeys(GVK_LABELS)
    else:
        group, version, kind = gvk
        what = f"{group}/{version} {kind}" if group else f"{version} {kind}"
        if served(group, version, kind):
            crd = ("True", "Served", f"{ROOT_KIND_PATH}: {what} is served by the cluster")
        else:
            message = f"{ROOT_KIND_PATH}: {what} is not served by the cluster (is its CRD installed?)"
            crd = ("False", "NotServed", message)
        labels = {GROUP_LABEL: group, VERSION_LABEL: version, KIND_LABEL: kind}
    others = sorted(set(same_kind) - {name})
    if validated[0] != "True":
        ready = ("False", "NotValidated", f"KartaValidated is False: {validated[2]}")
    elif crd[0] != "True":
        ready = ("False", "CRDMissing", f"CRDExists is False: {crd[2]}")
    elif others:
        listed = ", ".join(others)
        ready = (
            "False",
            "DuplicateKind",
            f"{ROOT_KIND_PATH}: Karta(s) {listed} define the same root kind; neither is used until one is removed",
        )
    else:
        ready = ("True", "Ready", "the definition is valid and its root kind is served")
    conditions = {"KartaValidated": validated, "CRDExists": crd, "Ready": ready}
    conditions = {k: (s, r, m[:_MESSAGE_LIMIT]) for k, (s, r, m) in conditions.items()}
    failures = [(reason, message) for status, reason, message in conditions.values() if status != "True"]
    return KartaStatus(conditions, labels, failures)


def merge_conditions(
    existing: Iterable[Mapping[str, Any]], wanted: Mapping[str, tuple[str, str, str]], *, generation: int, stamp: str
) -> list[dict[str, Any]]:
    """metav1.Conditions for `wanted`, keeping each one's lastTransitionTime while its status is unchanged;
    conditions of other types (written by someone else) are kept as they are."""
    by_type = {str(c.get("type")): dict(c) for c in existing if isinstance(c, Mapping)}
    out: list[dict[str, Any]] = []
    for ctype, (status, reason, message) in wanted.items():
        before = by_type.pop(ctype, None)
        since = before.get("lastTransitionTime") if before and before.get("status") == status else None
        out.append(
            {
                "type": ctype,
                "status": status,
                "reason": reason,
                "message": message,
                "observedGeneration": generation,
                "lastTransitionTime": since or stamp,
            }
        )
    return out + list(by_type.values())
