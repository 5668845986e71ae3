"""The command table: every `wmap` subcommand, imported only when it runs (or its help is asked for).

To add a command, write `workload_map/cli/commands/<name>.py` with a `click.Command` and add one line here. The
short help is kept in this table so `wmap --help` lists every command without importing any of them. It sits below
the root group (`cli.root`) and the config file (`cli.config`, which knows the command names) and imports nothing
of the CLI, so neither depends on the command modules.
"""

from __future__ import annotations

import msgspec


class CommandSpec(msgspec.Struct, frozen=True):
    """Where a command lives (`module:attribute`) and its one-line help."""

    target: str
    short_help: str
    hidden: bool = False

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    @property
    def attribute(self) -> str:
        return self.target.partition(":")[2]

    @property
    def available(self) -> bool:
        """Whether the command's module is installed (a command can be listed before its module lands)."""
        import importlib.util  # only for the help listing (issue 19: start-up)

        try:
            return importlib.util.find_spec(self.module) is not None
        except ModuleNotFoundError:
            return False


# In the order `wmap --help` lists them.
COMMANDS: dict[str, CommandSpec] = {
    "get": CommandSpec(
        "workload_map.cli.commands.get:get",
        "List the workloads of a cluster with their phase (one type, or --all-types).",
    ),
    "describe": CommandSpec(
        "workload_map.cli.commands.describe:describe",
        "Show workloads as a tree of components with replicas, GPUs and resource totals.",
    ),
    "watch": CommandSpec(
        "workload_map.cli.commands.watch:watch",
        "Watch one workload: its tree redrawn as it and its pods change.",
    ),
    "serve": CommandSpec(
        "workload_map.cli.commands.serve:serve",
        "Serve the cluster's workloads as Prometheus metrics and a read-only JSON API over HTTP.",
    ),
    "capacity": CommandSpec(
        "workload_map.cli.commands.capacity:capacity",
        "Show each cluster's accelerators: allocatable, requested and free, per node pool.",
    ),
    "place": CommandSpec(
        "workload_map.cli.commands.place:place",
        "Say which clusters can run a workload's gangs now, ranked, and why the others cannot.",
    ),
    "suspend": CommandSpec(
        "workload_map.cli.commands.suspend:suspend",
        "Suspend a workload in the cluster through its definition's suspend actions.",
    ),
    "resume": CommandSpec(
        "workload_map.cli.commands.suspend:resume",
        "Resume a suspended workload in the cluster.",
    ),
    "definitions": CommandSpec(
        "workload_map.cli.commands.definitions:definitions",
        "List the Karta definitions in use (built-in, the cluster's and --definitions), or print one.",
    ),
    "validate": CommandSpec(
        "workload_map.cli.commands.validate:validate",
        "Check Karta definition files, optionally against a sample workload.",
    ),
    "scaffold": CommandSpec(
        "workload_map.cli.commands.scaffold:scaffold_command",
        "Draft a Karta definition from a CRD's schema, with TODOs where a person must decide.",
    ),
    "gang": CommandSpec(
        "workload_map.cli.commands.gang:gang",
        "Show the gang-scheduling plan of workloads, or export it for a scheduler.",
    ),
    "controller": CommandSpec(
        "workload_map.cli.commands.controller:controller",
        "Run the Karta operator and the pod grouper (workload-map-controller).",
    ),
    "completion": CommandSpec(
        "workload_map.cli.commands.completion:completion",
        "Print the shell completion script for bash, zsh or fish.",
    ),
}
