"""Loading and validating definitions, as a ratio against merely parsing their YAML.

Row:
* load + validate 1,000 distinct definitions (one multi-document stream made from the built-in catalog and the
  test fixtures, each copy with its own name and its own jq paths, so no cache helps), against
  ``yaml.load_all(text, Loader=yaml.CSafeLoader)`` of the same text. Validation includes the static jq check of
  every jq field (our parser, no libjq compile); the parser's and the check's caches are cleared before each run.
  The stream holds about 15,700 jq expressions, 13,800 of them distinct.

Run alone: ``python benchmarks/bench_definitions.py``.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from _common import REPO, best, row
from workload_map.jq.parser import parse
from workload_map.model import jq_fields, loads_definitions
from workload_map.validation import expression_problems, validate

SOURCES = sorted((REPO / "src" / "workload_map" / "catalog" / "definitions").glob("*.yaml")) + sorted(
    (REPO / "tests" / "fixtures" / "definitions" / "valid").glob("*.yaml")
)
COUNT = 1000


def _templates() -> list[str]:
    """Each definition of the sources as its own YAML document text (whole Karta objects only)."""
    out = []
    for path in SOURCES:
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(document, dict) and document.get("kind") == "Karta":
                out.append(yaml.safe_dump(document, sort_keys=False))
    return out


def distinct_definitions(count: int = COUNT) -> str:
    """`count` definitions as one stream: names and every `.spec.`/`.status.`/`.metadata.` path varied per copy."""
    templates = _templates()
    documents = []
    for i in range(count):
        text = templates[i % len(templates)]
        text = re.sub(r"^(  name: )(.*)$", rf"\g<1>\g<2>-{i}", text, count=1, flags=re.MULTILINE)
        for field in ("spec", "status", "metadata"):
            text = text.replace(f".{field}.", f".{field}.v{i}_")
        documents.append(text)
    return "---\n".join(documents)


def load_and_validate(text: str) -> int:
    expression_problems.cache_clear()
    parse.cache_clear()
    findings = 0
    for karta in loads_definitions(text):
        findings += len(validate(karta))
    return findings


def rows() -> list[dict[str, Any]]:
    text = distinct_definitions()
    assert sum(1 for k in loads_definitions(text) for _ in jq_fields(k)) > 10 * COUNT
    baseline = best(lambda: list(yaml.load_all(text, Loader=yaml.CSafeLoader)), repeat=3)
    figure = best(lambda: load_and_validate(text), repeat=3)
    return [
        row(
            f"load + validate {COUNT} distinct definitions (vs CSafeLoader yaml.load_all of the text)",
            figure * 1000,
            baseline * 1000,
            50.0,
            "ms",
            digits=1,
        )
    ]


if __name__ == "__main__":
    for item in rows():
        print(item)
