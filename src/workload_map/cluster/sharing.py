"""One copy of each short string that many cached objects repeat (an image, a namespace, `IfNotPresent`, `True`).

A JSON decoder makes a new `str` for every value it reads, so 20,000 Deployments hold 20,000 copies of their
namespace, of `apps/v1`, of each enum value of their pod template. `share_strings` walks a decoded object and
replaces each short string value by the copy in a table, so the store keeps one. The table is bounded: when it is
full it starts again empty (values unique to one object, such as names and UIDs, would otherwise fill it forever);
a string common to many objects is back in it at its next sighting. Measured on the test API server's
Deployments (benchmarks/bench_live_scale.py): about 1 KB less per cached workload, at ~13 us per object.
"""

from __future__ import annotations

from typing import Any

MAX_LENGTH = 64
"""Longer strings are kept as they are: they are rarely repeated, and comparing them costs more."""

TABLE_SIZE = 8192
"""Distinct strings a table holds before it starts again empty."""


def share_strings(value: Any, table: dict[str, str]) -> None:
    """Replace, in place, every string value of `value` (dicts and lists, nested) no longer than `MAX_LENGTH` by
    the equal string already in `table` (adding it when new). Keys are left alone (the decoder shares them)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            for key, child in item.items():
                kind = type(child)
                if kind is str:
                    if len(child) <= MAX_LENGTH:
                        item[key] = _shared(child, table)
                elif kind is dict or kind is list:
                    stack.append(child)
        elif type(item) is list:
            for index, child in enumerate(item):
                kind = type(child)
                if kind is str:
                    if len(child) <= MAX_LENGTH:
                        item[index] = _shared(child, table)
                elif kind is dict or kind is list:
                    stack.append(child)


def _shared(text: str, table: dict[str, str]) -> str:
    found = table.get(text)
    if found is not None:
        return found
    if len(table) >= TABLE_SIZE:
        table.clear()
    table[text] = text
    return text
