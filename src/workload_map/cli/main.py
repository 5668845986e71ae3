"""Entry points: `wmap` / `kubectl-wmap` (`main`) and `kubectl_complete-wmap` (`kubectl_complete`).

Kept tiny on purpose: `wmap --version` is answered here without importing click or any layer; everything else goes
to `workload_map.cli.app`, which imports each command only when it runs. So the CLI's own modules are imported
inside the functions below, not at the top: the run loop and the root group (click) cost ~25 ms that `--version`
does not pay.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from workload_map._version import __version__


def _prog_name(argv0: str) -> str:
    """`kubectl wmap` when run as the kubectl plugin (so help and errors name the command the user typed)."""
    name = os.path.basename(argv0)
    if name.startswith("kubectl-"):
        return "kubectl " + name[len("kubectl-") :].replace("_", "-")
    return "wmap"


def run(args: Sequence[str] | None = None, prog_name: str | None = None, *, quick_path: bool = True) -> int:
    """Run the CLI in this process and return the exit code (what tests and `python -m workload_map` call);
    `quick_path=False` sends `describe -f` through click too (`cli.quick`; the tests compare the two)."""
    argv = list(sys.argv[1:] if args is None else args)
    if _asks_version(argv):
        sys.stdout.write(__version__ + "\n")
        return 0
    from workload_map.cli.app import run as run_app

    return run_app(argv, prog_name or _prog_name(sys.argv[0] if sys.argv else "wmap"), quick_path=quick_path)


def _asks_version(argv: Sequence[str]) -> bool:
    """`wmap --version`, answered before anything is imported."""
    return list(argv) == ["--version"]


EXIT_ERROR = 1  # as workload_map.cli.errors.EXIT_ERROR (not imported: --version imports nothing)


def _closed_streams() -> int | None:
    """Started with stdout or stderr closed (`>&-`, `2>&-`): Python leaves them None. A closed stderr becomes
    /dev/null, so the exit code is the command's all the same; a closed stdout ends the run at once with exit 1
    (nothing could be printed) and says so on stderr, when that is open."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (lives as long as the process)
    if sys.stdout is None:
        sys.stderr.write("error: standard output is closed; nothing can be printed\n")
        sys.stderr.flush()
        return EXIT_ERROR
    return None


def main(args: Sequence[str] | None = None) -> None:
    """The `wmap` and `kubectl-wmap` console scripts: run and exit with the code."""
    closed = _closed_streams()
    if closed is not None:
        sys.exit(closed)
    if args is None:  # the console script: the collector sleeps through the imports (cli.pause_gc)
        from workload_map.cli import pause_gc

        pause_gc()
        if not _asks_version(sys.argv[1:]):  # --version imports nothing at all
            from workload_map.cli import finder  # the leaner finder of the imports to come (cli.finder)

            finder.install()
            import_msgspec_alone()
    code = run(args)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        from workload_map.cli.errors import EXIT_BROKEN_PIPE, _silence_stdout

        _silence_stdout()
        code = EXIT_BROKEN_PIPE
    if args is None:  # the console script or `python -m workload_map`, not a caller in this process
        _exit_now(code)
    sys.exit(code)


def import_msgspec_alone() -> None:
    """Import msgspec as lightly as it can be imported (the console script only; never on `import workload_map`).

    These standard-library costs come with `import msgspec` that a command does not need:

    - `typing_extensions`: msgspec's `_utils` prefers its `get_type_hints`, `Required` and `NotRequired` when it
      can be imported, and importing it (with the `inspect`, `ast`, `dis` and `tokenize` it pulls in) is ~7 ms of
      a ~40 ms `describe -f`. From Python 3.11 on they are the standard library's: `typing_extensions.Required`
      and `NotRequired` are `typing`'s objects, and its `get_type_hints(..., include_extras=True)`, the only way
      msgspec calls it, returns `typing.get_type_hints`' answer unchanged (its own work is for 3.10 and for
      `include_extras=False`). So msgspec then falls back to the same functions and types, and every Struct, ours
      and any typing_extensions type in a TypedDict or `Annotated` alike, is read the same. The block lasts only
      for msgspec's import: `import typing_extensions` works as before afterwards (lightkube's and httpx's imports
      in the live commands).
    - on Python 3.11, running datetime.py, which defines the whole pure-Python implementation only to replace it with
      `_datetime`'s: the module is made from `_datetime` with the same namespace (`cli.deferred`,
      `import_datetime_from_c`; ~3 million instructions).
    - `platform`, which msgspec's `uuid` imports to ask `platform.system()` once, for its `_AIX` and `_LINUX`
      constants: the module compiles nine regular expressions when it is executed (~2 ms). `uuid` is imported
      first here with a stand-in that answers `system()` as `platform` does on a POSIX system (`os.uname()`'s
      `sysname`); the real module then takes its place in `sys.modules` and in `uuid`, deferred (`cli.deferred`): its
      code runs at the first use of one of its attributes, in the one module object everyone imports.
    - `textwrap` and `msgspec.inspect`, which msgspec's JSON schema module imports and uses only when a schema is
      built (`msgspec.json.schema`): ~2 ms of module code (textwrap's patterns, inspect's classes); and
      `msgspec.toml` and `msgspec.yaml`, which `import msgspec` loads and this package never calls (~0.3 ms). All
      four are deferred the same way.
    - the pattern `fractions` compiles when imported, which only `Fraction(str)` uses: compiled on first use
      (`import_fractions_with_a_lazy_pattern`; ~4.7 million instructions).
    - `json`, which most modules import and a run seldom calls (msgspec writes the JSON; its six patterns and
      three modules are ~5 million instructions): deferred too, it runs at the first `json.dumps` or `json.loads`.

    On 3.10, or when msgspec or any of these modules is already loaded, that part is left as it is.
    `tests/unit/test_startup_imports.py` checks all of it.
    """
    if sys.hexversion < 0x030B0000 or "msgspec" in sys.modules or "typing_extensions" in sys.modules:  # 3.11
        return
    from workload_map.cli.deferred import (
        defer,
        import_datetime_from_c,
        import_fractions_with_a_lazy_pattern,
        import_uuid_without_platform,
    )

    import_datetime_from_c()
    import_uuid_without_platform()
    for name in ("json", "textwrap", "msgspec.inspect", "msgspec.toml", "msgspec.yaml"):
        defer(name)
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        import msgspec  # noqa: F401
    finally:
        del sys.modules["typing_extensions"]
    import_fractions_with_a_lazy_pattern()


def _exit_now(code: int) -> None:
    """End the process without the interpreter's teardown, once nothing is left to do.

    Tearing down the ~250 modules a command loads (clearing their dictionaries, collecting their objects) costs
    15-20 ms, more than a whole `python -c pass` (issue 19: start-up); none of it has an effect a user can see.
    What can have one is done first: the `atexit` handlers (the jq worker pool's shutdown among them) and the
    flush of stdout and stderr. With another thread still running (the controller, a server), or when a flush
    fails, the normal exit runs instead, so its joins and its error reporting are kept.
    """
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    import atexit

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a stream that cannot take it: the normal exit reports it as it always did
        return
    os._exit(code)


def kubectl_complete(args: Sequence[str] | None = None) -> None:
    """`kubectl_complete-wmap`: kubectl (1.26+) runs it to complete `kubectl wmap ...` with the words after `wmap`
    (the last one is the word being completed, possibly empty). It prints candidates, one per line, then a
    `:<directive>` line, as Cobra's `__complete` does (workload_map.cli.completion)."""
    from workload_map.cli.completion import cobra_complete

    sys.exit(cobra_complete(list(sys.argv[1:] if args is None else args)))
