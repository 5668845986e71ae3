#!/usr/bin/env python3
"""Regenerate the table of built-in definitions in docs/catalog.md from the definition files.

    python scripts/gen_catalog_docs.py           rewrite the part of docs/catalog.md between the markers
    python scripts/gen_catalog_docs.py --check   exit 1 when the committed table differs from the definitions
    python scripts/gen_catalog_docs.py --print   print the generated table only

One row per definition: slug, root GVK, components, the statuses it maps, how it suspends, its gang. The rest of
docs/catalog.md (notes, the "Undefined in the recordings" list) is written by hand; tests/unit/test_catalog_docs.py
fails when the committed table is stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

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


def render(document: str, generated: str) -> str:
    """`document` with the text between the markers replaced by `generated`."""
    start = document.find(BEGIN)
    stop = document.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"{CATALOG_DOC.name}: markers {BEGIN} ... {END} not found; add them where the table goes")
    return document[: start + len(BEGIN)] + "\n" + generated + document[stop:]


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
