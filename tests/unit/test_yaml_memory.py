"""The reader's memory (issue 16, "memory amplification"): documents built from the parser's events (no node tree)
and one JSON document read by the JSON decoder, with the YAML reader's rules; peaks measured with tracemalloc
against `json.loads` of the same data (a ratio, not a time)."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from workload_map.model.yamlio import Document, DocumentError, parse_documents_each

PODS = [
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p-{index}", "labels": {"app": "train", "index": str(index)}},
        "spec": {"containers": [{"name": "main", "image": "img:1", "resources": {"requests": {"cpu": "1"}}}]},
    }
    for index in range(2000)
]


def _peak(run: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_yaml_and_json_are_read_in_a_small_multiple_of_the_decoded_data() -> None:
    yaml_text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": PODS})
    json_text = json.dumps({"apiVersion": "v1", "kind": "List", "items": PODS})
    baseline = _peak(lambda: json.loads(json_text))
    # PyYAML's loader (a node per scalar, kept for the whole document) peaks at about 8x; ours builds from events
    assert _peak(lambda: parse_documents_each(yaml_text, "pods.yaml")) < 4 * baseline
    assert _peak(lambda: parse_documents_each(json_text, "pods.json")) < 2.5 * baseline


def _values(text: str) -> list[Any]:
    return [item.value if isinstance(item, Document) else item.message for item in parse_documents_each(text, "f")]


@pytest.mark.parametrize(
    "text",
    [
        "base: &b {a: 1, b: 2}\nderived:\n  <<: *b\n  b: 3\n",
        "one: &one {a: 1}\ntwo: &two {a: 2, c: 3}\nboth:\n  <<: [*one, *two]\n",
        "list: &l [1, 2]\nagain: *l\nempty: ~\nflag: yes\nwhen: 2026-01-10\ntime: 1:30\nbig: 0x1F\n",
        "- {a: [1, {b: c}]}\n- !!str 12\n- 'quoted'\n",
    ],
)
def test_documents_are_what_the_safe_loader_builds(text: str) -> None:
    expected = yaml.load(text, Loader=yaml.SafeLoader)
    (got,) = _values(text)
    # ours reads a timestamp and YAML 1.1's base-60 numbers as the strings Kubernetes sees
    if isinstance(expected, dict):
        expected = {
            key: ("2026-01-10" if key == "when" else "1:30" if key == "time" else v) for key, v in expected.items()
        }
    assert got == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "a": 2}', "invalid JSON: duplicate key 'a'; remove one of them"),
        ('{"a": NaN}', "invalid JSON: a NaN has no JSON form; quote it if it is text"),
        ('{"a": 1e400}', "invalid JSON: a number beyond the range of a double (1e400) has no JSON form; quote it"),
        ("a: 1\na: 2\n", "invalid YAML at line 2, column 1: duplicate key 'a'; remove one of them"),
        ("outer:\n  inner: .inf\n", "inner: an infinite number (.inf) has no JSON form; quote it if it is text"),
    ],
)
def test_json_and_yaml_refuse_the_same_things(text: str, message: str) -> None:
    (problem,) = parse_documents_each(text, "f")
    assert isinstance(problem, DocumentError)
    assert message in problem.message


def test_text_that_is_not_one_json_document_is_read_as_yaml() -> None:
    assert _values('{"a": 1}\n---\n{"b": 2}\n') == [{"a": 1}, {"b": 2}]  # a stream
    assert _values("{a: 1, b: [x, y]}") == [{"a": 1, "b": ["x", "y"]}]  # YAML flow style
    deep = "[" * 600 + "]" * 600
    (problem,) = parse_documents_each(deep, "f")  # too deep for either reader: the YAML reader's message
    assert isinstance(problem, DocumentError) and "nested" in problem.message


def test_a_refused_document_does_not_hide_the_next_one() -> None:
    got = _values("a: 1\na: 2\n---\nb: .nan\n---\nc: 3\n")
    assert got[2] == {"c": 3}
    assert "duplicate key 'a'" in got[0] and "NaN" in got[1]
