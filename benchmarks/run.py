"""Run every benchmark and print one table; write the figures as JSON.

    python benchmarks/run.py                 # all benchmarks
    python benchmarks/run.py jq resolve      # only bench_jq.py and bench_resolve.py
    python benchmarks/run.py --json out.json

Each `bench_<area>.py` exposes `rows() -> list[dict]` with keys name, figure, baseline, ratio, target, unit.
Figures are ratios against a baseline measured in the same run (these machines are shared and noisy, so absolute
times move; ratios hold). Benchmarks report, they never gate CI.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(HERE))
    spec.loader.exec_module(module)
    return module


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("areas", nargs="*", help="bench_<area>.py files to run (default: all)")
    parser.add_argument("--json", default=str(HERE / "results" / "latest.json"), help="where to write the figures")
    args = parser.parse_args()

    files = sorted(HERE.glob("bench_*.py"))
    if args.areas:
        files = [f for f in files if f.stem.removeprefix("bench_") in args.areas]
    all_rows: list[dict[str, Any]] = []
    for path in files:
        started = time.perf_counter()
        try:
            rows = _load(path).rows()
        except Exception as exc:  # a broken benchmark is reported, the others still run
            print(f"{path.name}: failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        for row in rows:
            row.setdefault("file", path.name)
        all_rows.extend(rows)
        print(f"{path.name}: {len(rows)} rows in {time.perf_counter() - started:.1f}s", file=sys.stderr)

    headers = ["name", "figure", "unit", "baseline", "ratio", "target", "meets"]
    table = []
    for row in all_rows:
        ratio, target = row.get("ratio"), row.get("target")
        if isinstance(ratio, (int, float)) and isinstance(target, (int, float)):
            meets = "yes" if ratio <= target else "NO"
        else:  # a row that only reports, or one that could not be measured here
            meets = "-"
        row["meets"] = meets
        table.append([_fmt(row.get(h)) for h in headers])
    widths = [max(len(h), *(len(r[i]) for r in table)) if table else len(h) for i, h in enumerate(headers)]
    print("  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True)))
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))

    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"python": platform.python_version(), "machine": platform.machine(), "rows": all_rows}
    out.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
