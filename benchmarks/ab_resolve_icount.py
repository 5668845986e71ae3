"""Instructions per call of `ab_resolve_cpu.py`'s cases, counted by cachegrind (issue 19): stable on a loaded
machine, where CPU time moves by tens of percent, and comparable between revisions.

    X/bin/python benchmarks/ab_resolve_icount.py ["complete 19KB" "status 19KB" ...] [--calls 500]

For each case: valgrind's instruction count of a process that makes the case's call `--calls` times, minus that of
one that makes it 0 times (both after the same 50 warm-up calls), divided by `--calls`; `loads CASE` counts
`json.loads` of the case's object's text. Each count is taken twice and must agree, so that no run pays for
compiling bytecode the other does not (a count taken right after an edit can, when bytecode is written on first
import). Needs `valgrind`. Run by hand; never in CI.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import json, os, sys
sys.path.insert(0, {here!r})
from ab_resolve_cpu import _cases
name, calls = sys.argv[1], int(sys.argv[2])
cases = _cases()
if name.startswith("loads "):
    _, obj = cases[name[len("loads "):]]
    text = json.dumps(obj)
    function = lambda: json.loads(text)
else:
    function, _ = cases[name]
for _ in range(50):
    function()
for _ in range(calls):
    function()
os._exit(0)
"""


def _instructions(child: Path, name: str, calls: int) -> int:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    valgrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    done = subprocess.run(
        [*valgrind, sys.executable, str(child), name, str(calls)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output for {name!r}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", default=["complete 19KB", "status 19KB", "loads complete 19KB"])
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("needs valgrind (apt-get install valgrind)")
    here = str(Path(__file__).resolve().parent)
    with tempfile.TemporaryDirectory() as temp:
        child = Path(temp) / "icount_child.py"
        child.write_text(_CHILD.format(here=here))
        for name in args.cases:
            counts = []
            for _ in range(2):
                counts.append((_instructions(child, name, args.calls) - _instructions(child, name, 0)) // args.calls)
            note = "" if counts[0] == counts[1] else f"   (the two counts differ: {counts[0]:,} and {counts[1]:,})"
            print(f"{name:28s} {counts[1]:>12,} instructions a call{note}", flush=True)


if __name__ == "__main__":
    main()
