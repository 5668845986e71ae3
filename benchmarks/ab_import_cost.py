"""What the import system costs a module before its code runs, through the path finder and through the console
script's finder (`workload_map.cli.finder`), in CPU time (issue 19: start-up).

    python benchmarks/ab_import_cost.py [--modules 200] [--rounds 11]

It writes MODULES trivial modules (`X = 1`) twice, as submodules of a package and as top-level modules in a
directory put last on `sys.path` (so every entry before it is looked in first), compiles their bytecode, and
times, in fresh processes, importing all of them against importing none (CPU time of the child, `os.wait4`), with
and without the finder installed. Printed: microseconds a module (the median over ROUNDS of the difference divided
by MODULES) and the finder's ratio to the path finder. Run by hand; never in CI.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import sys
import tempfile
import textwrap
from pathlib import Path

_CHILD = textwrap.dedent(
    """
    import os, sys
    root, kind, count, lean = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
    sys.path.append(root)
    if lean:
        from workload_map.cli import finder
        finder.install()
    if kind == "sub":
        import pkg
        names = [f"pkg.m{i}" for i in range(count)]
    else:
        names = [f"top_m{i}" for i in range(count)]
    for name in names:
        __import__(name)
    os._exit(0)
    """
)


def _cpu(argv: list[str]) -> float:
    """CPU seconds (user + sys) of one run of `argv`."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {argv}")
    return usage.ru_utime + usage.ru_stime


def _write(root: Path, count: int) -> None:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for index in range(count):
        (package / f"m{index}.py").write_text("X = 1\n")
        (root / f"top_m{index}.py").write_text("X = 1\n")
    compileall.compile_dir(str(root), quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        _write(root, args.modules)
        child = root / "child.py"
        child.write_text(_CHILD)
        for kind in ("sub", "top"):
            per_module: dict[str, list[float]] = {"path finder": [], "cli.finder": []}
            for _ in range(args.rounds):
                for label, lean in (("path finder", "0"), ("cli.finder", "1")):
                    run = [sys.executable, str(child), str(root), kind]
                    none = _cpu([*run, "0", lean])
                    every = _cpu([*run, str(args.modules), lean])
                    per_module[label].append((every - none) / args.modules * 1e6)
            base, lean = (statistics.median(per_module[label]) for label in ("path finder", "cli.finder"))
            what = "submodules of a package" if kind == "sub" else "top-level modules, last on sys.path"
            print(f"{what} ({args.modules}, {args.rounds} rounds)")
            print(f"  path finder   {base:7.1f} us a module")
            print(f"  cli.finder    {lean:7.1f} us a module   {lean / base:.2f}x")


if __name__ == "__main__":
    main()
