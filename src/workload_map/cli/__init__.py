"""cli layer.

The start-up pause of the cyclic garbage collector lives here, the one module `cli.main` (which pauses it) and
`cli.root` (which resumes it once the command's modules are imported) both reach without importing each other; so
does the name of the completion variable, which the run loop (`cli.app`, click-free at import) reads and the root
group (`cli.root`) hands to click.
"""

from __future__ import annotations

import gc

# Set by a shell completion script calling back (`workload_map.cli.completion`).
COMPLETE_VAR = "_WMAP_COMPLETE"

_paused = False


def pause_gc() -> None:
    """Stop the cyclic collector while the command's modules are imported (the console script only).

    Importing `describe` leaves some 36,000 long-lived objects the collector tracks (functions, classes, their
    dictionaries); with the collector on, every 700 new ones start a collection that finds next to nothing to
    free (64 collections in a `describe -f` run, 3-8 ms of it; issue 19: start-up). `resume_gc` moves what was
    created so far out of the collector's sight (`gc.freeze`) and turns it back on, so the command's own work runs
    with it as always."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_gc() -> None:
    """Undo `pause_gc` (nothing when it did not pause): freeze the objects created so far, then enable."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
