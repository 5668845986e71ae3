"""Two revisions side by side: the same benchmark areas run alternately, each revision installed in its own venv.

    python benchmarks/compare.py cfcb7d8 HEAD resolve gang attribution
    python benchmarks/compare.py cfcb7d8 HEAD resolve --rounds 3 --work /tmp/wmap-compare

Each revision is exported with `git archive` into `<work>/<rev>/`, installed (not editable) into its own venv, and
runs its own `benchmarks/run.py AREAS` (so each side is timed with the benchmark code of its revision: an API change
between them is allowed). Rounds alternate A, B, A, B, ... so load on a shared machine hits both alike; each row's
ratio (to the baseline measured in the same run) is the median over rounds. Printed: every row present in both,
ratio A, ratio B and B/A (> 1 means B is slower). Run by hand; never in CI.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _prepare(rev: str, work: Path) -> tuple[Path, Path]:
    """(tree, python) of `rev`, exported and installed once."""
    commit = subprocess.run(["git", "rev-parse", rev], cwd=REPO, check=True, capture_output=True, text=True).stdout
    commit = commit.strip()
    tree = work / commit[:12]
    python = tree / ".venv" / "bin" / "python"
    if not python.exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit], cwd=REPO, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        venv.create(tree / ".venv", with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(tree)], check=True)
    return tree, python


def _run(tree: Path, python: Path, areas: list[str], out: Path) -> dict[str, float]:
    # run from outside the tree, so `import workload_map` is the installed revision, not a source checkout
    subprocess.run(
        [str(python), str(tree / "benchmarks" / "run.py"), *areas, "--json", str(out)],
        check=True,
        cwd=out.parent,
        stdout=subprocess.DEVNULL,
    )
    rows = json.loads(out.read_text())["rows"]
    return {row["name"]: row["ratio"] for row in rows if isinstance(row.get("ratio"), (int, float))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", help="the base revision")
    parser.add_argument("b", help="the revision compared with it")
    parser.add_argument("areas", nargs="+", help="bench_<area>.py files to run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", default="/tmp/wmap-compare", help="where the revisions are exported and installed")
    args = parser.parse_args()
    work = Path(args.work)
    sides = {name: _prepare(rev, work) for name, rev in (("a", args.a), ("b", args.b))}
    ratios: dict[str, dict[str, list[float]]] = {"a": {}, "b": {}}
    for round_ in range(args.rounds):
        for name, (tree, python) in sides.items():
            found = _run(tree, python, args.areas, work / f"{name}-{round_}.json")
            for row, ratio in found.items():
                ratios[name].setdefault(row, []).append(ratio)
            print(f"round {round_ + 1}/{args.rounds}: {name} done", file=sys.stderr)
    medians: dict[str, dict[str, Any]] = {
        name: {row: statistics.median(values) for row, values in rows.items()} for name, rows in ratios.items()
    }
    shared = [row for row in medians["a"] if row in medians["b"]]
    width = max((len(row) for row in shared), default=4)
    print(f"{'ROW'.ljust(width)}  {args.a:>10}  {args.b:>10}  B/A")
    for row in shared:
        a, b = medians["a"][row], medians["b"][row]
        print(f"{row.ljust(width)}  {a:>10.3g}  {b:>10.3g}  {b / a if a else float('nan'):.2f}")
    only = sorted(set(medians["a"]) ^ set(medians["b"]))
    if only:
        print("rows in one revision only: " + "; ".join(only))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
