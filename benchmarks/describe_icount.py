"""Where the instructions of one `wmap describe -f FILE -o json` go, by phase and by module (issue 19: start-up).

    X/bin/python benchmarks/describe_icount.py [FILE] [--modules 30]

Run with an installed revision's interpreter (a venv made by `pip install`, so its bytecode is written). The
command runs once under callgrind in a child that does what the console script does (`import re, sys`, then
`workload_map.cli.main.main()`), with a marker call (`os.getppid`, on which callgrind dumps its counts) between
phases and around each `workload_map` module's code:

- interpreter and site: up to the console script's first line (about what `python -c pass` runs, less its exit);
- the console script's imports: `re` (with `enum`, ~25 M), `sys`, `workload_map.cli.main` and the package;
- gc paused, the finder installed, msgspec imported (what `cli.main.main` does before it calls `run`);
- the describe's modules imported: `cli.app`, `cli.quick` and what `describe_args` imports;
- the catalog loaded (`cli.quick._load_catalog`);
- the command run: the manifest read, resolved, its view built and written;
- the exit: `atexit` handlers and `os._exit`.

Per module: the instructions while its own code runs, less those of the package's modules it imports (what finding
and loading them costs is counted to the importer, whose code asked); a standard-library module it is the first to
import is its own (`cli.deferred`'s figure is mostly `typing`'s, ~13 M, which msgspec needs anyway). The markers'
own cost (a few thousand instructions each) is in the figures. A warm-up run first builds the catalog blob in a
temporary HOME, so what is counted is a start with the blob present, as every start after the first. Needs valgrind;
run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = """
import os
import sys

EVENTS = []


def _mark(kind, name=""):
    EVENTS.append((kind, name))
    os.getppid()


class _Marking:
    # each workload_map module, as the finders after this one find it, with markers around its code
    @staticmethod
    def find_spec(name, path=None, target=None):
        if not name.startswith("workload_map."):
            return None
        for finder in sys.meta_path:
            find = None if finder is _Marking else getattr(finder, "find_spec", None)
            spec = None if find is None else find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run = spec.loader.exec_module

        def exec_module(module, run=run, name=name):
            _mark("enter", name)
            try:
                run(module)
            finally:
                _mark("exit", name)
                if name == "workload_map.cli.quick":
                    _wrap_catalog(module)

        spec.loader.exec_module = exec_module
        return spec


def _wrap_catalog(quick):
    load = quick._load_catalog

    def _load_catalog():
        _mark("phase", "the catalog loaded")
        load()
        _mark("phase", "the command run")

    quick._load_catalog = _load_catalog


out_path, manifest = sys.argv[1], sys.argv[2]
sys.argv = ["wmap", "describe", "-f", manifest, "-o", "json"]
_mark("phase", "the console script's imports (re, sys, workload_map.cli.main)")
import re
import sys
from workload_map.cli.main import main
import workload_map.cli.finder as _finder
import workload_map.cli.main as _main_module

_install = _finder.install


def _install_marking():
    done = _install()
    sys.meta_path.insert(0, _Marking)
    return done


_finder.install = _install_marking
_run = _main_module.run


def _run_marked(*args, **kwargs):
    _mark("phase", "the describe's modules imported (cli.app, cli.quick, describe_args)")
    return _run(*args, **kwargs)


_main_module.run = _run_marked
_exit = os._exit


def _exit_marked(code):
    _mark("phase", "the exit")
    with open(out_path, "w") as out:
        out.writelines(f"{kind}\\t{name}\\n" for kind, name in EVENTS)
    _exit(code)


os._exit = _exit_marked
_mark("phase", "gc paused, the finder installed, msgspec imported")
main()
"""

_FIRST_PHASE = "interpreter and site"


def _dump_total(path: Path) -> int:
    for line in path.read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise SystemExit(f"no summary line in {path}")


def _dumps(prefix: Path) -> list[int]:
    """The counts of the dumps, in order: `prefix.1`, `prefix.2`, ..., then `prefix` (the last, at the end)."""
    numbered = sorted(prefix.parent.glob(prefix.name + ".*"), key=lambda path: int(path.suffix[1:]))
    return [_dump_total(path) for path in numbered] + [_dump_total(prefix)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", default="examples/pytorchjob.yaml")
    parser.add_argument("--modules", type=int, default=30, help="how many modules to list (most costly first)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("needs valgrind (apt-get install valgrind)")
    manifest = str(Path(args.file).resolve())
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        child, events_file, prefix = work / "child.py", work / "events.tsv", work / "callgrind.out"
        child.write_text(_CHILD)
        env = {**os.environ, "HOME": str(work), "KUBECONFIG": "/nonexistent", "PYTHONHASHSEED": "0"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode; so does this run
        env.pop("WMAP_CACHE_DIR", None)
        command = [sys.executable, str(child), str(events_file), manifest]
        subprocess.run(command, env=env, cwd=temp, check=True, capture_output=True)  # builds the catalog blob
        valgrind = ["valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={prefix}"]
        subprocess.run([*valgrind, *command], env=env, cwd=temp, check=True, capture_output=True)
        if not events_file.exists():  # the command ended without `os._exit` (another thread, an error)
            raise SystemExit("the describe did not reach its exit: no markers to read (run it alone to see why)")
        events = [tuple(line.split("\t", 1)) for line in events_file.read_text().splitlines()]
        counts = _dumps(prefix)
    # the first dump ends at the first marker; the one after marker k runs to marker k + 1 (the last to the end)
    if len(counts) != len(events) + 1:
        raise SystemExit(f"{len(counts)} dumps for {len(events)} markers: the markers and the dumps disagree")
    phases: dict[str, int] = {_FIRST_PHASE: counts[0]}
    modules: dict[str, int] = {}
    phase, stack = _FIRST_PHASE, []
    for (kind, name), count in zip(events, counts[1:], strict=True):
        if kind == "phase":
            phase = name
        elif kind == "enter":
            stack.append(name)
        elif kind == "exit":
            stack.pop()
        phases[phase] = phases.get(phase, 0) + count
        if stack:
            modules[stack[-1]] = modules.get(stack[-1], 0) + count
    total = sum(counts)
    print(f"wmap describe -f {args.file} -o json: {total / 1e6:.2f} M instructions (callgrind, markers included)")
    for name, count in phases.items():
        print(f"  {count / 1e6:8.2f} M  {100 * count / total:5.1f}%  {name}")
    print(f"the package's modules' own code: {sum(modules.values()) / 1e6:.2f} M in {len(modules)} modules")
    for name, count in sorted(modules.items(), key=lambda item: -item[1])[: args.modules]:
        print(f"  {count / 1e6:8.2f} M  {name}")


if __name__ == "__main__":
    main()
