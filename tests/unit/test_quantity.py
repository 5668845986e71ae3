"""Kubernetes quantities: parsing and formatting.

Test design: the tables pin the values and strings that Kubernetes itself produces for the same inputs
(apimachinery's ``ParseQuantity`` and ``Quantity.String()``), so a user sees the numbers ``kubectl`` shows. A few
property tests check that formatting and parsing round-trip exactly.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workload_map.resources.quantity import (
    NANO,
    QuantityError,
    canonical_quantity,
    format_canonical,
    format_for_table,
    format_quantity,
    int_value,
    milli_value,
    parse_nanos,
    parse_quantity,
    quantity_kind,
)

KI, MI, GI, TI = 2**10, 2**20, 2**30, 2**40


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # plain numbers and decimal suffixes
        ("0", 0),
        ("1", 1),
        ("2", 2),
        ("500m", Fraction(1, 2)),
        ("5n", Fraction(5, NANO)),
        ("4u", Fraction(4, 10**6)),
        ("8k", 8000),
        ("50k", 50_000),
        ("7M", 7 * 10**6),
        ("6G", 6 * 10**9),
        ("5T", 5 * 10**12),
        ("2P", 2 * 10**15),
        ("1E", 10**18),
        ("12E", 12 * 10**18),
        # binary suffixes
        ("1Ki", KI),
        ("7Mi", 7 * MI),
        ("6Gi", 6 * GI),
        ("5Ti", 5 * TI),
        ("4Pi", 4 * 2**50),
        ("3Ei", 3 * 2**60),
        ("0.5Mi", MI // 2),
        ("1.5Gi", 3 * GI // 2),
        ("100.035Ki", Fraction(100035 * KI, 1000)),
        # decimal exponents
        ("1e3", 1000),
        ("1E6", 10**6),
        ("12E6", 12 * 10**6),
        ("1E-3", Fraction(1, 1000)),
        ("1.3E+6", 1_300_000),
        ("1.2e3", 1200),
        ("0.5e-2", Fraction(5, 1000)),
        # fractions, signs and the forms Kubernetes tolerates
        ("0.5", Fraction(1, 2)),
        (".5", Fraction(1, 2)),
        ("1.", 1),
        ("1.G", 10**9),
        ("+1", 1),
        ("-1", -1),
        ("-500m", Fraction(-1, 2)),
        ("-1.5Gi", -3 * GI // 2),
        ("100.035k", 100_035),
        ("9.01", Fraction(901, 100)),
        # rounding up to whole nano units, and the binary cap at 2^63-1
        ("3.001n", Fraction(4, NANO)),
        ("0.0000000001", Fraction(1, NANO)),
        ("0.00000012345", Fraction(124, NANO)),
        ("-0.9n", Fraction(-1, NANO)),
        ("1e-20", Fraction(1, NANO)),
        ("0.000000000001Ki", Fraction(2, NANO)),
        ("9Ei", 2**63 - 1),
        ("9223372036854775807Ki", 2**63 - 1),
        # surrounding whitespace is trimmed, as the API server does when it decodes JSON
        (" 5Gi ", 5 * GI),
    ],
)
def test_quantity_parses_to_the_exact_value_kubernetes_uses(text: str, expected: Fraction | int) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(2, 2), (0, 0), (0.5, Fraction(1, 2)), (0.1, Fraction(1, 10)), (1e-05, Fraction(1, 100_000)), (1e16, 10**16)],
)
def test_yaml_numbers_parse_like_the_json_numbers_the_api_server_reads(
    value: int | float, expected: Fraction | int
) -> None:
    assert parse_quantity(value) == expected


@pytest.mark.parametrize("text", ["Gi", ".", "-", "+.", "m"])
def test_a_number_without_digits_reads_as_zero_like_apimachinery_but_strict_mode_refuses_it(text: str) -> None:
    assert parse_quantity(text) == 0
    with pytest.raises(QuantityError, match="no digits"):
        parse_quantity(text, strict=True)


@pytest.mark.parametrize(
    "value",
    [
        "1.2.3",
        "5 Gi",
        "1iK",
        "",
        "   ",
        "1i",
        ".5i",
        "-3.01i",
        "-3.01e-",
        "1+1.0M",
        "0.1mi",
        "0.1am",
        "aoeu",
        "1K",
        "1e",
        "e",
        "1Ee3",
        "1Ki5",
        "1e3.5",
        "1 000",
        "2 cores",
        "1\n2",
        "١",
        True,
        None,
        [1],
        float("nan"),
        float("inf"),
    ],
)
def test_invalid_quantity_is_refused_with_a_message_naming_the_value(value: object) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(value)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("invalid quantity ")
    assert caught.value.value == value or value != value  # NaN is not equal to itself
    assert isinstance(caught.value, ValueError)


def test_quantity_error_names_the_value_and_says_what_to_write() -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity("5 Gi")
    assert str(caught.value) == (
        'invalid quantity "5 Gi": write a number with an optional suffix, e.g. 500m, 2, 1.5Gi, 1e3'
    )
    with pytest.raises(QuantityError, match=r'invalid quantity "1iK": unknown suffix "iK"; use n, u, m'):
        parse_quantity("1iK")


def test_quantity_error_can_be_located_at_a_field() -> None:
    error = QuantityError("x", "reason").at('container "worker" resources.limits["nvidia.com/gpu"]')
    assert str(error) == 'container "worker" resources.limits["nvidia.com/gpu"]: invalid quantity "x": reason'


def test_parse_nanos_gives_whole_nano_units() -> None:
    assert parse_nanos("500m") == 500_000_000
    assert parse_nanos("1Ki") == 1024 * NANO


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1Ki", "1Ki"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("1.5Ki", "1536"),
        ("0.5Ki", "512"),
        ("1.1Ki", "1126400m"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000000001Ki", "2n"),
        ("1000M", "1G"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("1.5", "1500m"),
        ("0.5", "500m"),
        ("1000m", "1"),
        ("4200m", "4200m"),
        ("1.08", "1080m"),
        ("0.1m", "100u"),
        ("0.001T", "1G"),
        ("1e3", "1e3"),
        ("1E6", "1e6"),
        ("12E6", "12e6"),
        ("0.001e0", "1e-3"),
        ("1000e-12", "1e-9"),
        ("80e-3", "80e-3"),
        ("00", "0"),
        ("0Gi", "0"),
        ("-1.5Gi", "-1536Mi"),
        ("-9.01", "-9010m"),
    ],
)
def test_canonical_string_matches_what_kubernetes_stores(text: str, canonical: str) -> None:
    assert canonical_quantity(text) == canonical


@pytest.mark.parametrize(
    ("value", "fmt", "expected"),
    [
        (GI, "BinarySI", "1Gi"),
        (300 * MI, "BinarySI", "300Mi"),
        (1001 * GI, "BinarySI", "1001Gi"),
        (5, "BinarySI", "5"),
        (Fraction(1, 2), "BinarySI", "500m"),
        (1025, "BinarySI", "1025"),
        (10**9, "DecimalSI", "1G"),
        (1234567 * 10**6, "DecimalSI", "1234567M"),
        (Fraction(1080, 1000), "DecimalSI", "1080m"),
        (Fraction(1080, NANO), "DecimalSI", "1080n"),
        (3000, "DecimalSI", "3k"),
        (0, "DecimalSI", "0"),
        (10**9, "DecimalExponent", "1e9"),
        (300 * 10**6, "DecimalExponent", "300e6"),
        (Fraction(80, 1000), "DecimalExponent", "80e-3"),
        (10**21, "DecimalSI", "1000E"),
        (Fraction(1, 3 * NANO), "DecimalSI", "1n"),
    ],
)
def test_format_canonical_follows_kubernetes_canonical_form(value: Fraction | int, fmt: str, expected: str) -> None:
    assert format_canonical(value, fmt) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        (Fraction(1, 2), "cpu", "500m"),
        (2, "cpu", "2"),
        (Fraction(42, 10), "cpu", "4200m"),
        (4, "cpu", "4"),
        (20, "cpu", "20"),
        (0, "cpu", "0"),
        (GI, "memory", "1Gi"),
        (512 * MI, "memory", "512Mi"),
        (16 * GI, "memory", "16Gi"),
        (80 * GI, "memory", "80Gi"),
        (3 * GI // 2, "memory", "1536Mi"),
        (70 * 10**6, "memory", "70M"),
        (1500, "memory", "1500"),
        (1000, "memory", "1k"),
        (0, "memory", "0"),
        (8, "count", "8"),
        (0, "count", "0"),
        (Fraction(1, 2), "count", "500m"),
    ],
)
def test_format_quantity_prints_sums_the_kubernetes_way(value: Fraction | int, kind: str, expected: str) -> None:
    assert format_quantity(value, kind) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("cpu", Fraction(42, 10), "4200m"),
        ("cpu", 20, "20"),
        ("cpu", Fraction(1, 10**6), "1m"),  # rounded up to whole millicores
        ("memory", 16 * GI, "16Gi"),
        ("memory", 70 * 10**6, "70M"),
        ("memory", Fraction(1, 2), "1"),  # rounded up to whole bytes
        ("ephemeral-storage", 100 * GI, "100Gi"),
        ("hugepages-2Mi", 512 * MI, "512Mi"),
        ("nvidia.com/gpu", 8, "8"),
        ("nvidia.com/mig-1g.5gb", 3, "3"),
    ],
)
def test_format_for_table_is_kubectl_describe_style(name: str, value: Fraction | int, expected: str) -> None:
    assert format_for_table(name, value) == expected


def test_quantity_kind_groups_byte_resources() -> None:
    assert quantity_kind("cpu") == "cpu"
    assert [quantity_kind(n) for n in ("memory", "ephemeral-storage", "storage", "hugepages-1Gi")] == ["memory"] * 4
    assert quantity_kind("nvidia.com/gpu") == "count"
    assert quantity_kind("pods") == "count"


def test_milli_and_int_values_round_up_like_kubernetes() -> None:
    assert milli_value(Fraction(21, 10)) == 2100
    assert milli_value(Fraction(1, 10**6)) == 1
    assert int_value(Fraction(3, 2)) == 2
    assert int_value(GI) == GI


_nanos = st.integers(min_value=-(10**24), max_value=10**24)


@given(_nanos, st.sampled_from(["DecimalSI", "BinarySI", "DecimalExponent"]))
def test_canonical_strings_parse_back_to_the_same_value(nanos: int, fmt: str) -> None:
    value = Fraction(nanos, NANO)
    assert parse_quantity(format_canonical(value, fmt)) == value  # type: ignore[arg-type]


@given(_nanos, st.sampled_from(["cpu", "memory", "count"]))
def test_formatted_amounts_parse_back_to_the_same_value(nanos: int, kind: str) -> None:
    value = Fraction(nanos, NANO)
    assert parse_quantity(format_quantity(value, kind)) == value  # type: ignore[arg-type]
