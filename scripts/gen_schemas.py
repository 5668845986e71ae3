#!/usr/bin/env python3
"""Regenerate the generated schema files: the Karta CRD and editor JSON Schema, and the JSON Schemas of the view
and of the gang plan.

    python scripts/gen_schemas.py           write deploy/crds/kartas.run.ai.yaml, model/karta.schema.json,
                                            view/view.schema.json and gang/plan.schema.json
    python scripts/gen_schemas.py --check   exit 1 (naming the stale files) when any differs from its source

The Karta files come from `workload_map.model.schema` (tests/unit/test_crd.py fails when one is stale), the view's
and the plan's from the Structs that declare them, `workload_map.view.schema` and `workload_map.gang.schema`
(tests/unit/test_output_schemas.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workload_map.gang import schema as plan_schema
from workload_map.model.schema import JSON_SCHEMA_FILE, crd_yaml, json_schema_text
from workload_map.view import schema as view_schema

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE = REPO_ROOT / "src" / "workload_map"
TARGETS = {
    REPO_ROOT / "deploy" / "crds" / "kartas.run.ai.yaml": crd_yaml,
    PACKAGE / "model" / JSON_SCHEMA_FILE: json_schema_text,
    PACKAGE / "view" / view_schema.JSON_SCHEMA_FILE: view_schema.json_schema_text,
    PACKAGE / "gang" / plan_schema.JSON_SCHEMA_FILE: plan_schema.json_schema_text,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the committed files are current")
    args = parser.parse_args(argv)
    stale = []
    for path, generate in TARGETS.items():
        text = generate()
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(REPO_ROOT)}")
    if args.check and stale:
        for path in stale:
            print(f"stale: {path.relative_to(REPO_ROOT)} (run python scripts/gen_schemas.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
