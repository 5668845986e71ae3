"""Lone UTF-16 surrogates in an object (`json.loads` and PyYAML keep an unpaired `"\\ud800"` escape as one): they are
read as U+FFFD, as the API server's Go decoder and gojq read them, instead of failing as "not JSON" deep in a
resolution (it was an uncaught InputNotJSONError from `Workload.status`, and an "internal error" from the CLI)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import workload_map as wm
from tests.cli.helpers import invoke, write
from workload_map._unicode import has_lone_surrogate, replace_lone_surrogates
from workload_map.jq import convert
from workload_map.model import parse_documents
from workload_map.resolve._json import json_copy

REPO = Path(__file__).resolve().parents[2]
REPLACEMENT = "\ufffd"


def _jobset(message: str) -> dict[str, Any]:
    (document,) = parse_documents((REPO / "examples" / "jobset.yaml").read_text(encoding="utf-8"))
    obj: dict[str, Any] = copy.deepcopy(document.value)
    obj["status"] = {"conditions": [{"type": "Failed", "status": "True", "reason": "X", "message": message}]}
    return obj


def _karta(obj: dict[str, Any]) -> wm.Karta:
    found = wm.builtin_registry().for_object(obj)
    assert found is not None
    karta: wm.Karta = found.karta
    return karta


def test_replace_gives_one_replacement_character_per_surrogate() -> None:
    assert replace_lone_surrogates("a\ud800b\udfffc") == f"a{REPLACEMENT}b{REPLACEMENT}c"
    assert replace_lone_surrogates("plain") == "plain"
    text = "caf\u00e9 \U0001f600"  # non-ASCII, no surrogate: the same object back
    assert replace_lone_surrogates(text) is text
    assert has_lone_surrogate("x\udc80") and not has_lone_surrogate(text) and not has_lone_surrogate("ascii")


def test_json_decoders_make_what_is_replaced() -> None:
    """The premise: Python's JSON decoder keeps the unpaired escape (and pairs a valid pair into one character)."""
    assert json.loads('"\\ud800"') == "\ud800"
    assert json.loads('"\\ud83d\\ude00"') == "\U0001f600"


def test_normalize_and_json_copy_replace_in_values_and_keys() -> None:
    value = {"k\ud800": ["v\udc00", {"n": "\ud801"}], "ok": 1}
    want = {f"k{REPLACEMENT}": [f"v{REPLACEMENT}", {"n": REPLACEMENT}], "ok": 1}
    assert convert.normalize(value) == want
    assert json.loads(convert.encode(value)) == want
    assert json_copy(value) == want
    assert value["k\ud800"][0] == "v\udc00"  # the input is left as it was


@pytest.mark.parametrize("from_json", [False, True])
def test_status_and_resolution_read_the_replacement_character(from_json: bool) -> None:
    obj = json.loads(json.dumps(_jobset("\ud800 bad")))
    karta = _karta(obj)
    status = wm.Workload(karta, obj, from_json=from_json).status
    assert status.phase == "Failed"
    assert f"{REPLACEMENT} bad" in (status.reason or "")
    resolution = wm.Workload(karta, obj, from_json=from_json).resolve()
    assert resolution.ok, resolution.errors
    clean = wm.Workload(karta, _jobset(f"{REPLACEMENT} bad")).resolve()
    assert resolution.to_dict() == clean.to_dict()


def test_describe_a_json_file_with_an_unpaired_escape(tmp_path: Path) -> None:
    text = json.dumps(_jobset("\ud800 bad"))
    assert "\\ud800" in text
    path = write(tmp_path / "jobset.json", text)
    shown = invoke(["describe", "-f", path, "-o", "json"], home=tmp_path)
    assert (shown.code, shown.stderr) == (0, "")
    assert f"{REPLACEMENT} bad" in json.loads(shown.stdout)["reason"]
    tree = invoke(["describe", "-f", path], home=tmp_path)
    assert tree.code == 0 and "internal error" not in tree.stderr
    assert "Failed" in tree.stdout
