"""The cyclic collector and what `wmap get` keeps until it exits (issue 19: 10,000 workloads at the cost of 100).

A LIST's items (decoded dicts, ~1,500 tracked containers per 20 KB JobSet) and the rows built from them live until
the command has printed and exited. With the collector left as it is, every collection of an older generation
walks all of them again: building the rows of 2,000 held JobSets cost 280 us per workload against 107 at 100, of
which the walks were most (benchmarks/RESULTS.md, "scale"). `KeptRows` moves what the command holds out of the
collector's sight (`gc.freeze`), once when the rows are begun and again after each page of rows, the page's
garbage collected first; the collector then only ever walks what one page made.

The freeze is process policy, so it is the console script's alone: it applies only where the start-up objects
are frozen already (`cli.resume_gc`, which only the console script reaches with the collector paused); a caller of
`run()` in its own process (tests, a notebook) has frozen nothing and keeps its collector as it was. Frozen objects
are still freed by their reference counts (a decoded JSON value holds no cycle); only a cycle that was alive when
frozen and dies later is never collected, which in a process that exits after printing costs nothing that lasts.
"""

from __future__ import annotations

import gc
import threading

PAGE = 500
"""Rows built between two freezes: a LIST page's worth (`--chunk-size`'s default), so one collection walks at most
what 500 rows made."""


def freezing() -> bool:
    """Whether this process keeps long-lived objects frozen: the console script's start-up froze its modules
    (`cli.resume_gc`), the collector is on, and no other thread runs (`get` across clusters asks them from threads:
    a freeze would take another thread's garbage in flight with it)."""
    return gc.get_freeze_count() > 0 and gc.isenabled() and threading.active_count() == 1


class KeptRows:
    """The collector policy while one batch of rows is built (see the module's docstring); nothing unless
    `freezing()`."""

    def __init__(self, page: int = PAGE) -> None:
        self._on = freezing()
        self._page = page
        self._built = 0
        if self._on:
            # what the command holds now (the LIST's items) is kept to the end: never walked again. No collection
            # first: it would walk all of them, the cost this avoids; what is garbage now is a few objects.
            gc.freeze()

    def built(self) -> None:
        """One row made: after each page, the page's garbage collected and what it keeps frozen."""
        if self._on:
            self._built += 1
            if self._built % self._page == 0:
                self._settle()

    def close(self) -> None:
        """The last rows made."""
        if self._on and self._built % self._page:
            self._settle()

    @staticmethod
    def _settle() -> None:
        # everything older is frozen, so this full collection walks only what the last page made (the
        # resolutions' reference cycles among it): the page's garbage is freed, not frozen with its rows
        gc.collect()
        gc.freeze()
