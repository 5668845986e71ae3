"""docs/catalog.md: the generated table of built-in definitions.

The table between the markers comes from scripts/gen_catalog_docs.py; the committed file must equal a fresh
generation, so a definition change without regenerating the docs fails here with the command to run.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gen_catalog_docs.py"
DOC = REPO / "docs" / "catalog.md"
DEFINITIONS = REPO / "src" / "workload_map" / "catalog" / "definitions"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_catalog_docs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_catalog_docs", module)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


def test_committed_catalog_doc_equals_a_fresh_generation() -> None:
    current = DOC.read_text(encoding="utf-8")
    fresh = GEN.render(current, GEN.table(GEN.load_catalog()))
    assert current == fresh, "docs/catalog.md is stale: run python scripts/gen_catalog_docs.py"


def test_committed_flow_tables_equal_a_fresh_generation() -> None:
    current = DOC.read_text(encoding="utf-8")
    fresh = GEN.render(current, GEN.flows_markdown(GEN.load_flow_files()), GEN.FLOWS_BEGIN, GEN.FLOWS_END)
    assert current == fresh, "docs/catalog.md flow tables are stale: run python scripts/gen_catalog_docs.py"


def test_each_flow_file_has_one_table_listing_every_row() -> None:
    flows = GEN.load_flow_files()
    generated = GEN.flows_markdown(flows)
    for flow in flows:
        assert generated.count(f"#### `{flow.definition}`:") == 1, flow.definition
        table = generated.split(f"#### `{flow.definition}`:", 1)[1].split("####", 1)[0]
        assert table.count("\n| ") - 1 == len(flow.rows), flow.definition


def test_check_mode_reports_a_current_doc_with_exit_code_0() -> None:
    assert GEN.main(["--check"]) == 0


def test_every_definition_file_has_exactly_one_row() -> None:
    generated = GEN.table(GEN.load_catalog())
    for path in sorted(DEFINITIONS.glob("*.yaml")):
        assert generated.count(f"| `{path.stem}` |") == 1, path.name


def test_row_shows_components_statuses_suspend_and_gang_of_a_definition() -> None:
    row = next(
        line for line in GEN.table(GEN.load_catalog()).splitlines() if "`agents-x-k8s-io-sandbox-v1beta1`" in line
    )
    cells = [cell.strip() for cell in row.strip("|").split(" | ")]
    assert cells[1] == "`agents.x-k8s.io/v1beta1` Sandbox"
    assert cells[2] == "sandbox → agent*, companion (logical)"
    assert cells[3].startswith("Failed, Completed, Suspended, Suspending, Resuming")
    assert cells[4] == '`.spec.operatingMode` = `"Suspended"`'
    assert cells[5] == "sandbox: agent by key, companion by key"


def test_render_without_markers_is_an_error_naming_the_markers() -> None:
    with pytest.raises(ValueError, match="BEGIN GENERATED"):
        GEN.render("# no markers here\n", "| table |\n")
