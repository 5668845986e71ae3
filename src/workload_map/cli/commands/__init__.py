"""The `wmap` subcommands, one module each; the table of them (names, one-line help, where each lives) is
`workload_map.cli.command_table`, re-exported here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workload_map.cli.command_table import COMMANDS, CommandSpec

__all__ = ["COMMANDS", "CommandSpec"]


def __getattr__(name: str) -> Any:
    # on first use: `describe -f` imports a command module of this package, never the table (issue 19: start-up)
    if name in __all__:
        from workload_map.cli import command_table

        return getattr(command_table, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
