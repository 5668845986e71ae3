"""Diff what KAI's own pod grouper produces (the kai-oracle program) against tests/fixtures/kai.

Usage: python3 scripts/kai-oracle/compare.py PATH-TO-KAI-ORACLE [FIXTURE.yaml ...]
Prints one line per case (ok / DIFF with both sides) and exits 1 if any case differs. See README.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.kai_facts import FIXTURE_DIR, expected_shape, load_file, normalize_kai  # noqa: E402


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    oracle = argv[0]
    paths = [Path(p) for p in argv[1:]] or sorted(FIXTURE_DIR.glob("*.yaml"))
    differ = 0
    total = 0
    for path in paths:
        run = subprocess.run([oracle, str(path)], capture_output=True, text=True, check=False)
        if run.returncode != 0:
            print(f"{path.name}: kai-oracle failed: {run.stderr.strip()[-500:]}")
            return 1
        produced = json.loads(run.stdout)
        for case in load_file(path):
            total += 1
            got = produced.get(case.name)
            if got is None:
                print(f"DIFF {case.id}: kai-oracle printed nothing for it")
                differ += 1
                continue
            have = normalize_kai(got["manifests"] or [])
            want = expected_shape(case)
            if have == want:
                print(f"ok   {case.id}")
                continue
            differ += 1
            print(f"DIFF {case.id}")
            print(f"  kai errors: {json.dumps(got['errors'], sort_keys=True)}")
            print(f"  kai:     {have}")
            print(f"  fixture: {want}")
    print(f"{total - differ} passed, {differ} failed")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
