"""PowerShell completion on every click version the project allows: click 8.5 has its own (kept), older releases
get this one, registered on import (`cli.completion` and `wmap completion` import this module), so
`_WMAP_COMPLETE=powershell_complete` is answered like bash's."""

from __future__ import annotations

import os

from click.shell_completion import (
    CompletionItem,
    ShellComplete,
    add_completion_class,
    get_completion_class,
    split_arg_string,
)

__all__ = ["PowerShellComplete"]


class PowerShellComplete(ShellComplete):
    """PowerShell (5.1 and 7): a native argument completer that calls `wmap` back with the command line and the
    word being completed in the environment, and turns each `type<TAB>value<TAB>help` line into a candidate."""

    name = "powershell"
    source_template = r"""Register-ArgumentCompleter -Native -CommandName %(prog_name)s -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $env:COMP_WORDS = $commandAst.ToString()
    $env:COMP_CWORD = $wordToComplete
    $env:%(complete_var)s = "powershell_complete"
    & %(prog_name)s | ForEach-Object {
        $kind, $value, $help = $_ -split "`t", 3
        if ($kind -eq "file" -or $kind -eq "dir") { return }
        $tip = if ($help) { $help } else { $value }
        [System.Management.Automation.CompletionResult]::new($value, $value, 'ParameterValue', $tip)
    }
    Remove-Item Env:\COMP_WORDS, Env:\COMP_CWORD, Env:\%(complete_var)s
}
"""

    def get_completion_args(self) -> tuple[list[str], str]:
        words = split_arg_string(os.environ.get("COMP_WORDS", ""))
        incomplete = os.environ.get("COMP_CWORD", "")
        args = words[1:]
        if incomplete and args and args[-1] == incomplete:
            args = args[:-1]  # the word being completed is on the command line too
        return args, incomplete

    def format_completion(self, item: CompletionItem) -> str:
        return f"{item.type}\t{item.value}\t{item.help or ''}"


if get_completion_class("powershell") is None:
    add_completion_class(PowerShellComplete)
