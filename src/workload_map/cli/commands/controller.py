"""`wmap controller [FLAGS]`: start the Karta operator and pod grouper (`workload-map-controller`).

The flags are the controller's own (`wmap controller --help` prints them); this command only hands them over, so
the CLI imports the controller, never the reverse, and only when this command runs.
"""

from __future__ import annotations

import click

_HELP = """\
Run the Karta operator and the pod grouper in this process (the same as workload-map-controller).

Every flag after `controller` is the controller's: see `wmap controller --help` and docs/controller.md.
"""


@click.command(
    help=_HELP,
    add_help_option=False,  # --help is the controller's own
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "allow_interspersed_args": False},
)
@click.argument("flags", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def controller(ctx: click.Context, flags: tuple[str, ...]) -> None:
    from workload_map.controller import main

    ctx.exit(main(list(flags)))
