"""The shell completion callback of the live commands' TYPE/NAME arguments (`shell_complete=complete_target`).

Declared in every command that takes TYPE/NAME, the offline ones included (`describe`, `gang`), so this module
stays light: it imports the cluster half (`cli.complete_live`) only inside the callback, which only a shell's
completion call-back runs (an ignore line of the "offline modules" contract in `pyproject.toml` names that import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import click
    from click.shell_completion import CompletionItem


def complete_target(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """TYPE, `TYPE/NAME` or the NAME after TYPE, from the cluster; nothing when the cluster cannot tell in time."""
    from workload_map.cli.complete_live import complete  # only while completing: it loads the cluster layer

    given = ctx.params.get(param.name or "") or ()
    return complete([str(word) for word in given], incomplete, ctx.params)
