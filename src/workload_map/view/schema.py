"""The JSON Schema of the view (`schemaVersion: workloadmap.io/view/v1`), generated from the Structs that declare
the document (`WorkloadViewDocument` and its parts, `workload_map.view.types`).

The schema ships as `view.schema.json` in this package; `scripts/gen_schemas.py` writes it and a test checks the
committed file equals a fresh generation.
"""

from __future__ import annotations

import json
from typing import Any

from workload_map.model.schema import document_schema
from workload_map.view.types import SCHEMA_VERSION, WorkloadViewDocument

__all__ = ["JSON_SCHEMA_FILE", "json_schema", "json_schema_text"]

JSON_SCHEMA_FILE = "view.schema.json"
"""The file name of the shipped schema, in the `workload_map.view` package."""


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `WorkloadView.to_dict()`, as shipped in `view/view.schema.json`."""
    return document_schema(
        WorkloadViewDocument,
        title="Workload Map view",
        description=(
            f"One workload rolled up by Workload Map (schemaVersion {SCHEMA_VERSION}): identity, status, the component "
            "tree with pods, totals, and what went wrong. See docs/view.md."
        ),
        schema_version=SCHEMA_VERSION,
    )


def json_schema_text() -> str:
    """The shipped file's text: the schema, indented, with a final newline."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
