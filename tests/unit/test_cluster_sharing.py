"""`cluster.sharing.share_strings`: one copy of each short string across the objects an informer keeps."""

from __future__ import annotations

import copy
from typing import Any

from workload_map.cluster import sharing
from workload_map.cluster.sharing import MAX_LENGTH, share_strings


def _fresh(text: str) -> str:
    return "".join(list(text))  # an equal string that is another object


def _obj(image: str, long_text: str) -> dict[str, Any]:
    return {
        "metadata": {"name": _fresh("web"), "labels": {"app": _fresh("web")}},
        "spec": {"containers": [{"image": _fresh(image), "args": [_fresh("--port"), 8080, None, True]}]},
        "note": long_text,
    }


def test_equal_short_strings_become_one_object_and_values_do_not_change() -> None:
    long_text = "x" * (MAX_LENGTH + 1)
    first, second = _obj("nvcr.io/nim:1", _fresh(long_text)), _obj("nvcr.io/nim:1", _fresh(long_text))
    before = copy.deepcopy([first, second])
    table: dict[str, str] = {}
    share_strings(first, table)
    share_strings(second, table)
    assert [first, second] == before
    assert first["spec"]["containers"][0]["image"] is second["spec"]["containers"][0]["image"]
    assert first["spec"]["containers"][0]["args"][0] is second["spec"]["containers"][0]["args"][0]
    assert first["metadata"]["name"] is first["metadata"]["labels"]["app"]
    assert first["note"] is not second["note"]  # long strings are left alone
    assert long_text not in table


def test_the_table_is_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(sharing, "TABLE_SIZE", 4)
    table: dict[str, str] = {}
    share_strings([f"value-{i}" for i in range(10)], table)
    assert len(table) <= 4
    kept = ["a", _fresh("shared")]
    share_strings(kept, table)
    again = [_fresh("shared")]
    share_strings(again, table)
    assert again[0] is kept[1]
