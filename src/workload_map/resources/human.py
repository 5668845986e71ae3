"""Amounts a person reads at a glance: CPU in cores, memory in binary units with at most three significant digits,
counts whole (docs/resources.md). Every text output uses these; exact quantities stay in JSON and YAML
(`format_for_table`, `format_quantity`)."""

from __future__ import annotations

from fractions import Fraction

from workload_map.errors import ArgumentTypeError
from workload_map.resources.quantity import format_quantity, quantity_kind

__all__ = ["cpu_text", "human_amount", "memory_text"]


def cpu_text(amount: Fraction | int) -> str:
    """CPU in cores, for a person: `4`, `0.5`, `2.25`, `12.5`, `3014` (at most three significant digits below
    1,000 cores, whole cores above; exact quantities stay in JSON and YAML)."""
    value = _amount(amount)
    return _significant(value) if value else "0"


_BINARY_UNITS = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def memory_text(amount: Fraction | int) -> str:
    """Memory in binary units with at most three significant digits, for a person: `16Gi`, `7.45Gi` (8G), `512Mi`,
    `11.6Ti` (64 x 200G), `100` (bytes); `0` for nothing. Exact quantities stay in JSON and YAML."""
    value = _amount(amount)
    if value <= 0:
        return "0" if value == 0 else "-" + memory_text(-value)
    for unit, size in _BINARY_UNITS:
        if value >= size:
            text = _significant(value / size)
            if text == "1024" and unit != "Ei":  # 1023.9Gi rounds up to the next unit
                bigger = _BINARY_UNITS[_BINARY_UNITS.index((unit, size)) - 1][0]
                return f"1{bigger}"
            return text + unit
    return _significant(value)


def human_amount(name: str, amount: Fraction | int) -> str:
    """An amount of resource `name` (in units: cores, bytes, devices) for a person: `cpu_text` for CPU,
    `memory_text` for byte amounts (memory, storage, hugepages), a count otherwise (`8`)."""
    if not isinstance(name, str):
        raise ArgumentTypeError("name", "a resource name (a str)", name)
    kind = quantity_kind(name)
    if kind == "cpu":
        return cpu_text(amount)
    if kind == "memory":
        return memory_text(amount)
    return format_quantity(amount, "count")


def _amount(amount: object) -> Fraction:
    """The amount as a Fraction; anything but a number of units (an int or a Fraction, not a bool) is the
    caller's mistake, named as such."""
    if isinstance(amount, bool) or not isinstance(amount, int | Fraction):
        raise ArgumentTypeError("the amount", "an int or a Fraction of units (cores, bytes, devices)", amount)
    return Fraction(amount)


def _significant(value: Fraction) -> str:
    """`value` with at most three significant digits (whole numbers from 100 up); `<0.001` for less (a request
    that is not nothing is never shown as 0)."""
    if value >= 100:
        return str(round(value))
    if value < Fraction(1, 1000):
        return "<0.001"
    return f"{float(value):.3g}"
