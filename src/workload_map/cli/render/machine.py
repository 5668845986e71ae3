"""JSON and YAML output: stable, 2-space indented, key order as the producer gives it (a view starts with its
`schemaVersion`), one trailing newline. YAML loads back equal to the JSON. Neither imports rich."""

from __future__ import annotations

import json
from typing import IO, Any, Final

import msgspec

from workload_map._regex import LazyPattern

# What JSON may carry raw but a terminal must not see: DEL, C1 controls (U+009B is a CSI), the line and paragraph
# separators, bidirectional overrides. JSON's structure is ASCII, so they only occur inside strings, where \uXXXX
# is the same character (the C0 controls are escaped by the encoder itself).
_TERMINAL_UNSAFE: Final = LazyPattern("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape_unsafe(text: str) -> str:
    if text.isascii() and "\x7f" not in text:
        return text  # of ASCII only DEL is unsafe: no need to compile the pattern (~0.4 ms of a start, issue 19)
    if _TERMINAL_UNSAFE.search(text) is None:
        return text
    return _TERMINAL_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def to_json(value: Any) -> str:
    """2-space indented JSON, as `json.dumps(value, indent=2, ensure_ascii=False)` writes it, through msgspec's C
    encoder (the standard library falls back to pure Python when indenting: ~75x slower on a 500-view list)."""
    try:
        text: str = msgspec.json.format(msgspec.json.encode(value), indent=2).decode("utf-8")
    except (TypeError, msgspec.EncodeError):
        text = json.dumps(value, indent=2, ensure_ascii=False)
    return _escape_unsafe(text) + "\n"


def to_json_line(value: Any) -> str:
    """One compact line of JSON (a stream's document: `wmap watch`, `get -w`), terminal-safe like `to_json`."""
    try:
        text = msgspec.json.encode(value).decode("utf-8")
    except (TypeError, msgspec.EncodeError):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _escape_unsafe(text) + "\n"


def to_yaml(value: Any) -> str:
    import yaml  # PyYAML only for -o yaml: most runs print JSON or a tree (issue 19: start-up)

    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(
        value, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120
    )
    return text


def write(value: Any, fmt: str, stream: IO[str]) -> None:
    """Write `value` as `json` or `yaml`."""
    stream.write(to_json(value) if fmt == "json" else to_yaml(value))
