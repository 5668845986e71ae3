"""Decoding a LIST page item by item: each item's nesting checked, `managedFields` dropped before the next.

A page decoded in one piece holds all of its items at once, with their `managedFields` (half of a small object's
memory), until the caller has walked them: an informer keeping 2,000 Deployments paid a 7 MB peak for one 500-item
page that stayed in its RSS (benchmarks/RESULTS.md, "The live engine at scale"). Here the page's items are left as
their JSON text (`msgspec.Raw`, views into the answer, no copy) and decoded one at a time, so with `lean=True`
what is held at once is the answer's bytes plus the items kept so far, without their `managedFields`.

Each item's nesting is checked against `MAX_DEPTH` (the limit on workload objects) as it is decoded, so every item
of a list is a plain-JSON dict nested at most that deep: what `Workload(from_json=True)` asks its caller to vouch
for. The check counts the item's brackets first (fewer than MAX_DEPTH containers cannot nest that deep), and walks
the decoded value only past that.
"""

from __future__ import annotations

from typing import Any

import msgspec

from workload_map._limits import MAX_DEPTH
from workload_map.errors import WorkloadMapError


class _Page(msgspec.Struct):
    """A LIST answer with its items left undecoded (what a Kubernetes list holds; other keys are dropped)."""

    apiVersion: Any = None  # noqa: N815 (the JSON field's name)
    kind: Any = None
    metadata: Any = None
    items: list[msgspec.Raw] | None = None


_PAGE = msgspec.json.Decoder(_Page)
_ITEM = msgspec.json.Decoder()
_ALL_BUT_OPENING = bytes(byte for byte in range(256) if byte not in b"[{")
"""What `bytes.translate` deletes to leave an item's opening brackets: one pass over the item, where counting `[`
and `{` is two (~84 against ~46 M instructions for a LIST of 2,000 Deployments, issue 19)."""


class NestedTooDeepError(WorkloadMapError, ValueError):
    """An item of the list nests past MAX_DEPTH; `index` is its place in the page, `name` its metadata.name."""

    def __init__(self, index: int, name: str) -> None:
        self.index, self.name = index, name
        super().__init__(f"item {index}{f' ({name})' if name else ''} nests more than {MAX_DEPTH} levels deep")


def decode_list_page(content: bytes, *, lean: bool = False) -> Any:
    """The page as a dict (`apiVersion`, `kind`, `metadata`, `items`), its items decoded one by one and checked
    for nesting; `lean`: without `metadata.managedFields`. Raises `msgspec.DecodeError` for text that is not
    JSON and `NestedTooDeepError`; an answer that is not a list's shape is decoded whole, as any answer."""
    try:
        page = _PAGE.decode(content)
    except msgspec.ValidationError:  # JSON, but not a list (items not an array, not an object): as it stands
        return _ITEM.decode(content)
    if page.items is None:  # no items (null, or not a list at all): as it stands
        return _ITEM.decode(content)
    items: list[Any] = []
    for index, raw in enumerate(page.items):
        data = bytes(memoryview(raw))
        item = _ITEM.decode(data)
        if len(data.translate(None, _ALL_BUT_OPENING)) > MAX_DEPTH and _too_deep(item, data):
            metadata = item.get("metadata") if isinstance(item, dict) else None
            name = metadata.get("name") if isinstance(metadata, dict) else None
            raise NestedTooDeepError(index, name if isinstance(name, str) else "")
        if lean and type(item) is dict:
            metadata = item.get("metadata")
            if type(metadata) is dict:
                metadata.pop("managedFields", None)
        items.append(item)
    out: dict[str, Any] = {}
    for key, value in (("apiVersion", page.apiVersion), ("kind", page.kind), ("metadata", page.metadata)):
        if value is not None:
            out[key] = value
    out["items"] = items
    return out


def _too_deep(item: Any, data: bytes) -> bool:
    from workload_map.resolve._json import nested_too_deep  # rare: only objects of more than MAX_DEPTH containers

    return nested_too_deep(item, data)


__all__ = ["NestedTooDeepError", "decode_list_page"]
