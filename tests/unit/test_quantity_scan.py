"""`resources.quantity._scan` is the scanner pattern's `fullmatch` and groups, without compiling it (issue 19)."""

from __future__ import annotations

import re
import typing

from hypothesis import example, given
from hypothesis import strategies as st

from workload_map.resources import quantity

_PATTERN = re.compile(quantity._SCAN)

# the characters the pattern treats apart, and a few it refuses (other digits, space, letters outside the suffix)
_ALPHABET = st.sampled_from([*"0123456789+-.eEinumkKMGTPxX Z\n\t٣²", "Ki", "Mi", "Gi", "e-", "E+"])
_TEXT = st.lists(_ALPHABET, max_size=12).map("".join)


def _by_pattern(text: str) -> tuple[str, str, str | None, str] | None:
    match = _PATTERN.fullmatch(text)
    return None if match is None else match.groups()  # type: ignore[return-value]


@given(_TEXT)
@example("")
@example("+")
@example("-.")
@example("1.5Gi")
@example("1e3")
@example("12.")
@example("1.2.3")
@example("+-1")
@example("5e+-3")
@example("Gi")
def test_the_scan_gives_the_pattern_groups(text: str) -> None:
    assert quantity._scan(text) == _by_pattern(text)


@given(st.text(max_size=10))
def test_the_scan_gives_the_pattern_groups_on_any_text(text: str) -> None:
    assert quantity._scan(text) == _by_pattern(text)


def test_common_quantities_scan_as_written() -> None:
    assert quantity._scan("500m") == ("", "500", None, "m")
    assert quantity._scan("-1.5Gi") == ("-", "1", "5", "Gi")
    assert quantity._scan("1.5.") is None


def test_the_quantity_string_type_is_made_once_and_checks_the_pattern() -> None:
    import msgspec

    from workload_map.view.types import ResourcesDocument

    made = quantity.QuantityString
    assert made is quantity.QuantityString
    meta = typing.get_args(made)[1]
    assert meta.pattern == quantity.QUANTITY_PATTERN
    decoder = msgspec.json.Decoder(dict[str, quantity.QuantityString])
    assert decoder.decode(b'{"cpu": "500m"}') == {"cpu": "500m"}
    try:
        decoder.decode(b'{"cpu": "5 00m"}')
    except msgspec.ValidationError as error:
        assert str(error) == f"Expected `str` matching regex {quantity.QUANTITY_PATTERN!r} - at `$[...]`"
    else:  # pragma: no cover - the assertion below fails
        raise AssertionError("a quantity outside the pattern was accepted")
    schema = msgspec.json.schema(ResourcesDocument)
    requests = schema["$defs"]["ResourcesDocument"]["properties"]["requests"]
    assert requests["additionalProperties"]["pattern"] == quantity.QUANTITY_PATTERN


def test_a_missing_name_of_the_quantity_module_is_an_attribute_error() -> None:
    import pytest

    name = "Nope"
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        getattr(quantity, name)
