"""The root `wmap` click group: its global options, and the subcommands of `cli.command_table`, each imported on
first use.

The run loop is `cli.app.run`; shell completion (`cli.completion`) and `wmap completion` complete this group.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from workload_map._version import __version__
from workload_map.cli import COMPLETE_VAR, context, resume_gc
from workload_map.cli.command_table import COMMANDS
from workload_map.cli.errors import EXIT_CODES_HELP, EXIT_OK, UsageError
from workload_map.cli.jqsettings import jq_options

__all__ = ["COMPLETE_VAR", "CONTEXT_SETTINGS", "LazyGroup", "cli"]

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class LazyGroup(click.Group):
    """A group whose commands come from `workload_map.cli.command_table.COMMANDS` and are imported on first use, so
    `wmap describe` never pays for `definitions`, and `wmap --help` for none of them."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = [name for name, spec in COMMANDS.items() if not spec.hidden and spec.available]
        return names + sorted(name for name in self.commands if name not in COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None or not spec.available:
            return super().get_command(ctx, cmd_name)
        command = getattr(importlib.import_module(spec.module), spec.attribute)
        resume_gc()  # the command's modules are in: its own work runs with the collector on
        if not isinstance(command, click.Command):  # pragma: no cover - a broken command table
            raise TypeError(f"{spec.target} is not a click command")
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        command = self.get_command(ctx, name)
        if command is None and not ctx.resilient_parsing and not name.startswith("-"):
            import difflib  # only to suggest a command for a mistyped one

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1, cutoff=0.6)
            hint = f'did you mean "{close[0]}"? ' if close else ""
            raise UsageError(
                f'unknown command "{name}" for "{ctx.command_path}"',
                hint=f'{hint}run "{ctx.command_path} --help" for the commands',
            )
        if command is None:
            return super().resolve_command(ctx, args)
        return name, command, args[1:]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name].short_help) for name in self.list_commands(ctx) if name in COMMANDS]
        rows += [
            (name, command.get_short_help_str(limit=formatter.width))
            for name, command in sorted(self.commands.items())
            if name not in COMMANDS and not command.hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(__version__)
    ctx.exit(EXIT_OK)


_ROOT_HELP = """\
See any Kubernetes AI workload through its Karta definition: its components, replicas, GPUs and resource totals.

Works for JobSet, PyTorchJob, RayCluster, LeaderWorkerSet, KServe, Dynamo and any type a Karta definition covers.
Also runs as a kubectl plugin: `kubectl wmap ...`.

\b
Examples:
  wmap describe -f examples/pytorchjob.yaml
  helm template ./chart | wmap describe -f - -o json
  wmap definitions --group kubeflow.org
  wmap validate my-karta.yaml --against my-workload.yaml
"""

_ROOT_EPILOG = f"""\
\b
{EXIT_CODES_HELP}

\b
Environment:
  WMAP_OUTPUT        default output format (-o) of every command
  WMAP_CONFIG        the config file (else ~/.config/wmap/config.yaml)
  WMAP_JQ_MODE       as --jq-mode
  WMAP_JQ_DEADLINE   as --jq-deadline
  WMAP_JQ_MEMORY_MB  the jq worker's memory cap in MiB (default 1024; 0: none)
  NO_COLOR           no colour, as --no-color
"""


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    # click 8.5 writes "[COMMAND] [ARGS]..." for a group that runs without a command, older clicks "COMMAND [ARGS]...";
    # `wmap` alone only prints this help, so the usage line says a command is needed, with every click version.
    subcommand_metavar="COMMAND [ARGS]...",
    context_settings=CONTEXT_SETTINGS,
    help=_ROOT_HELP,
    epilog=_ROOT_EPILOG,
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the version and exit.",
)
@click.option(
    "--config",
    "config_path",
    metavar="PATH",
    help="Config file with default output formats and the jq mode "
    "[default: $WMAP_CONFIG, else ~/.config/wmap/config.yaml].",
)
@click.option("--debug", is_flag=True, help="Show the traceback of an error.")
@click.option("--no-color", is_flag=True, help="No colour (also $NO_COLOR; colour is only used on a terminal).")
@jq_options
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, debug: bool, no_color: bool) -> None:
    state = context.state()
    state.config_path = config_path
    state.debug = state.debug or debug
    state.no_color = no_color
    if ctx.invoked_subcommand is None and not ctx.resilient_parsing:
        click.echo(ctx.get_help())
        ctx.exit(EXIT_OK)
