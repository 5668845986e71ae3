"""The run loop of `wmap`: the root group (`cli.root`) run in this process, errors mapped to exit codes.

`workload_map.cli.main` is the entry point; it answers `wmap --version` without importing this module (or click).
The common `describe -f FILE -o FORMAT` runs without click (`cli.quick`, same loop, same command code); the root
group and click are imported only for every other command line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from workload_map.cli import COMPLETE_VAR, context, quick, resume_gc
from workload_map.cli.errors import EXIT_OK, CLIError, report_exception
from workload_map.cli.jqsettings import raise_if_stopped, stopped_error

__all__ = ["COMPLETE_VAR", "run"]


def run(args: Sequence[str], prog_name: str = "wmap", *, quick_path: bool = True) -> int:
    """Run `wmap` with `args` in this process; the exit code (warnings and errors printed on stderr).
    `quick_path=False` sends every command line through click (the tests compare the two paths)."""
    argv = list(args)
    state = context.reset(debug="--debug" in argv[: argv.index("--")] if "--" in argv else "--debug" in argv)
    try:
        try:
            instruction = os.environ.get(COMPLETE_VAR)
            if instruction:  # a completion script calling back (see workload_map.cli.completion)
                from workload_map.cli.completion import shell_complete  # only then (issue 19: start-up)

                resume_gc()
                return shell_complete(instruction, prog_name)
            given = quick.describe_args(argv) if quick_path else None
            if given is not None:
                quick.run_describe(given)
                result = None
            else:
                from workload_map.cli.root import cli  # click and the root group: every other command line

                result = cli.main(args=argv, prog_name=prog_name, standalone_mode=False, complete_var=COMPLETE_VAR)
            raise_if_stopped()  # the jq worker stopped an evaluation: the output is incomplete (exit 1)
            state.raise_if_incomplete()  # a document of a stream could not be read (exit 1)
        finally:
            state.flush_warnings()
    except SystemExit as exc:  # anything that still exits from inside click
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:
        stopped = stopped_error() if isinstance(exc, CLIError) else None
        if stopped is not None and stopped.message != getattr(exc, "message", None):
            report_exception(stopped)  # the definition the worker stopped is named even when the command failed
        return report_exception(exc, debug=state.debug)
    return result if isinstance(result, int) else EXIT_OK
