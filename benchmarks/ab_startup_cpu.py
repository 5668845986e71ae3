"""`wmap describe -f FILE -o json` of one or more installed revisions, `python -c pass` and kli, in CPU time (issue 19).

    python benchmarks/ab_startup_cpu.py --wmap A=/tmp/a/.venv/bin/wmap --wmap B=/tmp/b/.venv/bin/wmap \
        --kli ../shared/tools/kli --rounds 21 examples/pytorchjob.yaml examples/jobset.yaml

Every command is a fresh process, forked and waited for with `os.wait4`, so its CPU time (user + sys) is its own
and not the wall clock's, which a shared 2-core machine moves by tens of percent between rounds; rounds alternate
every command, medians are printed with the wall time beside them, and the ratios to `python -c pass` (run by the
first revision's interpreter) and to kli. Offline, as bench_kli.py runs them: `KUBECONFIG=/nonexistent`, a fresh
`HOME`, and bytecode written (installed packages have it; `PYTHONDONTWRITEBYTECODE` is dropped). Each revision's
`wmap --version` is timed too. Run by hand; never in CI. kli is a build of upstream's CLI for timing only
(../shared/tools/README.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU ms, wall ms) of one run of `argv`, its output discarded."""
    began = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    _pid, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter() - began) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    return (usage.ru_utime + usage.ru_stime) * 1000, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="manifests to describe")
    parser.add_argument("--wmap", action="append", required=True, metavar="NAME=PATH", help="an installed wmap")
    parser.add_argument("--kli", help="upstream's kli, for the side-by-side rows")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    revisions = dict(item.split("=", 1) for item in args.wmap)
    python = str(Path(next(iter(revisions.values()))).with_name("python"))
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
        env.update(KUBECONFIG="/nonexistent", HOME=home, XDG_CONFIG_HOME=str(Path(home) / ".config"))
        for path in args.files:
            commands = {"python -c pass": [python, "-c", "pass"]}
            for name, wmap in revisions.items():
                commands[f"{name} describe"] = [wmap, "describe", "-f", path, "-o", "json"]
                commands[f"{name} --version"] = [wmap, "--version"]
            if args.kli:
                commands["kli describe"] = [args.kli, "describe", "-f", path, "-o", "json"]
            for argv in commands.values():  # warm: bytecode, the catalog blob, the page cache
                _timed(argv, env)
            cpu: dict[str, list[float]] = {name: [] for name in commands}
            wall: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(args.rounds):
                for name, argv in commands.items():
                    used, elapsed = _timed(argv, env)
                    cpu[name].append(used)
                    wall[name].append(elapsed)
            base = statistics.median(cpu["python -c pass"])
            kli = statistics.median(cpu["kli describe"]) if args.kli else None
            print(f"{path} ({args.rounds} rounds, load average {os.getloadavg()[0]:.1f})")
            for name in commands:
                used, elapsed = statistics.median(cpu[name]), statistics.median(wall[name])
                ratios = f"{used / base:5.2f}x pass"
                if kli and name.endswith("describe"):
                    ratios += f"  {used / kli:5.2f}x kli"
                print(f"  {name:<24} cpu {used:7.1f} ms  wall {elapsed:7.1f} ms  {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
