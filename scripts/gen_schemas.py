#!/usr/bin/env python3
"""Regenerate the files derived from the Karta model: the CRD and the editor JSON Schema.

    python scripts/gen_schemas.py           write deploy/crds/kartas.run.ai.yaml and model/karta.schema.json
    python scripts/gen_schemas.py --check   exit 1 (naming the stale files) when either differs from the model

Both come from `workload_map.model.schema`; tests/unit/test_crd.py fails when a committed file is stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workload_map.model.schema import JSON_SCHEMA_FILE, crd_yaml, json_schema_text

REPO_ROOT = Path(__file__).resolve().parents[1]
TARGETS = {
    REPO_ROOT / "deploy" / "crds" / "kartas.run.ai.yaml": crd_yaml,
    REPO_ROOT / "src" / "workload_map" / "model" / JSON_SCHEMA_FILE: json_schema_text,
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
