"""Counts the docs state that the code can derive: the catalog's size in README.md, and the number of catalog
structure expressions the generated path leaves to the closures in docs/jq.md (pinned per definition by
tests/unit/test_codegen.py). A count that goes stale fails here, naming the number the code gives."""

from __future__ import annotations

import re
from pathlib import Path

from tests.unit.test_codegen import EXPECTED_UNCOVERED_STATUS, EXPECTED_UNCOVERED_STRUCTURE
from workload_map.catalog import builtin_definitions

REPO = Path(__file__).resolve().parents[2]
NUMBER_WORDS = {1: "one", 2: "two", 3: "three"}


def _flat(path: Path) -> str:
    """The file's text with line breaks as spaces: a sentence may wrap anywhere."""
    return " ".join(path.read_text(encoding="utf-8").split())


def test_readme_says_how_many_definitions_and_kinds_the_catalog_has() -> None:
    definitions = builtin_definitions()
    kinds = set()
    for karta in definitions:
        gvk = karta.spec.structure_definition.root_component.kind
        assert gvk is not None, karta.metadata
        kinds.add((gvk.group, gvk.kind))
    found = re.search(r"a catalog of (\d+) definitions for (\d+) workload kinds", _flat(REPO / "README.md"))
    assert found is not None, "README.md no longer says 'a catalog of N definitions for M workload kinds'"
    assert (int(found[1]), int(found[2])) == (len(definitions), len(kinds))


def test_jq_md_says_how_many_catalog_expressions_the_generated_path_leaves_out() -> None:
    text = _flat(REPO / "docs" / "jq.md")
    found = re.search(r"of its structure expressions (\d+) in (\d+) definitions", text)
    assert found is not None, "docs/jq.md no longer says 'of its structure expressions N in M definitions'"
    pinned = (sum(EXPECTED_UNCOVERED_STRUCTURE.values()), len(EXPECTED_UNCOVERED_STRUCTURE))
    assert (int(found[1]), int(found[2])) == pinned
    status = re.search(r"Of the catalog's status expressions (\w+) falls? back", text)
    assert status is not None, "docs/jq.md no longer says how many catalog status expressions fall back"
    assert status[1] == NUMBER_WORDS.get(len(EXPECTED_UNCOVERED_STATUS), str(len(EXPECTED_UNCOVERED_STATUS)))
