"""Writing definitions back out: plain dicts, YAML and JSON in a stable, readable order.

The order is the struct declaration order (kind, apiVersion, metadata, spec; components as declared), so a dump
diffs cleanly against the source. Multi-line jq expressions are written as YAML literal blocks.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Any

import msgspec
import yaml

from workload_map.errors import ArgumentTypeError
from workload_map.model.types import Karta

# libyaml's emitter when PyYAML has it (it always does in the wheels), else the pure-Python one.
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[misc,valid-type]
    """Block style, literal blocks for multi-line strings."""


# Characters YAML cannot carry unescaped (outside its printable set): such strings are written double-quoted,
# where they are escaped, so the dump reads back (the reader refuses them raw).
# NEL and the Unicode line/paragraph separators are printable but read as line breaks, so they are escaped too.
# Compiled on first use, not at import: the class spans most of Unicode and costs ~3 ms to compile (issue 19).
@functools.cache
def _not_printable() -> re.Pattern[str]:
    return re.compile("[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if _not_printable().search(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _represent_str)


def to_dict(karta: Karta) -> dict[str, Any]:
    """The definition as the plain dict the API server would store (absent fields omitted)."""
    if not isinstance(karta, Karta):
        raise ArgumentTypeError("a definition to dump", "a Karta", karta)
    value = _lists(msgspec.to_builtins(karta))
    assert isinstance(value, dict)
    return {"apiVersion": karta.api_version, "kind": karta.kind, **value}


def _lists(value: Any) -> Any:
    """The model holds tuples (it is frozen); the wire, YAML and a plain dict hold lists."""
    if isinstance(value, dict):
        return {key: _lists(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return [_lists(item) for item in value]
    return value


def _kartas(definitions: Any) -> list[Karta]:
    if not isinstance(definitions, Iterable) or isinstance(definitions, str | bytes | dict):
        raise ArgumentTypeError("the definitions to dump", "a Karta or an iterable of Kartas", definitions)
    return list(definitions)


def dump_yaml(definitions: Karta | Iterable[Karta]) -> str:
    """YAML text; several definitions become a `---`-separated stream."""
    items = [definitions] if isinstance(definitions, Karta) else _kartas(definitions)
    return yaml.dump_all(
        [to_dict(k) for k in items],
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=120,
    )


def dump_json(definitions: Karta | Iterable[Karta], *, indent: int = 2) -> str:
    """JSON text: one object, or a `KartaList` for several."""
    if isinstance(definitions, Karta):
        payload: dict[str, Any] = to_dict(definitions)
    else:
        items = [to_dict(k) for k in _kartas(definitions)]
        payload = {"apiVersion": "run.ai/v1alpha1", "kind": "KartaList", "items": items}
    text = json.dumps(payload, indent=indent, ensure_ascii=False) + "\n"
    # JSON allows DEL and C1 controls raw, YAML (which reads our JSON too) does not: escape them.
    return _not_printable().sub(lambda m: f"\\u{ord(m.group()):04x}", text)
