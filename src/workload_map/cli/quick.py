"""The run without click: `wmap describe -f FILE [-f FILE...] [-o FORMAT]`, the command run most often, answered
without importing click or the root group (~15 ms of a ~40 ms start; issue 19).

`describe_args(argv)` accepts exactly these shapes after `describe` (nothing before it):

    -f FILE  -fFILE  --filename FILE  --filename=FILE  --file FILE  --file=FILE      (one or more)
    -o FORMAT  -oFORMAT  --output FORMAT  --output=FORMAT                            (at most one)

with FORMAT one `describe` prints (`commands.describe_files.OUTPUT`, aliases included) and each FILE non-empty and
not an option (`-` is stdin), and only when no config file applies (`cli.config.config_location`: `--config`
cannot be given here, `$WMAP_CONFIG` is unset and the default file does not exist) and no shell completion is
calling back. It returns the `DescribeArgs` click would pass (the defaults are the ones the click options use), or
None for anything else: help, another command, any other option, a value click would refuse or read differently
(an empty one, one starting with `-`, a file that exists but cannot be read, which `click.Path` reports), a
repeated `-o`, `--`. Those go to click (`cli.app.run`), which parses and reports them as always.
`tests/cli/test_quick_describe.py` runs both paths on every example and conformance manifest and on bad inputs and
compares stdout, stderr and the exit code byte for byte.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from workload_map.cli import COMPLETE_VAR
from workload_map.cli.config import config_location

if TYPE_CHECKING:
    from workload_map.cli.commands.describe_files import DescribeArgs

_FILE_FLAGS = ("--filename", "--file")
_OUTPUT_FLAGS = ("--output",)


def _parse(argv: Sequence[str]) -> tuple[list[str], str | None] | None:
    """(files, output as given) of a `describe -f ... [-o ...]` command line, or None for any other shape."""
    if len(argv) < 2 or argv[0] != "describe":
        return None
    files: list[str] = []
    output: str | None = None
    outputs = 0
    words = list(argv[1:])
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        flag, equals, value = word.partition("=") if word.startswith("--") else (word[:2], "", word[2:])
        if flag in ("-f", *_FILE_FLAGS):
            is_file = True
        elif flag in ("-o", *_OUTPUT_FLAGS):
            is_file = False
        else:
            return None
        if flag.startswith("--") and not equals:
            value = ""
        if not value and not equals:  # the value is the next word
            if index >= len(words):
                return None
            value = words[index]
            index += 1
        if not value or (value.startswith("-") and not (is_file and value == "-")):
            return None  # click reads these its own way (or refuses them): let it
        if is_file:
            files.append(value)
        else:
            output, outputs = value, outputs + 1
    if not files or outputs > 1:
        return None
    return files, output


def _readable_as_click_checks(path: str) -> bool:
    """What `click.Path()` (exists=False, readable=True) lets through: a path that does not exist, or one this
    process may read."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return True
    return os.access(path, os.R_OK)


def describe_args(argv: Sequence[str]) -> DescribeArgs | None:
    """The values click would run `describe` with for `argv`, when the run without click can take it; else None."""
    parsed = _parse(argv)
    if parsed is None or COMPLETE_VAR in os.environ:
        return None
    files, output = parsed
    path, named_by = config_location(None)
    if named_by or os.path.exists(path):
        return None
    if not all(_readable_as_click_checks(name) for name in files):
        return None
    from workload_map.cli.commands.describe_files import OUTPUT, DescribeArgs

    if output is not None:
        output = OUTPUT.normalise(output)
        if output is None:
            return None
    return DescribeArgs(files=tuple(files), output=output)


def run_describe(given: DescribeArgs) -> None:
    """Run `describe` as the root group would: the root's jq settings from the environment (no root option was
    given), then the command, with the collector back on once its modules are imported and the built-in catalog
    is loaded (`cli.resume_gc`)."""
    from workload_map.cli import resume_gc
    from workload_map.cli.commands.describe_files import describe_run
    from workload_map.cli.jqsettings import store_unflagged

    _load_catalog()
    resume_gc()
    store_unflagged()
    describe_run(given)


def _load_catalog() -> None:
    """Load the built-in catalog (once per process: the command's registry takes the same objects) while the
    collector still sleeps: its index (each definition's name and root GVK), the definitions' encodings and their
    expressions' syntax trees live as long as the process, and made with the collector on they started collections
    that found nothing to free (~2 ms; issue 19). `resume_gc` then freezes them with the modules; the one definition
    a describe decodes is made later. A catalog that cannot be loaded is left for the command, which loads it at its
    usual point and reports the error there as always."""
    from workload_map.catalog import builtin_registry

    with contextlib.suppress(Exception):  # the command reports it, at the same point as without this call
        builtin_registry()
