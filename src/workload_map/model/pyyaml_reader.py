"""The PyYAML path of `workload_map.model.yamlio`: libyaml's scanner and parser (PyYAML's `CSafeLoader`), our own
builder and resolvers. Imported only when the fast reader (`yaml_subset`) declines a text, so most reads of a
manifest never import PyYAML (about 8 ms of start-up: its modules compile many regular expressions).

Every rule of the YAML semantics lives here for the texts the fast reader declines: no timestamps, no base-60
numbers, repeated keys refused, numbers JSON cannot carry refused, alias expansion bounded (`yamlio`), merge keys,
and `DocumentError` messages that name the source and line.
"""

from __future__ import annotations

import io
import math
import re
from typing import Any, ClassVar

import yaml

from workload_map._limits import MAX_INT_DIGITS
from workload_map._regex import LazyPattern
from workload_map.errors import WorkloadMapError
from workload_map.model.yaml_subset import FLOAT_PATTERN, INT_PATTERN
from workload_map.model.yamlio import Document, DocumentError, check_expansion

__all__ = ["parse_stream"]

try:
    _BaseLoader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader


def _resolvers() -> dict[Any, list[tuple[str, Any]]]:
    """PyYAML's implicit resolvers without timestamps and without YAML 1.1's base-60 numbers: `1:30` is the string
    kubectl reads (go-yaml never resolved sexagesimals), not 90; `2026-01-10` stays a string."""
    sexagesimal = {  # the patterns the fast reader resolves by (one source for both)
        "tag:yaml.org,2002:int": LazyPattern(INT_PATTERN, re.X),
        "tag:yaml.org,2002:float": LazyPattern(FLOAT_PATTERN, re.X),
    }
    return {
        first: [
            (tag, sexagesimal.get(tag, regexp)) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"
        ]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }


class _NumberError(yaml.constructor.ConstructorError, WorkloadMapError):
    """A number no JSON document can carry (over 4300 digits, NaN, infinite): the document is refused."""

    keyed = False  # the message names the key already


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """The safe loader's scanner, parser, resolver and scalar constructors (documents are built from its events by
    `_Builder`, which refuses a mapping that repeats a key: PyYAML would silently keep the last one), refusing numbers
    JSON cannot carry (an integer over 4300 digits, `.nan`, `.inf`, a float beyond a double: kubectl refuses them
    too), reading unquoted timestamps and base-60 numbers (`1:30`) as the strings they are in Kubernetes objects.

    A repeated key in a definition is a lost matcher or path; kubectl refuses such manifests too.
    """

    yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, Any]]]] = _resolvers()

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        try:
            return super().construct_yaml_int(node)  # type: ignore[no-any-return]
        except ValueError:  # beyond Python's int-str conversion limit
            digits = sum(char.isdigit() for char in node.value)
            raise _NumberError(
                None,
                None,
                f"an integer of {digits} digits is refused (at most {MAX_INT_DIGITS}); quote it if it is text",
                node.start_mark,
            ) from None

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        value: float = super().construct_yaml_float(node)
        if not math.isfinite(value):
            what = "a NaN" if math.isnan(value) else "an infinite number"
            if not node.value.lstrip("+-").startswith("."):
                what = "a number beyond the range of a double"
            raise _NumberError(
                None, None, f"{what} ({node.value[:40]}) has no JSON form; quote it if it is text", node.start_mark
            )
        return value


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _Loader.construct_yaml_float)


def parse_stream(text: str, source: str) -> list[Document | DocumentError]:
    """`yamlio.parse_documents_each` for a YAML text: every non-empty document, or the error of one that cannot
    be read; a syntax error ends its document and reading resumes at the next `---` line."""
    results: list[Document | DocumentError] = []
    offset_line, index, rest = 0, 0, text
    while True:
        failure = _parse_chunk(rest, source, offset_line, index, results)
        if failure is None:
            return results
        index, line, column = failure
        # an error at the start of a `---` line ended an unterminated document: the next one starts right there
        resume = _next_marker(rest, line - offset_line, inclusive=column == 0)
        if resume is None:
            return results
        rest = "\n".join(rest.split("\n")[resume:])  # lines as YAML counts them (not str.splitlines: \f, \x1c)
        offset_line += resume
        index += 1


_MARKER = LazyPattern(r"^---(?:[ \t].*)?$")


def _next_marker(text: str, line: int, *, inclusive: bool) -> int | None:
    """The index of the first document-start line (`---`) of `text` after line `line` (0-based; at it too when
    `inclusive`), never the first line (reading must move on)."""
    for number, content in enumerate(text.split("\n")):
        if number > 0 and (number > line or (inclusive and number == line)) and _MARKER.match(content.rstrip("\r")):
            return number
    return None


def _parse_chunk(
    text: str, source: str, offset_line: int, index: int, results: list[Document | DocumentError]
) -> tuple[int, int, int] | None:
    """Read the documents of `text` into `results`; on a syntax error, (its document's index, its line in the
    stream, its column) after recording it, so the caller resumes at the next document; None at the end."""
    loader = _Loader(io.StringIO(text))
    try:
        while True:
            try:
                if loader.check_event(yaml.StreamStartEvent):
                    loader.get_event()
                if loader.check_event(yaml.StreamEndEvent):
                    return None
                value, refused = _Builder(loader).document()
            except (yaml.YAMLError, RecursionError) as exc:
                results.append(DocumentError(source, _message(exc, offset_line), index))
                mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
                if mark is None:
                    return index, offset_line, 1
                return index, mark.line + offset_line, mark.column
            if refused is not None:
                results.append(DocumentError(source, _message(refused, offset_line), index))
            elif value is not None:
                try:
                    check_expansion(value, source, index)
                    results.append(Document(source, index, value))
                except DocumentError as exc:
                    results.append(DocumentError(source, exc.message, index))
            index += 1
    finally:
        loader.dispose()


class _Builder:
    """One document built straight from the parser's events: no node tree is kept (PyYAML composes every node of a
    document, with its marks, before building it: about 60 bytes of memory per byte of text), and the same rules
    as the loader's constructors (a repeated key, a number JSON cannot carry, merge keys, anchors and aliases).

    `document()` gives (value, None), or (None, the refusal) when a rule refused it: the rest of the document is
    then read (a syntax error in it still ends the chunk, as before) and dropped."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.anchors: dict[str, Any] = {}

    def document(self) -> tuple[Any, BaseException | None]:
        self.loader.get_event()  # DocumentStartEvent
        try:
            value = self.value()
        except (yaml.constructor.ConstructorError, yaml.composer.ComposerError) as refused:
            self._skip_to_document_end()
            return None, refused
        self.loader.get_event()  # DocumentEndEvent
        return value, None

    def _skip_to_document_end(self) -> None:
        depth = 0
        while True:
            event = self.loader.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            elif isinstance(event, yaml.DocumentEndEvent) and depth <= 0:
                return

    def value(self) -> Any:
        loader = self.loader
        event = loader.get_event()
        if isinstance(event, yaml.AliasEvent):
            mark: Any = event.start_mark
            if event.anchor not in self.anchors:
                raise yaml.composer.ComposerError(None, None, f"found undefined alias {event.anchor!r}", mark)
            return self.anchors[event.anchor]
        if isinstance(event, yaml.ScalarEvent):
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
            marks: Any = (event.start_mark, event.end_mark)  # the C parser's own Mark type, as the node's
            node = yaml.ScalarNode(tag, event.value, marks[0], marks[1], style=event.style)
            constructor = loader.yaml_constructors.get(tag) or loader.yaml_constructors.get(None)
            result = constructor(loader, node)
            if event.anchor is not None:
                self.anchors[event.anchor] = result
            return result
        if isinstance(event, yaml.SequenceStartEvent):
            items: list[Any] = []
            if event.anchor is not None:
                self.anchors[event.anchor] = items
            while not loader.check_event(yaml.SequenceEndEvent):
                items.append(self.value())
            loader.get_event()
            return items
        if isinstance(event, yaml.MappingStartEvent):
            return self._mapping(event)
        unexpected: Any = event.start_mark
        raise yaml.composer.ComposerError(None, None, f"unexpected {type(event).__name__}", unexpected)

    def _mapping(self, start: Any) -> dict[Any, Any]:
        loader = self.loader
        mapping: dict[Any, Any] = {}
        if start.anchor is not None:
            self.anchors[start.anchor] = mapping
        merged: list[dict[Any, Any]] = []
        while not loader.check_event(yaml.MappingEndEvent):
            key_event = loader.peek_event()
            is_merge = (
                isinstance(key_event, yaml.ScalarEvent)
                and key_event.value == "<<"
                and (key_event.tag or loader.resolve(yaml.ScalarNode, "<<", key_event.implicit))
                == "tag:yaml.org,2002:merge"
            )
            if is_merge:
                loader.get_event()  # the `<<` key itself: a merge, not a key
                key: Any = None
            else:
                key = self.value()
            try:
                value = self.value()
            except _NumberError as exc:
                if exc.keyed or not isinstance(key_event, yaml.ScalarEvent):
                    raise
                keyed = _NumberError(None, None, f"{key_event.value[:80]}: {exc.problem}", exc.problem_mark)
                keyed.keyed = True  # the innermost key names it
                raise keyed from None
            if is_merge:
                for source in value if isinstance(value, list) else [value]:
                    if not isinstance(source, dict):
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping",
                            start.start_mark,
                            "expected a mapping or a list of mappings for merging",
                            key_event.start_mark,
                        )
                    merged.append(source)
                continue
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", start.start_mark, "found unhashable key", key_event.start_mark
                ) from None
            if key in mapping:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}; remove one of them", key_event.start_mark
                )
            mapping[key] = value
        loader.get_event()
        for source in merged:  # explicit keys win over merged ones, an earlier merge over a later one
            for key, value in source.items():
                mapping.setdefault(key, value)
        return mapping


def _message(exc: BaseException, offset_line: int) -> str:
    if isinstance(exc, RecursionError):
        return "document is nested too deeply"
    if isinstance(exc, yaml.reader.ReaderError):  # one line, not PyYAML's two
        character = exc.character if isinstance(exc.character, int) else ord(exc.character or "\0")
        return f"invalid YAML at character {exc.position + 1}: {exc.reason} (#x{character:04x})"
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + offset_line + 1}, column {mark.column + 1}" if mark else ""
        problem = exc.problem or exc.context or "invalid YAML"
        return f"invalid YAML{where}: {problem}"
    return f"invalid YAML: {exc}"
