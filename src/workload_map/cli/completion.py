"""Shell completion: click's machinery for `wmap`, and a Cobra-protocol adapter for `kubectl wmap`.

`wmap completion bash|zsh|fish` prints click's script, which calls `wmap` back with `_WMAP_COMPLETE` set.

kubectl (1.26+) completes a plugin by running `kubectl_complete-<plugin> <words...>`, the words after the plugin
name with the one being completed last (empty after a space). It expects Cobra's `__complete` answer: one
candidate per line (`value<TAB>description`), then `:<directive>`, a bit set telling the shell what else to do.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO

# Cobra's ShellCompDirective bits.
DIRECTIVE_DEFAULT = 0  # the shell may complete file names when there are no candidates
DIRECTIVE_ERROR = 1
DIRECTIVE_NO_SPACE = 2
DIRECTIVE_NO_FILE_COMP = 4
DIRECTIVE_FILTER_FILE_EXT = 8  # the candidates are file extensions to offer
DIRECTIVE_FILTER_DIRS = 16

MANIFEST_EXTENSIONS = ("yaml", "yml", "json")


def cobra_complete(words: Sequence[str], stdout: IO[str] | None = None) -> int:
    """Answer one kubectl plugin completion request; always exit 0 (a failure offers nothing)."""
    out = stdout if stdout is not None else sys.stdout
    from click.shell_completion import ShellComplete

    from workload_map.cli import context
    from workload_map.cli.app import COMPLETE_VAR, cli

    context.reset()
    items = list(words) or [""]
    args, incomplete = items[:-1], items[-1]
    lines: list[str] = []
    directive = DIRECTIVE_NO_FILE_COMP
    try:
        completions = ShellComplete(cli, {}, "kubectl wmap", COMPLETE_VAR).get_completions(args, incomplete)
    except Exception:  # completion must never print a traceback into the user's shell
        completions = []
        directive = DIRECTIVE_ERROR
    for item in completions:
        if item.type == "file":
            lines = list(MANIFEST_EXTENSIONS)
            directive = DIRECTIVE_FILTER_FILE_EXT
            break
        if item.type == "dir":
            lines = []
            directive = DIRECTIVE_FILTER_DIRS
            break
        help_text = f"\t{item.help}" if item.help else ""
        lines.append(f"{item.value}{help_text}")
    out.write("".join(f"{line}\n" for line in lines))
    out.write(f":{directive}\n")
    out.flush()
    return 0
