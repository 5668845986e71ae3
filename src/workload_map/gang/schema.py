"""The JSON Schema of the gang plan (`schemaVersion: workloadmap.io/gang/v2`), generated from the Structs that
declare the document (`GangPlanDocument` and its parts, `workload_map.gang.types`).

The schema ships as `plan.schema.json` in this package; `scripts/gen_schemas.py` writes it and a test checks the
committed file equals a fresh generation.
"""

from __future__ import annotations

import json
from typing import Any

from workload_map.gang.types import SCHEMA_VERSION, GangPlanDocument
from workload_map.model.schema import document_schema

__all__ = ["JSON_SCHEMA_FILE", "json_schema", "json_schema_text"]

JSON_SCHEMA_FILE = "plan.schema.json"
"""The file name of the shipped schema, in the `workload_map.gang` package."""


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `GangPlan.to_dict()`, as shipped in `gang/plan.schema.json`."""
    return document_schema(
        GangPlanDocument,
        title="Workload Map gang plan",
        description=(
            f"The scheduler-neutral gang plan of one workload (schemaVersion {SCHEMA_VERSION}): its gangs, min members "
            "and min resources, and each given pod's gang. See docs/gang.md."
        ),
        schema_version=SCHEMA_VERSION,
    )


def json_schema_text() -> str:
    """The shipped file's text: the schema, indented, with a final newline."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
