"""Shell completion: click's machinery for `wmap`, and a Cobra-protocol adapter for `kubectl wmap`.

`wmap completion bash|zsh|fish` prints click's script, which calls `wmap` back with `_WMAP_COMPLETE` set; `run`
answers that call with `shell_complete` rather than leaving it to `click.Group.main`: click 8.4.1+ writes its answer
as bytes, which a text-only stdout (io.StringIO, contextlib.redirect_stdout) rejects with a TypeError, where click
8.4.0 and older write text. `shell_complete` writes the same bytes with every click version and to any stream.

kubectl (1.26+) completes a plugin by running `kubectl_complete-<plugin> <words...>`, the words after the plugin
name with the one being completed last (empty after a space). It expects Cobra's `__complete` answer: one
candidate per line (`value<TAB>description`), then `:<directive>`, a bit set telling the shell what else to do.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO

from click.shell_completion import ShellComplete, get_completion_class

from workload_map.cli import context
from workload_map.cli import shells as _registers_powershell  # noqa: F401 - PowerShell on every click version
from workload_map.cli.root import COMPLETE_VAR, cli

# Cobra's ShellCompDirective bits.
DIRECTIVE_DEFAULT = 0  # the shell may complete file names when there are no candidates
DIRECTIVE_ERROR = 1
DIRECTIVE_NO_SPACE = 2
DIRECTIVE_NO_FILE_COMP = 4
DIRECTIVE_FILTER_FILE_EXT = 8  # the candidates are file extensions to offer
DIRECTIVE_FILTER_DIRS = 16

MANIFEST_EXTENSIONS = ("yaml", "yml", "json")


def write_answer(text: str, out: IO[str]) -> None:
    """Write a completion answer: UTF-8 bytes through the stream's binary buffer when it has one (so a Windows
    console does not turn LF into the CRLF the shell scripts do not expect), else as text."""
    out.flush()
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        buffer.write(text.encode("utf-8"))
        buffer.flush()
    else:
        out.write(text)
        out.flush()


def shell_complete(instruction: str, prog_name: str = "wmap", stdout: IO[str] | None = None) -> int:
    """Answer click's completion callback, `_WMAP_COMPLETE=<shell>_complete` (the candidates, in that shell's
    format) or `<shell>_source` (the script); the exit code: 0, or 1 for an unknown shell or instruction."""
    shell, _, action = instruction.partition("_")
    completer = get_completion_class(shell)
    if completer is None or action not in ("complete", "source"):
        return 1
    comp = completer(cli, {}, prog_name, COMPLETE_VAR)
    answer = comp.complete() + "\n" if action == "complete" else comp.source()
    write_answer(answer, stdout if stdout is not None else sys.stdout)
    return 0


def cobra_complete(words: Sequence[str], stdout: IO[str] | None = None) -> int:
    """Answer one kubectl plugin completion request; always exit 0 (a failure offers nothing)."""
    out = stdout if stdout is not None else sys.stdout
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
    write_answer("".join(f"{line}\n" for line in lines) + f":{directive}\n", out)
    return 0
