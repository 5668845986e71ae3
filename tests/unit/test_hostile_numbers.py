"""Numbers no JSON document carries (issue 16): integers over 4,300 digits (Python's int-str limit) in YAML/JSON, a
quantity like `1e4300`, a jq literal, replicas of 10**5000. Each is a library error naming the field or the document,
never a bare ValueError; one bad document of a stream does not hide the others where the API reports per document.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.samples import MINIMAL_KARTA
from workload_map import WorkloadMapError, loads_definitions, scan_definitions, validate
from workload_map.jq import check_safety, evaluate
from workload_map.model import DefinitionError, DocumentError, karta_from_dict, parse_documents, parse_documents_each
from workload_map.resolve import ExtractionError, InvalidObjectError, Workload
from workload_map.resolve.decode import DecodeError, decode_replicas
from workload_map.resources import QuantityError, parse_quantity, pod_requests

BIG = "1" * 5000  # more digits than Python converts to an int by default


def _yaml(value: dict[str, Any]) -> str:
    return json.dumps(value)  # JSON is YAML


# --- YAML and JSON ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [f"spec:\n  replicas: {BIG}\n", '{"spec": {"replicas": ' + BIG + "}}", f"- {BIG}\n", f"{BIG}\n"],
    ids=["yaml", "json", "item", "top"],
)
def test_an_integer_over_4300_digits_is_a_document_error_with_its_line(text: str) -> None:
    with pytest.raises(DocumentError) as info:
        parse_documents(text, "big.yaml")
    message = str(info.value)
    assert message.startswith("big.yaml: invalid YAML at line ")
    assert "an integer of 5000 digits is refused (at most 4300)" in message
    assert isinstance(info.value, WorkloadMapError)


def test_the_message_names_the_key_of_the_number() -> None:
    with pytest.raises(DocumentError, match=r"line 3, column 13: replicas: an integer of 5000 digits"):
        parse_documents(f"spec:\n  x: 1\n  replicas: {BIG}\n")


def test_one_bad_document_does_not_hide_the_others_of_a_stream() -> None:
    items = parse_documents_each(f"a: 1\n---\nb: {BIG}\n---\nc: 3\n", "s.yaml")
    assert [item.value for item in items if not isinstance(item, DocumentError)] == [{"a": 1}, {"c": 3}]
    (error,) = [item for item in items if isinstance(item, DocumentError)]
    assert error.index == 1 and str(error).startswith("s.yaml (document 2): invalid YAML at line 3")


def test_a_syntax_error_ends_only_its_document() -> None:
    items = parse_documents_each("a: 1\n---\nb: [1, 2\n---\nc: 3\n---\nd: {x\n", "s.yaml")
    assert [item.value for item in items if not isinstance(item, DocumentError)] == [{"a": 1}, {"c": 3}]
    assert [item.index for item in items if isinstance(item, DocumentError)] == [1, 3]


def test_a_control_character_is_one_line_and_crlf_streams_resume_at_the_right_document() -> None:
    items = parse_documents_each('a: "x\x0cy"\r\n---\r\nb: [1\r\n---\r\nc: 3\r\n', "s.yaml")
    errors = [str(item) for item in items if isinstance(item, DocumentError)]
    assert errors == [
        "s.yaml (document 1): invalid YAML at character 6: control characters are not allowed (#x000c)",
        "s.yaml (document 2): invalid YAML at line 4, column 1: did not find expected ',' or ']'",
    ]
    assert [item.value for item in items if not isinstance(item, DocumentError)] == [{"c": 3}]


def test_strict_loading_still_fails_on_the_first_bad_document() -> None:
    with pytest.raises(DocumentError, match="an integer of 5000 digits"):
        parse_documents(f"a: 1\n---\nb: {BIG}\n")


def _definition(name: str) -> dict[str, Any]:
    value = json.loads(json.dumps(MINIMAL_KARTA))
    value["metadata"]["name"] = name
    return value


def test_scan_definitions_reports_the_bad_document_and_loads_the_rest() -> None:
    bad = _yaml(_definition("bad")).replace('"name": "bad"}', f'"name": "bad", "generation": {BIG}}}')
    stream = "\n---\n".join([_yaml(_definition("one")), bad, _yaml(_definition("three"))])
    result = scan_definitions(stream)
    assert [karta.name for karta in result.definitions] == ["one", "three"]
    (problem,) = result.problems
    assert problem.source == "<text> (document 2)" and "an integer of 5000 digits" in problem.message
    assert not problem.unreadable
    with pytest.raises(DefinitionError, match="an integer of 5000 digits"):
        loads_definitions(stream)


# --- quantities ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["1e4300", "1e1000", "1" + "0" * 1000, 10**5000, 10**1000, "0.1E1001"],
    ids=["1e4300", "1e1000", "1000-zeros", "int-10^5000", "int-10^1000", "0.1E1001"],
)
def test_a_quantity_of_10_to_the_1000_or_more_is_a_quantity_error(value: Any) -> None:
    with pytest.raises(QuantityError, match="too large"):
        parse_quantity(value)


def test_a_quantity_just_below_the_bound_is_exact() -> None:
    assert parse_quantity("1e999") == 10**999
    assert parse_quantity(10**999 - 1) == 10**999 - 1


def test_a_container_asking_for_1e4300_is_a_quantity_error_naming_the_field() -> None:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1e4300"}}}]}
    with pytest.raises(QuantityError, match=r'container "c" resources.requests\["nvidia.com/gpu"\]: .*too large'):
        pod_requests(spec)


def test_a_too_long_quantity_is_a_quantity_error() -> None:
    with pytest.raises(QuantityError, match="too many digits"):
        parse_quantity(BIG)


# --- jq literals -----------------------------------------------------------------------------------------------------


def test_a_jq_literal_over_4300_digits_is_a_double_as_in_libjq() -> None:
    assert check_safety(BIG) == []
    assert evaluate(BIG, {}) == [1.7976931348623157e308]
    assert evaluate(f".a + {BIG}", {"a": 1}) == [1.7976931348623157e308]


def test_a_definition_with_a_huge_literal_validates() -> None:
    value = _definition("huge")
    value["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"] = {"replicasPath": f".spec.x // {BIG}"}
    assert [f for f in validate(karta_from_dict(value)) if f.rule == "jq-parse"] == []


# --- replica counts --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [10**5000, -(10**5000), BIG, "-" + BIG, 10**40], ids=["int", "negative", "string", "minus", "10^40"]
)
def test_decode_replicas_refuses_a_huge_count_by_name(value: Any) -> None:
    with pytest.raises(DecodeError, match="outside the int32 range of a replica count"):
        decode_replicas(0, value)


def _root(**fields: Any) -> dict[str, Any]:
    value = _definition("thing")
    value["spec"]["structureDefinition"]["rootComponent"].update(fields)
    return value


THING = {"apiVersion": "minimal.org/v1", "kind": "Minimal", "metadata": {"name": "t"}}


def test_replicas_of_10_to_the_5000_in_an_object_are_refused_naming_the_field() -> None:
    karta = karta_from_dict(_root(scaleDefinition={"replicasPath": ".spec.replicas"}))
    workload = Workload(karta, {**THING, "spec": {"replicas": 10**5000}})  # checked when read
    with pytest.raises(InvalidObjectError, match=r"spec.replicas holds an integer of more than 4300 digits"):
        _ = workload.root.scales


@pytest.mark.parametrize("sign", [1, -1])
def test_json_copy_takes_4300_digits_and_refuses_4301(sign: int) -> None:
    # the bound is 10**4300 exactly, whatever the bit-length shortcut in front of it decides
    from workload_map.resolve._json import NotJSONError, json_copy

    largest = sign * (10**4300 - 1)
    assert json_copy({"n": largest}) == {"n": largest}
    for refused in (sign * 10**4300, sign * 2**14290):
        with pytest.raises(NotJSONError, match="more than 4300 digits"):
            json_copy({"n": refused})


def test_a_replica_string_of_5000_digits_is_an_extraction_error_naming_the_field() -> None:
    karta = karta_from_dict(_root(scaleDefinition={"replicasPath": ".spec.replicas"}))
    workload = Workload(karta, {**THING, "spec": {"replicas": BIG}})
    with pytest.raises(ExtractionError, match="outside the int32 range") as info:
        _ = workload.root.scales
    assert info.value.field == "scaleDefinition.replicasPath"
    assert [error.field for error in workload.resolve().errors] == ["scaleDefinition.replicasPath"]


def test_a_negative_4300_digit_integer_next_to_a_null_is_copied_and_read_by_jq() -> None:
    """Found by the fuzz suite: msgspec will not read back a negative integer of 4300 digits (Python will), and the
    NaN check's msgpack encoder overflowed on it."""
    from workload_map.resolve._json import json_copy

    value = -int("1" * 4300)
    copied = json_copy({"a": None, "b": value})
    assert copied == {"a": None, "b": value}
    assert evaluate("[.[]] | length", copied) == [2]
    with pytest.raises(InvalidObjectError, match="more than 4300 digits"):
        Workload(karta_from_dict(_root()), {**THING, "spec": {"x": None, "y": -(10**4300)}}).resolve()
