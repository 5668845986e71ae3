"""The `wmap` subcommands, one module each; the table of them (names, one-line help, where each lives) is
`workload_map.cli.command_table`, re-exported here."""

from workload_map.cli.command_table import COMMANDS, CommandSpec

__all__ = ["COMMANDS", "CommandSpec"]
