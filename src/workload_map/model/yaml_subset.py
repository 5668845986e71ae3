"""A pure-Python reader of the YAML subset Kubernetes manifests are written in, so most reads never import PyYAML.

`read_stream(text)` gives the documents of a stream as `(index, value)` pairs (documents whose value is null left
out, as `yamlio` leaves them out), or None: *declined*. The rule that makes it safe: for a text it accepts, the
result is exactly what the PyYAML path of `workload_map.model.yamlio` gives (the same values and types, key order,
document split and indices); for anything else it declines the whole text and that path reads it, so every error
message, line number and refusal still comes from there. Declining is cheap (the text is scanned once) and is the
only thing it ever does with unusual input.

Accepted: `---` and `...` lines (a comment after them), comments, block mappings and sequences (`- ` items at
the parent key's indent, `- - a`, `- key: v`), plain scalars resolved as the loader resolves them (YAML 1.1 null
and booleans, ints with 0b/0x/leading-zero octal and underscores, floats with a dot and a signed exponent; no
timestamps, no base-60), single- and double-quoted scalars (YAML's escapes), plain and quoted scalars folded over
lines (as `kubectl get -o yaml` writes long strings; an escaped line break too), literal and folded block scalars
(`|`, `>`, with `-` or `+`), and flow collections on one line (`[a, "b", 1]`, `{a: 1, b: [c]}`).
Declined: tabs, carriage returns, a BOM or any character the YAML reader would refuse or treat as a line break,
directives, anchors, aliases, tags, `?` keys, merge keys, repeated keys, a flow collection over lines, explicit
indentation indicators, a scalar at the root that goes over lines, a number JSON cannot carry, a key over 1,000
characters, nesting past `MAX_FAST_DEPTH`, more than `MAX_EXPANDED_NODES` nodes in a document, and whatever else is
not in the list above.

`safe_load(text)` is the same reader for a text `yaml.safe_load` would read (a definition's annotation): one
document, PyYAML's default resolvers (it declines a scalar those could read as a timestamp or base-60 number).

Proof: tests/unit/test_yaml_subset.py compares it with the PyYAML path (and `safe_load` with `yaml.safe_load`) on
every YAML file of the repository and on generated texts (hypothesis).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Final

from workload_map._limits import MAX_EXPANDED_NODES
from workload_map._regex import LazyPattern
from workload_map.errors import WorkloadMapError

__all__ = ["FLOAT_PATTERN", "INT_PATTERN", "MAX_FAST_DEPTH", "read_stream", "safe_load"]

INT_PATTERN: Final = r"""^(?:[-+]?0b[0-1_]+
    |[-+]?0[0-7_]+
    |[-+]?(?:0|[1-9][0-9_]*)
    |[-+]?0x[0-9a-fA-F_]+)$"""
"""YAML 1.1's integers without base 60 (verbose syntax): the PyYAML loader's resolver uses it too."""

FLOAT_PATTERN: Final = r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$"""
"""YAML 1.1's floats without base 60 (verbose syntax): `1e3` is a string, `1.0e+3` a float."""

MAX_FAST_DEPTH: Final = 100
"""Nesting levels this reader builds; a deeper document is declined (the PyYAML path applies `MAX_DEPTH`)."""

_MAX_KEY: Final = 1000  # libyaml refuses a simple key over 1024 characters
_MAX_COMPACT: Final = 20  # sequences started on one line (`- - a`)
_INT: Final = LazyPattern(INT_PATTERN, re.X)
_FLOAT: Final = LazyPattern(FLOAT_PATTERN, re.X)  # every float it matches has a `.`
_INT_CHARACTERS: Final = frozenset("+-_0123456789abcdefABCDEFx")  # all that `_INT` matches is made of
# what YAML reads as something other than a printable character of a line: tab, CR, NEL, LS, PS, BOM, controls
_UNUSUAL: Final = LazyPattern("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_BOOLS: Final = {
    spelling: value
    for word, value in (("yes", True), ("no", False), ("true", True), ("false", False), ("on", True), ("off", False))
    for spelling in (word, word.capitalize(), word.upper())
}
_NULLS: Final = frozenset({"~", "null", "Null", "NULL"})
_NUMBER_START: Final = frozenset("-+0123456789.")
_WORD_START: Final = frozenset("yYnNtTfFoO~")
# characters that cannot start a plain scalar (`-` can, before a non-blank)
_INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")
_FLOW_STOP: Final = frozenset(",[]{}#:")
_ESCAPES: Final = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_LENGTHS: Final = {"x": 2, "u": 4, "U": 8}
_HEX: Final = frozenset("0123456789abcdefABCDEF")


class _NotInSubsetError(WorkloadMapError):
    """The text is not in the subset: the PyYAML path reads it (never leaves this module)."""


def read_stream(text: str) -> list[tuple[int, Any]] | None:
    """The non-null documents of `text` as (index in the stream, value), or None when the text is declined."""
    try:
        documents: list[tuple[int, Any]] = []
        for index, reader in enumerate(_readers(text, _plain)):
            value = reader.document()
            if value is not None:
                documents.append((index, value))
        return documents
    except _NotInSubsetError:
        return None


def safe_load(text: str) -> tuple[Any] | None:
    """`(yaml.safe_load(text),)` for a text of at most one document in the subset, or None when declined. For
    the YAML texts definitions carry in annotations: PyYAML's own resolvers, so a plain scalar that could be a
    timestamp or a base-60 number (a digit or sign, then `:` or `-`) is declined too, and so is a repeated key
    (`safe_load` keeps the last one)."""
    try:
        readers = _readers(text, _plain_safe_load)
        if len(readers) > 1:
            return None  # safe_load raises for a stream of documents
        return (readers[0].document() if readers else None,)
    except _NotInSubsetError:
        return None


def _unusual(text: str) -> bool:
    """Whether `text` has a character `_UNUSUAL` matches. An ASCII text (nearly every manifest) is checked without
    the pattern, whose character class takes 3-4 ms to compile (issue 19, start-up): of ASCII, the pattern lets
    through exactly the line break and the characters `str.isprintable` accepts (space to `~`)."""
    if text.isascii():
        return not text.replace("\n", "").isprintable()
    return _UNUSUAL.search(text) is not None


def _readers(text: str, resolve: Callable[[str], Any]) -> list[_Reader]:
    if _unusual(text):
        raise _NotInSubsetError
    lines = text.split("\n")
    terminated = text.endswith("\n")
    if terminated:
        lines.pop()  # the empty string after the last line break is no line
    return [
        _Reader(lines, start, end, terminated or end < len(lines), resolve) for start, end in _document_ranges(lines)
    ]


def _marker(line: str, marker: str) -> bool:
    """Whether `line` is a `---` or `...` line (nothing but a comment after it); a line that starts with the marker
    and has more after it is declined."""
    if not line.startswith(marker):
        return False
    rest = line[3:]
    if not rest:
        return True
    if rest[0] != " ":
        raise _NotInSubsetError
    rest = rest.lstrip(" ")
    if rest and rest[0] != "#":
        raise _NotInSubsetError  # `--- value`, `--- |`, `--- !tag`
    return True


def _document_ranges(lines: list[str]) -> list[tuple[int, int]]:
    """[start, end) line ranges of the documents, as the YAML parser splits the stream."""
    ranges: list[tuple[int, int]] = []
    state = "before"  # before any document | "in" one | "ended" by `...`
    start = 0
    for number, line in enumerate(lines):
        head = line[:1]
        if head == "%":
            raise _NotInSubsetError  # a directive
        # `_marker` asked only of a line that could be one: two calls a line were a tenth of a manifest's read
        if head == "-" and _marker(line, "---"):
            if state == "in":
                ranges.append((start, number))
            state, start = "in", number + 1
        elif head == "." and _marker(line, "..."):
            if state != "in":
                raise _NotInSubsetError
            ranges.append((start, number))
            state = "ended"
        elif state != "in":
            stripped = line.lstrip(" ")
            if not stripped or stripped[0] == "#":
                continue
            if state == "ended":
                raise _NotInSubsetError  # a bare document after `...`
            state, start = "in", number
    if state == "in":
        ranges.append((start, len(lines)))
    return ranges


def _is_entry(text: str) -> bool:
    return text == "-" or text.startswith("- ")


def _after_scalar(text: str, end: int) -> None:
    """Only blanks and a comment may follow a quoted scalar or a flow collection on its line."""
    rest = text[end:]
    if rest and (rest[0] != " " or rest.lstrip(" ")[:1] not in ("", "#")):
        raise _NotInSubsetError


def _plain(text: str) -> Any:
    """The value of a plain scalar, resolved as the loader resolves it (`yamlio`'s PyYAML path)."""
    first = text[0]
    if first in _NUMBER_START:
        if (first != "0" or text == "0") and text.isdigit() and text.isascii():
            return _int(text)  # a plain decimal (a count, a port, 0): `_INT` matches it, no need to ask
        # the patterns only where they could match (`16Gi` and `--nnodes=5` compile neither, issue 19)
        if "." in text and _FLOAT.match(text):
            return _float(text)
        if _INT_CHARACTERS.issuperset(text) and _INT.match(text):
            return _int(text)
        return text
    if first in _WORD_START:
        if text in _NULLS:
            return None
        found = _BOOLS.get(text)
        return text if found is None else found
    if text in ("<<", "="):
        raise _NotInSubsetError  # a merge key; PyYAML's `value` tag, which the safe loader cannot construct
    return text


def _plain_safe_load(text: str) -> Any:
    """`_plain` where PyYAML's default resolvers could read something else: a timestamp, a base-60 number."""
    if text[0] in _NUMBER_START and (":" in text or "-" in text[1:]):
        raise _NotInSubsetError
    return _plain(text)


def _int(text: str) -> int:
    # PyYAML's construct_yaml_int, step by step: the same text gives the same number
    value = text.replace("_", "")
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    try:
        if value == "0":
            return 0
        if value.startswith("0b"):
            return sign * int(value[2:], 2)
        if value.startswith("0x"):
            return sign * int(value[2:], 16)
        if value[0] == "0":
            return sign * int(value, 8)
        return sign * int(value)
    except ValueError:  # no digits after 0x or 0b; more digits than Python converts
        raise _NotInSubsetError from None


def _float(text: str) -> float:
    # PyYAML's construct_yaml_float, then the loader's refusal of what JSON cannot carry
    value = text.replace("_", "").lower()
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value in (".inf", ".nan"):
        raise _NotInSubsetError
    number = sign * float(value)
    if not math.isfinite(number):
        raise _NotInSubsetError
    return number


def _single_segment(text: str, position: int) -> tuple[str, int]:
    """The content of a single-quoted scalar from `position` to its closing quote and the index after that quote;
    -1 when the line ends first."""
    parts: list[str] = []
    while True:
        close = text.find("'", position)
        if close < 0:
            parts.append(text[position:])
            return "".join(parts), -1
        parts.append(text[position:close])
        if text[close + 1 : close + 2] == "'":
            parts.append("'")
            position = close + 2
            continue
        return "".join(parts), close + 1


def _double_segment(text: str, position: int) -> tuple[str, int]:
    """The content of a double-quoted scalar from `position` to its closing quote (escapes applied) and the index
    after that quote; -1 when the line ends first, -2 when it ends in an escaped line break. Declined for an
    escape YAML does not define."""
    parts: list[str] = []
    length = len(text)
    quote = text.find('"', position)
    while True:
        if 0 <= quote < position:  # that quote was escaped: the next one (none stays none: no rescan per escape)
            quote = text.find('"', position)
        backslash = text.find("\\", position, length if quote < 0 else quote)
        if backslash < 0:
            if quote < 0:
                parts.append(text[position:])
                return "".join(parts), -1
            parts.append(text[position:quote])
            return "".join(parts), quote + 1
        parts.append(text[position:backslash])
        if backslash + 1 >= length:
            return "".join(parts), -2
        code = text[backslash + 1]
        simple = _ESCAPES.get(code)
        if simple is not None:
            parts.append(simple)
            position = backslash + 2
            continue
        digits = _HEX_LENGTHS.get(code)
        if digits is None:
            raise _NotInSubsetError
        hex_text = text[backslash + 2 : backslash + 2 + digits]
        if len(hex_text) != digits or not _HEX.issuperset(hex_text):
            raise _NotInSubsetError
        point = int(hex_text, 16)
        if 0xD800 <= point <= 0xDFFF or point > 0x10FFFF:
            raise _NotInSubsetError
        parts.append(chr(point))
        position = backslash + 2 + digits


def _single_quoted(text: str, start: int) -> tuple[str, int]:
    """The single-quoted scalar at `start` and the index after it; declined unless it ends on its line."""
    value, end = _single_segment(text, start + 1)
    if end < 0:
        raise _NotInSubsetError
    return value, end


def _double_quoted(text: str, start: int) -> tuple[str, int]:
    """The double-quoted scalar at `start` and the index after it; declined unless it ends on its line."""
    value, end = _double_segment(text, start + 1)
    if end < 0:
        raise _NotInSubsetError
    return value, end


class _Reader:
    """One document's lines [start, end) read into a value; `_NotInSubsetError` for anything outside the subset."""

    def __init__(
        self, lines: list[str], start: int, end: int, last_terminated: bool, resolve: Callable[[str], Any]
    ) -> None:
        self.lines = lines
        self.resolve = resolve  # of a plain scalar's text to its value
        self.end = end
        self.last_terminated = last_terminated  # whether line end-1 ends with a line break
        self.nodes = 0
        self.position = start - 1
        self.indent = 0  # of the current line (after a `- ` taken off it: of what follows it)
        self.text = ""  # the current line from its indent on
        self.compact = 0  # `- ` taken off the current line
        self._advance()

    def document(self) -> Any:
        if self.position >= self.end:
            return None
        value = self._node(-1, 0)
        if self.position < self.end:
            raise _NotInSubsetError  # content after the root node: an error for the YAML parser
        return value

    def _advance(self) -> None:
        """Move to the next line with content (not blank, not a comment)."""
        lines = self.lines
        number = self.position + 1
        while number < self.end:
            line = lines[number]
            text = line.lstrip(" ")
            if text and text[0] != "#":
                self.position, self.indent, self.text = number, len(line) - len(text), text
                self.compact = 0
                return
            number += 1
        self.position = self.end

    def _count(self, depth: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_EXPANDED_NODES or depth > MAX_FAST_DEPTH:
            raise _NotInSubsetError

    def _node(self, parent: int, depth: int) -> Any:
        """The node starting on the current line (a collection, or a scalar alone on its line)."""
        text = self.text
        if _is_entry(text):
            return self._sequence(self.indent, depth)
        if text[0] not in "[{" and _key_end(text) >= 0:
            return self._mapping(self.indent, depth)
        value = self._inline(text, depth, parent)
        self._advance()
        if self.position < self.end and self.indent > parent:
            raise _NotInSubsetError  # a multi-line scalar (or an error)
        return value

    def _mapping(self, indent: int, depth: int) -> dict[Any, Any]:
        self._count(depth)
        mapping: dict[Any, Any] = {}
        while True:
            text = self.text
            colon = _key_end(text)
            if colon < 0:
                raise _NotInSubsetError
            key = _key(text, colon, self.resolve)
            if key in mapping:
                raise _NotInSubsetError  # a repeated key: the PyYAML path names it
            rest = text[colon + 1 :].lstrip(" ")
            if not rest or rest[0] == "#":
                self._advance()
                if self.position >= self.end:
                    value: Any = None
                elif self.indent > indent:
                    value = self._node(indent, depth + 1)
                elif self.indent == indent and _is_entry(self.text):
                    value = self._sequence(indent, depth + 1)
                else:
                    value = None
            elif rest[0] in "|>":
                value = self._block_scalar(rest, indent, depth + 1)
            else:
                value = self._inline(rest, depth + 1, indent)
                self._advance()
            mapping[key] = value
            if self.position >= self.end or self.indent < indent:
                return mapping
            if self.indent > indent:
                raise _NotInSubsetError

    def _sequence(self, indent: int, depth: int) -> list[Any]:
        self._count(depth)
        items: list[Any] = []
        while True:
            rest = self.text[1:]
            item_text = rest.lstrip(" ")
            if not item_text or item_text[0] == "#":
                self._advance()
                if self.position < self.end and self.indent > indent:
                    items.append(self._node(indent, depth + 1))
                else:
                    items.append(None)
            elif item_text[0] in "|>":
                items.append(self._block_scalar(item_text, indent, depth + 1))
            else:
                self.compact += 1
                if self.compact > _MAX_COMPACT:
                    raise _NotInSubsetError  # `- - - ...`: each level would copy the rest of the line
                self.indent += 1 + len(rest) - len(item_text)
                self.text = item_text
                items.append(self._node(indent, depth + 1))
            if self.position >= self.end or self.indent < indent:
                return items
            if self.indent > indent:
                raise _NotInSubsetError
            if not _is_entry(self.text):
                return items

    def _inline(self, text: str, depth: int, parent: int) -> Any:
        """A scalar or flow collection that starts at `text` (the rest of the current line); a scalar may go on
        over the next lines. The current line is left at the last line it takes."""
        first = text[0]
        if first in "[{":
            value, end = self._flow(text, 0, depth)
            _after_scalar(text, end)
            return value
        self._count(depth)
        if first in "'\"":
            return self._quoted(text, parent)
        if first in _INDICATORS and (first != "-" or text[1:2] in ("", " ")):
            raise _NotInSubsetError
        comment = text.find(" #")
        plain = (text if comment < 0 else text[:comment]).rstrip(" ")
        if ": " in plain or plain.endswith(":"):
            raise _NotInSubsetError
        if comment < 0 and parent >= 0:
            longer = self._plain_lines(plain, parent)
            if longer is not None:
                return self.resolve(longer)
        return self.resolve(plain)

    def _plain_lines(self, first: str, parent: int) -> str | None:
        """A plain scalar whose first line is `first`, folded with the lines that go on with it (indented past
        `parent`), or None when it has no more lines."""
        lines, end = self.lines, self.end
        number = self.position + 1
        parts = [first]
        breaks = 0
        taken = self.position
        while number < end:
            line = lines[number]
            text = line.lstrip(" ")
            if not text:
                breaks += 1
                number += 1
                continue
            if len(line) - len(text) <= parent or text[0] == "#":
                break
            comment = text.find(" #")
            piece = (text if comment < 0 else text[:comment]).rstrip(" ")
            if ": " in piece or piece.endswith(":"):
                raise _NotInSubsetError
            parts.append("\n" * breaks if breaks else " ")
            parts.append(piece)
            breaks = 0
            taken = number
            number += 1
            if comment >= 0:
                break
        if taken == self.position:
            return None
        self.position = taken
        return "".join(parts)

    def _quoted(self, text: str, parent: int) -> str:
        """A single- or double-quoted scalar starting at `text`, folded over lines as the YAML scanner folds it
        (a break is a space, blank lines are breaks, an escaped break joins); only blanks and a comment may follow
        it. The current line is left at its last line."""
        segment = _single_segment if text[0] == "'" else _double_segment
        parts: list[str] = []
        line, position = text, 1
        while True:
            value, end = segment(line, position)
            if end >= 0:
                parts.append(value)
                _after_scalar(line, end)
                return "".join(parts)
            if parent < 0:
                raise _NotInSubsetError  # a root scalar over lines: a document marker could end it
            rest = line[position:]
            kept = rest.rstrip(" ")
            value, end = segment(kept, 0)  # blanks before a line break are dropped
            escaped = end == -2
            if escaped and len(kept) != len(rest):
                raise _NotInSubsetError  # `\ ` before the break: an escaped blank, then blanks
            parts.append(value)
            number = self.position + 1
            blanks = 0
            while True:
                if number >= self.end:
                    raise _NotInSubsetError  # unterminated: the PyYAML path reports it
                following = self.lines[number]
                line = following.lstrip(" ")
                if line:
                    break
                blanks += 1
                number += 1
            if len(following) - len(line) <= parent:
                raise _NotInSubsetError
            self.position = number
            parts.append("\n" * blanks if escaped or blanks else " ")
            position = 0

    def _flow(self, text: str, start: int, depth: int) -> tuple[Any, int]:
        """The flow collection at `start` of a line (`[a, "b", 1]`, `{a: 1, b: [c]}`, `[]`, `{}`) and the index
        after it; declined unless it ends on its line."""
        self._count(depth)
        close = "]" if text[start] == "[" else "}"
        items: list[Any] = []
        mapping: dict[Any, Any] = {}
        position = _skip_spaces(text, start + 1)
        if text[position : position + 1] == close:
            return (items if close == "]" else mapping), position + 1
        while True:
            if close == "}":
                quoted = text[position : position + 1] in ("'", '"')
                key_start = position
                key, position = _flow_scalar(text, position, self.resolve, key=True)
                if key == "<<" or key in mapping or position - key_start > _MAX_KEY:
                    raise _NotInSubsetError
                if text[position : position + 1] != ":" or not (quoted or text[position + 1 : position + 2] == " "):
                    raise _NotInSubsetError
                value, position = self._flow_value(text, _skip_spaces(text, position + 1), depth + 1)
                mapping[key] = value
            else:
                value, position = self._flow_value(text, position, depth + 1)
                items.append(value)
            position = _skip_spaces(text, position)
            found = text[position : position + 1]
            if found == close:
                return (items if close == "]" else mapping), position + 1
            if found != ",":
                raise _NotInSubsetError
            position = _skip_spaces(text, position + 1)

    def _flow_value(self, text: str, position: int, depth: int) -> tuple[Any, int]:
        if text[position : position + 1] in ("[", "{"):
            return self._flow(text, position, depth)
        self._count(depth)
        return _flow_scalar(text, position, self.resolve, key=False)

    def _block_scalar(self, header: str, parent: int, depth: int) -> str:
        """A literal (`|`) or folded (`>`) scalar whose header is the rest of the current line, read as the YAML
        scanner reads it (its breaks, folding and chomping); the current line moves past it."""
        self._count(depth)
        folded = header[0] == ">"
        chomp = header[1:2] if header[1:2] in ("-", "+") else ""
        tail = header[1 + len(chomp) :]
        if tail and (tail[0] != " " or tail.lstrip(" ")[:1] not in ("", "#")):
            raise _NotInSubsetError  # an indentation indicator, or anything else after the header
        lines, end = self.lines, self.end
        number = self.position + 1
        leading = widest = 0
        while number < end and not lines[number].strip(" "):
            if number == end - 1 and not self.last_terminated:
                raise _NotInSubsetError  # a scalar with no content line
            widest = max(widest, len(lines[number]))
            leading += 1
            number += 1
        if number >= end:
            raise _NotInSubsetError
        first = lines[number]
        indent = len(first) - len(first.lstrip(" "))
        if indent <= parent or widest > indent:
            raise _NotInSubsetError
        # each content line (after the indent) with the blank lines after it, as the scanner meets them
        entries: list[tuple[str, bool, int]] = []
        while number < end:
            line = lines[number]
            if not line.strip(" "):
                raise _NotInSubsetError  # lines of blanks only are handled below, after a content line
            if len(line) - len(line.lstrip(" ")) < indent:
                break
            terminated = number < end - 1 or self.last_terminated
            number += 1
            blanks = 0
            while number < end and not lines[number].strip(" "):
                if len(lines[number]) > indent:
                    raise _NotInSubsetError  # blanks past the indent are content
                if number == end - 1 and not self.last_terminated:
                    break  # blanks at the end of the text with no break: no line
                blanks += 1
                number += 1
            entries.append((line[indent:], terminated, blanks))
            if not terminated:
                break
        out: list[str] = []
        leading_break, trailing_breaks, leading_blank = "", "\n" * leading, False
        for content, terminated, blanks in entries:
            trailing_blank = content[:1] == " "
            if folded and leading_break == "\n" and not leading_blank and not trailing_blank:
                if not trailing_breaks:
                    out.append(" ")
            else:
                out.append(leading_break)
            leading_break = ""
            out.append(trailing_breaks)
            leading_blank = trailing_blank
            out.append(content)
            if not terminated:
                trailing_breaks = ""
                break
            leading_break, trailing_breaks = "\n", "\n" * blanks
        if chomp != "-":
            out.append(leading_break)
        if chomp == "+":
            out.append(trailing_breaks)
        self.position = number - 1
        self._advance()
        return "".join(out)


def _skip_spaces(text: str, position: int) -> int:
    length = len(text)
    while position < length and text[position] == " ":
        position += 1
    return position


def _key_end(text: str) -> int:
    """The index of the `:` that ends a block mapping key on the line, or -1 when the line has none."""
    if text[0] in "'\"":
        try:
            _, end = (_single_quoted if text[0] == "'" else _double_quoted)(text, 0)
        except _NotInSubsetError:
            return -1
        if text[end : end + 1] == ":" and text[end + 1 : end + 2] in ("", " "):
            return end
        return -1
    colon = text.find(":")
    while colon >= 0:
        if colon + 1 == len(text) or text[colon + 1] == " ":
            return colon
        colon = text.find(":", colon + 1)
    return -1


def _key(text: str, colon: int, resolve: Callable[[str], Any]) -> Any:
    """The key of a block mapping line whose key ends at `colon`."""
    if colon > _MAX_KEY:
        raise _NotInSubsetError
    first = text[0]
    if first == "'":
        return _single_quoted(text, 0)[0]
    if first == '"':
        return _double_quoted(text, 0)[0]
    if first in _INDICATORS:
        raise _NotInSubsetError  # `? key`, `&anchor key`, `*alias`, `!tag key`, `- ` is not a key
    raw = text[:colon]
    if " #" in raw:
        raise _NotInSubsetError
    return resolve(raw.rstrip(" "))


def _flow_scalar(text: str, position: int, resolve: Callable[[str], Any], *, key: bool) -> tuple[Any, int]:
    """A scalar inside a flow collection and the index after it; declined unless it is quoted or a plain scalar
    without a flow indicator, `:` or `#`."""
    first = text[position : position + 1]
    if first == '"':
        return _double_quoted(text, position)
    if first == "'":
        return _single_quoted(text, position)
    after = text[position + 1 : position + 2]
    if not first or (first in _INDICATORS and (first != "-" or after in ("", " ", ",", "]", "}"))):
        raise _NotInSubsetError
    end = position
    length = len(text)
    while end < length and text[end] not in _FLOW_STOP:
        end += 1
    if end < length and text[end] == ":" and not (key and text[end + 1 : end + 2] == " "):
        raise _NotInSubsetError
    if end < length and text[end] in "#[{":
        raise _NotInSubsetError
    raw = text[position:end].rstrip(" ")
    if not raw or (key and end - position > _MAX_KEY):
        raise _NotInSubsetError
    return resolve(raw), position + len(raw)
