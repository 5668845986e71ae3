"""`Workload(from_json=True)`: a decoder's fresh output is read in place without the plain-JSON check (issue 19).

What must hold: with the flag, every built-in definition's fixture, decoded from its JSON text, resolves exactly as
it does without the flag (and as its copy does); the check is really skipped (no encode); without the flag an object
JSON cannot carry is still refused with the error naming the value; with it, a non-dict is still refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from workload_map.catalog import builtin_registry
from workload_map.errors import ArgumentTypeError
from workload_map.resolve import InvalidObjectError, Workload, _json, resolve
from workload_map.resolve import workload as workload_module

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "catalog"
CASES = sorted(path.parent.name for path in FIXTURES.glob("*/workload.yaml"))


def _json_text(name: str) -> bytes:
    with (FIXTURES / name / "workload.yaml").open(encoding="utf-8") as handle:
        loaded = yaml.load(handle, Loader=yaml.CSafeLoader)
    return json.dumps(_json.json_copy(loaded)).encode()


def _everything(workload: Workload) -> dict[str, Any]:
    resolution = workload.resolve()
    out = resolution.to_dict()
    for component in resolution.components.values():
        for instance in component.instances.values():
            out.setdefault("_templates", []).append(instance.pod_template_spec)
    out["_status"] = workload.root.status
    return out


@pytest.mark.parametrize("name", CASES)
def test_a_decoded_object_resolves_the_same_with_and_without_the_flag(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _json_text(name)
    for decode in (json.loads, msgspec.json.decode):
        obj = decode(text)
        karta = builtin_registry().for_object(obj)
        assert karta is not None
        checked = _everything(Workload(karta.karta, decode(text)))
        before = copy.deepcopy(obj)
        with monkeypatch.context() as patched:
            patched.setattr(workload_module, "shareable", _never)  # the check must not run
            trusted = Workload(karta.karta, obj, from_json=True)
            assert trusted._session._snapshot._copy is None  # read in place
            got = _everything(trusted)
            assert resolve(karta.karta, obj, from_json=True).to_dict() == {
                key: value for key, value in checked.items() if not key.startswith("_")
            }
        assert got == checked
        assert obj == before  # never changed


def _never(_obj: Any) -> bool:
    raise AssertionError("the plain-JSON check ran for an object vouched for as a decoder's output")


def test_without_the_flag_a_value_json_cannot_carry_is_still_refused() -> None:
    text = _json_text(CASES[0])
    obj = json.loads(text)
    karta = builtin_registry().for_object(obj)
    assert karta is not None
    obj["spec"] = {**(obj.get("spec") or {}), "weird": object()}
    with pytest.raises(InvalidObjectError, match=r"spec\.weird holds a object value"):
        Workload(karta.karta, obj).resolve()  # checked at the first read of the whole object


def test_with_the_flag_only_a_dict_is_read_in_place() -> None:
    text = _json_text(CASES[0])
    obj = json.loads(text)
    karta = builtin_registry().for_object(obj)
    assert karta is not None
    from collections import OrderedDict

    ordered = OrderedDict(obj)  # not a dict as a decoder makes it: checked and copied
    workload = Workload(karta.karta, ordered, from_json=True)
    assert workload._session._snapshot._copy is not None
    assert _everything(workload) == _everything(Workload(karta.karta, obj))
    with pytest.raises(InvalidObjectError, match="must be a mapping"):
        Workload(karta.karta, [obj], from_json=True)  # type: ignore[arg-type]


def test_the_flag_must_be_a_bool() -> None:
    obj = json.loads(_json_text(CASES[0]))
    karta = builtin_registry().for_object(obj)
    assert karta is not None
    with pytest.raises(ArgumentTypeError, match="from_json"):
        Workload(karta.karta, obj, from_json="yes")  # type: ignore[arg-type]
