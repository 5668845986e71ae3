"""Kubernetes resource quantities: exact parsing and canonical formatting.

Parsing follows ``k8s.io/apimachinery`` ``resource.ParseQuantity`` as the API server applies it when it decodes
JSON (surrounding whitespace is trimmed first): ``<signedNumber><suffix>`` with the decimal suffixes
``n u m "" k M G T P E``, the binary suffixes ``Ki Mi Gi Ti Pi Ei`` and decimal exponents ``e<int>``/``E<int>``.
Values are exact (no floats): every parsed value is rounded up, away from zero, to a whole number of nano units,
and binary-suffixed values are capped at 2^63-1, as Kubernetes does. See ``docs/resources.md``.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Final, Literal

import msgspec

from workload_map._regex import LazyPattern
from workload_map.errors import ArgumentTypeError, WorkloadMapError

__all__ = [
    "NANO",
    "QUANTITY_PATTERN",
    "Format",
    "QuantityError",
    "QuantityKind",
    "QuantityString",
    "canonical_quantity",
    "format_canonical",
    "format_for_table",
    "format_quantity",
    "int_value",
    "milli_value",
    "parse_nanos",
    "parse_quantity",
    "quantity_kind",
]

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]
"""The three serialisation families of a Kubernetes quantity."""

QuantityKind = Literal["cpu", "memory", "count"]
"""How a resource's amounts are printed: CPU cores, bytes, or plain counts."""

NANO: Final = 10**9
"""Nano units per unit: every quantity is a whole number of these."""

QUANTITY_PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
"""The syntax of a quantity string, as the Kubernetes OpenAPI schemas state it for `resource.Quantity`."""

# `QuantityString`: a quantity as JSON carries it (what `format_quantity` prints), the wire type of the requests in
# the JSON view and gang plan, so their schemas say it and decoding checks it. It is made on first use (this module's
# `__getattr__`): msgspec compiles `QUANTITY_PATTERN` when its `Meta` is made (~2 M instructions, ~0.5 ms), and a
# describe neither decodes a view nor writes its schema (issue 19). The view's annotation names it as
# `quantity.QuantityString`, read when msgspec first resolves that type.
if TYPE_CHECKING:
    QuantityString = Annotated[
        str, msgspec.Meta(pattern=QUANTITY_PATTERN, description="A Kubernetes quantity, such as 500m, 16Gi or 8.")
    ]
else:

    def __getattr__(name: str) -> object:
        if name != "QuantityString":
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        made = Annotated[
            str, msgspec.Meta(pattern=QUANTITY_PATTERN, description="A Kubernetes quantity, such as 500m, 16Gi or 8.")
        ]
        return globals().setdefault(name, made)  # one object, even when two threads make it at once


_MAX_INT64: Final = 2**63 - 1
# A value of 10**1000 or more is refused as too large (see docs/resources.md): sums and replica multipliers stay far
# below Python's 4300-digit int-str limit, so every amount can be printed.
_MAX_DIGITS: Final = 1000
_TOO_LARGE: Final = 10**_MAX_DIGITS

_DECIMAL_SUFFIXES: Final[dict[str, int]] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: Final[dict[str, int]] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT: Final = {exponent: suffix for suffix, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")

# The same language as apimachinery's scanner: sign, digits, optional "." and digits, then the suffix characters,
# an optional sign and digits. The suffix itself is interpreted afterwards. `_scan` is this pattern's `fullmatch`
# and groups as a left-to-right scan (the greedy first try is the only one that can match), so parsing a quantity
# compiles no pattern (issue 19); tests/unit/test_quantity_scan.py holds the two equal.
_SCAN: Final = r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)"
_SUFFIX_LETTERS: Final = frozenset("eEinumkKMGTP")
_DIGITS: Final = frozenset("0123456789")


def _scan(s: str) -> tuple[str, str, str | None, str] | None:
    """(sign, whole digits, fraction digits or None without a ".", suffix) of `s`, or None when `s` is not
    in the scanner's language."""
    end = len(s)
    index = 1 if end and s[0] in "+-" else 0
    sign = s[:index]
    start = index
    while index < end and s[index] in _DIGITS:
        index += 1
    whole = s[start:index]
    frac = None
    if index < end and s[index] == ".":
        start = index = index + 1
        while index < end and s[index] in _DIGITS:
            index += 1
        frac = s[start:index]
    suffix = s[index:]
    while index < end and s[index] in _SUFFIX_LETTERS:
        index += 1
    if index < end and s[index] in "+-":
        index += 1
    while index < end and s[index] in _DIGITS:
        index += 1
    return (sign, whole, frac, suffix) if index == end else None


_GO_INT: Final = LazyPattern(r"[+-]?[0-9]+")

_HINT: Final = "write a number with an optional suffix, e.g. 500m, 2, 1.5Gi, 1e3"
_TOO_LARGE_REASON: Final = f"too large (a quantity must be below 10^{_MAX_DIGITS})"
_SUFFIX_HINT: Final = "use n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or e<exponent>"


class QuantityError(WorkloadMapError, ValueError):
    """A value that is not a Kubernetes quantity.

    ``str(error)`` is one line: ``[<field>: ]invalid quantity "<value>": <what to do>``.
    """

    def __init__(self, value: object, reason: str, field: str | None = None) -> None:
        self.value = value
        self.reason = reason
        self.field = field
        message = f"invalid quantity {_show(value)}: {reason}"
        super().__init__(f"{field}: {message}" if field else message)

    def at(self, field: str) -> QuantityError:
        """The same error, located at ``field`` (e.g. ``container "worker" resources.limits["cpu"]``)."""
        return QuantityError(self.value, self.reason, field)


def _show(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # no JSON form, an unprintable integer, a cycle, deep nesting
        return f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:76] + '..."'[: 4 if text.startswith('"') else 3]


def parse_quantity(value: str | int | float, *, strict: bool = False) -> Fraction:
    """Parse a Kubernetes quantity exactly (``"500m"`` -> ``Fraction(1, 2)``, ``"1Gi"`` -> ``1073741824``).

    Accepts what the API server accepts, including its quirks: a number part without digits reads as zero
    (``"Gi"``, ``"."``, ``"-"``), as apimachinery does. ``strict=True`` refuses those, keeping to the documented
    grammar (the number must have a digit). YAML/JSON numbers (``int``, ``float``) are read as the API server reads
    a JSON number. Raises ``QuantityError`` (a ``ValueError``) naming the value.
    """
    return Fraction(parse_nanos(value, strict=strict), NANO)


def parse_nanos(value: str | int | float, *, strict: bool = False) -> int:
    """Like ``parse_quantity`` but the result is a whole number of nano units (``"500m"`` -> ``500_000_000``)."""
    return _parse(value, strict)[0]


def canonical_quantity(value: str | int | float) -> str:
    """The string Kubernetes stores for an input quantity (``"1.5Gi"`` -> ``"1536Mi"``, ``"0.5"`` -> ``"500m"``).

    The input's suffix family is kept, as ``Quantity.String()`` does.
    """
    nanos, fmt = _parse(value, False)
    return _canonical(nanos, fmt)


def _parse(value: object, strict: bool) -> tuple[int, Format]:
    if isinstance(value, str):
        return _parse_text(value, strict)
    if isinstance(value, bool):
        raise QuantityError(value, f"a boolean is not a quantity; {_HINT}")
    if isinstance(value, int):
        if abs(value) >= _TOO_LARGE:
            raise QuantityError(f"<an integer of about {int(value.bit_length() * 0.30103)} digits>", _TOO_LARGE_REASON)
        return value * NANO, "DecimalSI"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(value, f"not a finite number; {_HINT}")
        return _parse_text(repr(value), strict)
    raise QuantityError(value, f"expected a string or a number; {_HINT}")


@lru_cache(maxsize=4096)
def _parse_text(text: str, strict: bool) -> tuple[int, Format]:
    s = text.strip()
    if not s:
        raise QuantityError(text, f"empty; {_HINT}")
    if s == "0":
        return 0, "DecimalSI"
    scanned = _scan(s)
    if scanned is None:
        raise QuantityError(text, _HINT)
    sign, whole, frac, suffix = scanned
    frac = frac or ""
    if strict and not whole and not frac:
        raise QuantityError(text, f"the number has no digits; {_HINT}")

    fmt: Format
    if suffix in _DECIMAL_SUFFIXES:
        base, exponent, fmt = 10, _DECIMAL_SUFFIXES[suffix], "DecimalSI"
    elif suffix in _BINARY_SUFFIXES:
        base, exponent, fmt = 2, _BINARY_SUFFIXES[suffix], "BinarySI"
    elif len(suffix) > 1 and suffix[0] in "eE" and _GO_INT.fullmatch(suffix[1:]):
        parsed = int(suffix[1:])
        if not -(2**63) <= parsed <= _MAX_INT64:
            raise QuantityError(text, f'exponent out of range in suffix "{suffix}"')
        # apimachinery keeps the exponent as an int32; reproduce the wrap-around.
        base, exponent, fmt = 10, ((parsed + 2**31) % 2**32) - 2**31, "DecimalExponent"
    else:
        raise QuantityError(text, f'unknown suffix "{suffix}"; {_SUFFIX_HINT}')

    try:
        digits = int(whole + frac) if (whole or frac) else 0
    except ValueError:  # more digits than Python converts by default
        raise QuantityError(text[:40] + "...", "too many digits") from None
    if digits == 0:
        return 0, fmt

    if base == 10:
        shift = exponent - len(frac) + 9  # nanos = digits * 10**shift
        if len((whole + frac).lstrip("0")) + shift - 9 > _MAX_DIGITS:
            raise QuantityError(text if len(text) <= 40 else text[:40] + "...", _TOO_LARGE_REASON)
        if shift >= 0:
            nanos = digits * 10**shift
        elif -shift > len(whole) + len(frac):
            nanos = 1  # 0 < value < 1n: rounds up to 1n
        else:
            nanos = -(-digits // 10**-shift)
    else:
        denominator = 10 ** len(frac)
        nanos = -(-(digits << exponent) * NANO // denominator)
        nanos = min(nanos, _MAX_INT64 * NANO)  # binary amounts are capped at 2^63-1
        if nanos < NANO:
            fmt = "DecimalSI"  # a binary value below 1 is printed in decimal
    return (-nanos if sign == "-" else nanos), fmt


def _amount(value: Fraction | int) -> Fraction:
    """An amount argument as a Fraction; anything but a Fraction or an int (a bool, a float, a string: parse those
    with `parse_quantity`) is an `ArgumentTypeError`."""
    if isinstance(value, bool) or not isinstance(value, (Fraction, int)):
        raise ArgumentTypeError("a resource amount", "a Fraction or an int", value)
    return Fraction(value)


def _resource_name(name: str) -> str:
    if not isinstance(name, str):
        raise ArgumentTypeError("a resource name", "a string", name)
    return name


def _round_up_nanos(value: Fraction | int) -> int:
    """``value`` in nano units, rounded up away from zero (as Kubernetes rounds)."""
    scaled = _amount(value) * NANO
    magnitude = math.ceil(abs(scaled))
    return magnitude if scaled >= 0 else -magnitude


def format_canonical(value: Fraction | int, fmt: Format = "DecimalSI") -> str:
    """Kubernetes' canonical string for ``value`` in the family ``fmt`` (``Quantity.String()``).

    The exponent (suffix) is the largest that keeps an integer mantissa: ``Fraction(21, 5)`` -> ``"4200m"``,
    ``4`` -> ``"4"``, ``1000`` -> ``"1k"``. ``BinarySI`` uses ``Ki``..``Ei`` for whole values of at least 1024 and
    falls back to decimal otherwise (``1536 * 2**20`` -> ``"1536Mi"``, ``1000`` -> ``"1k"``). Values finer than
    a nano unit are rounded up first.
    """
    return _canonical(_round_up_nanos(value), fmt)


def _canonical(nanos: int, fmt: Format) -> str:
    if nanos == 0:
        return "0"
    sign = "-" if nanos < 0 else ""
    n = abs(nanos)
    if fmt == "BinarySI" and n >= 1024 * NANO and n % NANO == 0:
        mantissa, power = n // NANO, 0
        while mantissa % 1024 == 0 and power < len(_BINARY_BY_POWER) - 1:
            mantissa //= 1024
            power += 1
        return f"{sign}{mantissa}{_BINARY_BY_POWER[power]}"
    exponent = -9
    while n % 10 == 0:
        n //= 10
        exponent += 1
    while exponent % 3:
        n *= 10
        exponent -= 1
    if fmt == "DecimalExponent":
        return f"{sign}{n}e{exponent}" if exponent else f"{sign}{n}"
    if exponent > 18:  # past "E" Kubernetes has no suffix; stay exact with E
        n *= 10 ** (exponent - 18)
        exponent = 18
    return f"{sign}{n}{_DECIMAL_BY_EXPONENT[exponent]}"


def quantity_kind(name: str) -> QuantityKind:
    """How amounts of resource ``name`` are printed: ``cpu``; ``memory`` for byte amounts (``memory``,
    ``ephemeral-storage``, ``storage``, ``hugepages-*``); ``count`` for everything else (GPUs, devices, pods)."""
    if _resource_name(name) == "cpu":
        return "cpu"
    if name in ("memory", "ephemeral-storage", "storage") or name.startswith("hugepages-"):
        return "memory"
    return "count"


def format_quantity(value: Fraction | int, kind: QuantityKind) -> str:
    """Print a (summed) amount the Kubernetes way.

    * ``cpu``: decimal canonical form, i.e. cores or millicores: ``"500m"``, ``"2"``, ``"4200m"``.
    * ``memory``: binary (``"1Gi"``, ``"512Mi"``) when the amount is a multiple of 1024, else decimal
      (``"70M"``, ``"1500"``).
    * ``count``: a plain integer (``"8"``); a fractional count prints in decimal canonical form.
    """
    nanos = _round_up_nanos(value)
    if kind == "memory":
        return _canonical(nanos, "BinarySI" if nanos % (1024 * NANO) == 0 else "DecimalSI")
    if kind == "count" and nanos % NANO == 0:
        return str(nanos // NANO)
    return _canonical(nanos, "DecimalSI")


def format_for_table(name: str, value: Fraction | int) -> str:
    """Print an amount of resource ``name`` for a table, kubectl-describe style.

    CPU is rounded up to whole millicores (``"4200m"``, ``"20"``), byte amounts up to whole bytes (``"16Gi"``,
    ``"70M"``), counts print as integers (``"8"``).
    """
    kind = quantity_kind(name)
    if kind == "cpu":
        return format_quantity(Fraction(milli_value(value), 1000), "cpu")
    if kind == "memory":
        return format_quantity(int_value(value), "memory")
    return format_quantity(value, "count")


def milli_value(value: Fraction | int) -> int:
    """``ceil(value * 1000)``: Kubernetes' ``MilliValue`` (CPU millicores)."""
    return math.ceil(_amount(value) * 1000)


def int_value(value: Fraction | int) -> int:
    """``ceil(value)``: Kubernetes' ``Value`` (bytes, counts)."""
    return math.ceil(_amount(value))
