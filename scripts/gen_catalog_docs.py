#!/usr/bin/env python3
"""Regenerate the table of built-in definitions and the flow tables in docs/catalog.md.

    python scripts/gen_catalog_docs.py           rewrite the parts of docs/catalog.md between the markers
    python scripts/gen_catalog_docs.py --check   exit 1 when the committed tables differ from their sources
    python scripts/gen_catalog_docs.py --print   print the generated definitions table only

The definitions table: one row per definition (slug, root GVK, components, the statuses it maps, how it suspends,
its gang), from the definition files. The flow tables: one per tests/fixtures/flows/<definition>.yaml (format in
tests/flows.py), each step with what its controller writes and the phase we give. The rest of docs/catalog.md
(notes, the "Undefined in the recordings" list) is written by hand; tests/unit/test_catalog_docs.py fails when a
committed table is stale.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from workload_map.model import (
    PRIMARY_PHASE_PRECEDENCE,
    ComponentDefinition,
    Karta,
    StatusMappings,
    load_definitions,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFINITIONS_DIR = REPO_ROOT / "src" / "workload_map" / "catalog" / "definitions"
CATALOG_DOC = REPO_ROOT / "docs" / "catalog.md"
BEGIN = "<!-- BEGIN GENERATED -->"
END = "<!-- END GENERATED -->"
FLOWS_BEGIN = "<!-- BEGIN FLOWS -->"
FLOWS_END = "<!-- END FLOWS -->"

HEADER = "| definition | root GVK | components | statuses mapped | suspend | gang |\n|---|---|---|---|---|---|\n"


def load_catalog(directory: Path = DEFINITIONS_DIR) -> list[Karta]:
    """Every definition file in `directory`, sorted by definition name."""
    kartas: list[Karta] = []
    for path in sorted(directory.glob("*.yaml")):
        kartas.extend(load_definitions(path))
    return sorted(kartas, key=lambda karta: karta.metadata.name)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _gvk(karta: Karta) -> str:
    kind = karta.spec.structure_definition.root_component.kind
    if kind is None:
        return "-"
    group_version = f"{kind.group}/{kind.version}" if kind.group else kind.version
    return f"`{group_version}` {kind.kind}"


def _component(component: ComponentDefinition) -> str:
    """`name` plus markers: `[]` multi-instance, `*` pod-bearing, `(logical)` no kind and no pods."""
    spec = component.spec_definition
    pod_bearing = spec is not None and any(
        (spec.pod_template_spec_path, spec.pod_spec_path, spec.fragmented_pod_spec_definition)
    )
    text = component.name
    if component.instance_id_path:
        text += "[]"
    if pod_bearing:
        text += "*"
    if component.kind is None and not pod_bearing:
        text += " (logical)"
    return text


def _components(karta: Karta) -> str:
    structure = karta.spec.structure_definition
    children = structure.child_components or []
    root = _component(structure.root_component)
    if not children:
        return root
    return f"{root} → " + ", ".join(_component(child) for child in children)


def _statuses(mappings: StatusMappings) -> str:
    mapped = [
        status
        for status in PRIMARY_PHASE_PRECEDENCE
        if getattr(mappings, StatusMappings.FIELD_BY_STATUS.get(status, status.lower()), None)
    ]
    return ", ".join(mapped) if mapped else "-"


def _suspend(karta: Karta) -> str:
    structure = karta.spec.structure_definition
    for component in [structure.root_component, *(structure.child_components or [])]:
        definition = component.suspend_definition
        if definition is None:
            continue
        actions = "; ".join(f"`{action.path}` = `{action.value}`" for action in definition.suspend_actions)
        return actions
    return "-"


def _gang(karta: Karta) -> str:
    instructions = karta.spec.optimization_instructions
    gang = instructions.gang_scheduling if instructions else None
    if gang is None:
        return "-"
    parts: list[str] = []
    if gang.pod_group is not None:
        subgroups = ", ".join(sub.component_name for sub in gang.pod_group.sub_groups or [])
        parts.append(f"podGroup {gang.pod_group.name}" + (f" (subGroups {subgroups})" if subgroups else ""))
    for group in gang.pod_groups or []:
        members = ", ".join(
            member.component_name + (" by key" if member.group_by_key_paths else "") for member in group.members
        )
        parts.append(f"{group.name}: {members}")
    return "; ".join(parts) if parts else "-"


def table(kartas: list[Karta]) -> str:
    """The generated Markdown table (header included), one row per definition."""
    rows = []
    for karta in kartas:
        status = karta.spec.structure_definition.root_component.status_definition
        statuses = _statuses(status.status_mappings) if status is not None else "-"
        cells = [f"`{karta.metadata.name}`", _gvk(karta), _components(karta), statuses, _suspend(karta), _gang(karta)]
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |\n")
    return HEADER + "".join(rows)


def render(document: str, generated: str, begin: str = BEGIN, end: str = END) -> str:
    """`document` with the text between the markers replaced by `generated`."""
    start = document.find(begin)
    stop = document.find(end)
    if start < 0 or stop < start:
        raise ValueError(f"{CATALOG_DOC.name}: markers {begin} ... {end} not found; add them where the table goes")
    return document[: start + len(begin)] + "\n" + generated + document[stop:]


# --- flow tables ----------------------------------------------------------------------------------------------


def load_flow_files() -> list[Any]:
    """The flows of tests/fixtures/flows (tests/flows.py reads and checks them)."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from tests.flows import load_flows  # the repository's own test data, not an installed module

    load_flows.cache_clear()
    return list(load_flows())


def _scalar(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(", ", ": "))


def _conditions(items: Any) -> str:
    parts = []
    for item in items or []:
        if not isinstance(item, dict):
            continue
        text = f"{item.get('type')}={item.get('status')}"
        if item.get("reason"):
            text += f" ({item['reason']})"
        parts.append(text)
    return "conditions " + ", ".join(parts) if parts else "conditions []"


def _flatten(prefix: str, value: Any, out: list[str]) -> None:
    if isinstance(value, dict) and value and prefix.count(".") < 2:
        for key, item in value.items():
            if key == "conditions" and isinstance(item, list):
                out.append((f"{prefix}." if prefix else "") + _conditions(item))
            else:
                _flatten(f"{prefix}.{key}" if prefix else str(key), item, out)
        return
    out.append(f"{prefix}: {_scalar(value)}")


def _writes(row: Any) -> str:
    """What the row changes, compactly: the spec and metadata patches, then the status."""
    data = row.data
    parts: list[str] = []
    for part in ("metadata", "spec"):
        if part in data:
            _flatten(part, data[part], parts)
    if "status" in data:
        if data["status"] is None:
            parts.append("no status")
        else:
            status: list[str] = []
            _flatten("", data["status"], status)
            parts.append("status " + "; ".join(status) if status else "status {}")
    if "statusPatch" in data:
        patch: list[str] = []
        _flatten("", data["statusPatch"], patch)
        parts.append("status (patch) " + "; ".join(patch))
    for name, content in (data.get("references") or {}).items():
        followed: list[str] = []
        _flatten("", content, followed)
        parts.append(f"{name} (reference) " + "; ".join(followed))
    return "; ".join(parts) or "as the base object"


def flows_markdown(flows: list[Any]) -> str:
    """One table per flow: step, what happens, what the controller writes, our phase, the code it follows."""
    out: list[str] = []
    for flow in flows:
        out.append(f"#### `{flow.definition}`: {flow.controller} at {flow.version}\n\n")
        if flow.notes:
            out.append(flow.notes.strip() + "\n")
        out.append("| step | what happens | the controller writes | phase | source |\n|---|---|---|---|---|\n")
        for row in flow.rows:
            cells = [row.step, row.what, _writes(row), f"**{row.phase}**", row.source]
            out.append("| " + " | ".join(_cell(cell) for cell in cells) + " |\n")
        out.append("\n")
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="only check that docs/catalog.md is current")
    mode.add_argument("--print", action="store_true", help="print the generated table")
    args = parser.parse_args(argv)
    generated = table(load_catalog())
    if args.print:
        sys.stdout.write(generated)
        return 0
    current = CATALOG_DOC.read_text(encoding="utf-8")
    try:
        wanted = render(current, generated)
        wanted = render(wanted, flows_markdown(load_flow_files()), FLOWS_BEGIN, FLOWS_END)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.check:
        if wanted != current:
            print(f"{CATALOG_DOC} is stale: run python scripts/gen_catalog_docs.py", file=sys.stderr)
            return 1
        return 0
    if wanted != current:
        CATALOG_DOC.write_text(wanted, encoding="utf-8")
        print(f"wrote {CATALOG_DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
