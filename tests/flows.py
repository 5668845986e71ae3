"""Flow tables of the built-in catalog: what each controller writes at each step of a workload's life, and the phase.

One file per definition, tests/fixtures/flows/<definition>.yaml:

    definition: batch-job-v1
    controller: kubernetes/kubernetes pkg/controller/job   # whose reconcile code the rows follow
    version: v1.34.0                                        # the release or commit they were read at
    base: catalog                                           # the object: the definition's catalog fixture ...
    # object: {...}                                         # ... or one given inline
    rows:
      - step: create                                        # one of STEPS
        what: created; the controller has not reported yet  # in words
        spec: {suspend: true}                               # optional: a JSON merge patch onto .spec
        metadata: {generation: 2}                           # optional: a JSON merge patch onto .metadata
        status: null                                        # optional: the whole status (null: none) ...
        statusPatch: {ready: 1}                             # ... or a JSON merge patch onto the base status
        references: {job: {...}}                            # optional: what the definition's references offer
                                                            # (workloadmap.io/references), as if followed
        phase: Initializing                                 # the primary phase the definition must give
        source: pkg/controller/job/job_controller.go syncJob  # the code that writes this state

Used by tests/unit/test_catalog_flows.py (every row), tests/unit/test_catalog_rules.py (the cross-catalog rules on
every row) and scripts/gen_catalog_docs.py (the tables in docs/catalog.md). Plain data: no test code here.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from workload_map.model.references import REFERENCES_KEY

REPO = Path(__file__).resolve().parents[1]
FLOWS_DIR = REPO / "tests" / "fixtures" / "flows"
CATALOG_FIXTURES = REPO / "tests" / "fixtures" / "catalog"

# The steps a flow may have, in the order a table lists them (a kind has only some of them).
STEPS = (
    "create",
    "start",
    "run",
    "scale-up",
    "scale-down",
    "update",
    "suspend",
    "suspended",
    "resume",
    "pod-failure",
    "restart",
    "completion",
    "failure",
    "config-error",
    "stale-generation",
)
ROW_KEYS = frozenset({"step", "what", "spec", "metadata", "status", "statusPatch", "references", "phase", "source"})
FILE_KEYS = frozenset({"definition", "controller", "version", "base", "object", "rows", "notes"})


@dataclass(frozen=True)
class FlowRow:
    definition: str
    index: int
    step: str
    what: str
    phase: str
    source: str
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.definition}#{self.index}:{self.step}"


@dataclass(frozen=True)
class Flow:
    definition: str
    controller: str
    version: str
    notes: str
    base: dict[str, Any]
    rows: tuple[FlowRow, ...]
    path: Path

    def object_at(self, row: FlowRow) -> dict[str, Any]:
        """The workload object at a row: the base with the row's patches applied (or its status replaced)."""
        obj = copy.deepcopy(self.base)
        data = row.data
        if "metadata" in data:
            obj["metadata"] = merge_patch(obj.get("metadata") or {}, data["metadata"])
        if "spec" in data:
            obj["spec"] = merge_patch(obj.get("spec") or {}, data["spec"])
        if "status" in data:
            if data["status"] is None:
                obj.pop("status", None)
            else:
                obj["status"] = copy.deepcopy(data["status"])
        if "statusPatch" in data:
            obj["status"] = merge_patch(obj.get("status") or {}, data["statusPatch"])
        if "references" in data:
            # The workload as its definition sees it once the references are followed (resolve.references.follow):
            # a MiniCluster's phase depends on its Job's status.
            obj[REFERENCES_KEY] = copy.deepcopy(data["references"])
        return obj


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge key by key, null removes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _read(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _base(definition: str, data: dict[str, Any], path: Path) -> dict[str, Any]:
    if "object" in data:
        obj: dict[str, Any] = data["object"]
        return obj
    base = data.get("base", "catalog")
    if base != "catalog":
        raise ValueError(f"{path.name}: base must be 'catalog' (or give an object)")
    found: dict[str, Any] = _read(CATALOG_FIXTURES / definition / "workload.yaml")
    return found


@cache
def load_flows() -> tuple[Flow, ...]:
    """Every flow file, sorted by definition name; a malformed file raises ValueError naming it."""
    flows = []
    for path in sorted(FLOWS_DIR.glob("*.yaml")):
        data = _read(path)
        if not isinstance(data, dict) or set(data) - FILE_KEYS:
            raise ValueError(f"{path.name}: unknown keys {sorted(set(data) - FILE_KEYS)}")
        definition = str(data["definition"])
        if definition != path.stem:
            raise ValueError(f"{path.name}: definition {definition!r} differs from the file name")
        rows = []
        for index, row in enumerate(data.get("rows") or []):
            unknown = set(row) - ROW_KEYS
            if unknown:
                raise ValueError(f"{path.name} row {index}: unknown keys {sorted(unknown)}")
            if "status" in row and "statusPatch" in row:
                raise ValueError(f"{path.name} row {index}: status and statusPatch both set")
            rows.append(
                FlowRow(
                    definition, index, str(row["step"]), str(row["what"]), str(row["phase"]), str(row["source"]), row
                )
            )
        flows.append(
            Flow(
                definition,
                str(data["controller"]),
                str(data["version"]),
                str(data.get("notes") or ""),
                _base(definition, data, path),
                tuple(rows),
                path,
            )
        )
    return tuple(flows)


def all_rows() -> list[tuple[Flow, FlowRow]]:
    return [(flow, row) for flow in load_flows() for row in flow.rows]
