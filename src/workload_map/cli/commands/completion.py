"""`wmap completion bash|zsh|fish`: the shell completion script."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from workload_map.cli import shells as _registers_powershell  # noqa: F401 - registers the PowerShell completer
from workload_map.cli.root import COMPLETE_VAR, cli

SHELLS = ("bash", "zsh", "fish", "powershell")

_HELP = """\
Print the shell completion script for SHELL (bash, zsh, fish or powershell).

\b
  bash:  eval "$(wmap completion bash)"     (in ~/.bashrc; needs bash 4.4+)
  zsh:   eval "$(wmap completion zsh)"      (in ~/.zshrc)
  fish:  wmap completion fish > ~/.config/fish/completions/wmap.fish
  powershell:  wmap completion powershell | Out-String | Invoke-Expression   (in $PROFILE)

`kubectl wmap` completes through kubectl itself (1.26+): it runs the kubectl_complete-wmap executable installed
with wmap, which must be on PATH.
"""


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    completer = get_completion_class(shell)
    if completer is None:  # pragma: no cover - the choices are click's own shells
        raise click.BadParameter(f"no completion for {shell}")
    click.echo(completer(cli, {}, "wmap", COMPLETE_VAR).source())
