"""Reading YAML/JSON documents safely: the one place that turns bytes into plain Python values.

Used for definitions and for workload manifests alike. Every failure becomes a `DocumentError` whose message
names the source and line, never a parser traceback. Two hostile inputs are handled on purpose: an alias bomb
("billion laughs") loads cheaply with PyYAML because aliases share objects, but anything that walks the result
would expand it, so the expanded size is measured (linearly, memoised by identity) and refused past a bound;
and an oversized input is refused while it is read (`workload_map._io`: the bytes read are counted, so devices,
pipes and FIFOs are bounded too), before parsing.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import yaml

from workload_map._io import InputError, read_input_text
from workload_map._limits import MAX_DEPTH, MAX_EXPANDED_NODES, MAX_INPUT_BYTES, MAX_INT_DIGITS, STREAM_TIMEOUT
from workload_map._regex import LazyPattern
from workload_map.errors import ArgumentTypeError, WorkloadMapError

try:
    _BaseLoader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader


def _resolvers() -> dict[Any, list[tuple[str, Any]]]:
    """PyYAML's implicit resolvers without timestamps and without YAML 1.1's base-60 numbers: `1:30` is the string
    kubectl reads (go-yaml never resolved sexagesimals), not 90; `2026-01-10` stays a string."""
    sexagesimal = {
        "tag:yaml.org,2002:int": LazyPattern(
            r"""^(?:[-+]?0b[0-1_]+
            |[-+]?0[0-7_]+
            |[-+]?(?:0|[1-9][0-9_]*)
            |[-+]?0x[0-9a-fA-F_]+)$""",
            re.X,
        ),
        "tag:yaml.org,2002:float": LazyPattern(
            r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
            |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
            |[-+]?\.(?:inf|Inf|INF)
            |\.(?:nan|NaN|NAN))$""",
            re.X,
        ),
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


# Expanded node count past which a document is treated as an alias bomb (MAX_EXPANDED_NODES). A large `helm
# template` output has well under a million nodes; a billion-laughs document has billions.


class DocumentError(WorkloadMapError, ValueError):
    """A source that cannot be read as YAML/JSON documents."""

    def __init__(self, source: str, message: str, index: int | None = None) -> None:
        self.source = source
        self.message = message
        self.index = index  # the document of the stream it is about (0-based), when it is about one
        super().__init__(f"{self.label}: {message}")

    @property
    def label(self) -> str:
        return self.source if self.index is None else f"{self.source} (document {self.index + 1})"


class Document(msgspec.Struct, frozen=True):
    """One parsed document of a stream, with where it came from (for messages)."""

    source: str
    index: int
    value: Any

    @property
    def label(self) -> str:
        return f"{self.source} (document {self.index + 1})"


def read_source_text(
    source: str | Path | Any, *, limit: int = MAX_INPUT_BYTES, timeout: float | None = STREAM_TIMEOUT
) -> tuple[str, str]:
    """(label, text) of a file path, `-` (standard input) or a binary stream, through the one bounded reader
    (`workload_map._io.read_input`: the limit counted on the bytes read, FIFOs and devices under `timeout`)."""
    try:
        return read_input_text(source, limit=limit, timeout=timeout)
    except InputError as exc:
        raise DocumentError(exc.source, exc.message) from exc


def parse_documents(text: str, source: str = "<text>") -> list[Document]:
    """Every non-empty document of a YAML (or JSON) stream, in order; the first problem raises `DocumentError`."""
    documents: list[Document] = []
    for item in parse_documents_each(text, source):
        if isinstance(item, DocumentError):
            raise DocumentError(source, item.message) from None
        documents.append(item)
    return documents


def parse_documents_each(text: str, source: str = "<text>") -> list[Document | DocumentError]:
    """Every non-empty document of a stream, or the `DocumentError` of a document that cannot be read (its
    `index` says which): one bad document never hides the others.

    A document is refused for a repeated key, a number JSON cannot carry, an alias bomb or nesting over 500 levels;
    the next document is read as usual. A syntax error ends its document: reading resumes at the next line that
    starts a document (`---`), as kubectl splits a stream.
    """
    if not isinstance(text, str):
        raise ArgumentTypeError("the text to parse", "a str (YAML or JSON text)", text)
    as_json = _parse_json(text, source)
    if as_json is not None:
        return as_json
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


class _JsonRefusedError(WorkloadMapError, ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise _JsonRefusedError(f"duplicate key {repeated!r}; remove one of them")
    return found


def _json_constant(name: str) -> float:
    raise _JsonRefusedError(f"a {name} has no JSON form; quote it if it is text")


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _JsonRefusedError(f"a number beyond the range of a double ({text[:40]}) has no JSON form; quote it")
    return value


def _parse_json(text: str, source: str) -> list[Document | DocumentError] | None:
    """One JSON document (what `kubectl get -o json` prints) read by the JSON decoder: the same rules as the YAML
    reader (no repeated key, no number JSON cannot carry, the nesting and expansion bounds) at a fraction of its
    time and memory (PyYAML builds a node per scalar, about 60x the text). None when the text is not one JSON
    document: the YAML reader reads it (a stream, YAML flow style, an integer over the digit limit, ...)."""
    start = text.lstrip()[:1]
    if start not in ("{", "["):
        return None
    try:
        value = json.loads(text, object_pairs_hook=_json_object, parse_constant=_json_constant, parse_float=_json_float)
    except _JsonRefusedError as exc:
        return [DocumentError(source, f"invalid JSON: {exc.message}", 0)]
    except (ValueError, RecursionError):
        return None
    try:
        _check_expansion(value, source, 0)
    except DocumentError as exc:
        return [DocumentError(source, exc.message, 0)]
    return [Document(source, 0, value)]


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
                    _check_expansion(value, source, index)
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


def read_documents(source: str | Path) -> list[Document]:
    """Every document of a file (`-`: standard input); the first problem raises `DocumentError`."""
    label, text = read_source_text(source)
    return parse_documents(text, label)


def read_documents_each(source: str | Path) -> list[Document | DocumentError]:
    """Every document of a file, or the error of each one that cannot be read (`parse_documents_each`); a file
    that cannot be read at all raises `DocumentError`."""
    label, text = read_source_text(source)
    return parse_documents_each(text, label)


def is_directory(path: str | Path) -> bool:
    """`Path.is_dir()` that answers False for a path no file can have (too long, a NUL) instead of raising."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


def iter_files(directory: Path, suffixes: tuple[str, ...] = (".yaml", ".yml", ".json")) -> Iterator[Path]:
    """Files of a directory tree with one of the suffixes, in a stable (sorted) order; hidden ones skipped.

    Hidden means a dot-name below `directory`: the directory's own path may have any (`../defs`,
    `~/.config/wmap/definitions`). A broken symbolic link with one of the suffixes (dangling, or a loop) is
    yielded too, so the reader names it as unreadable instead of it being passed over."""
    for path in sorted(directory.rglob("*")):
        if path.suffix not in suffixes or not (path.is_file() or (path.is_symlink() and not path.exists())):
            continue
        if not any(part.startswith(".") for part in path.relative_to(directory).parts):
            yield path


def unreadable_directories(directory: Path) -> list[tuple[str, str]]:
    """The directories below `directory` (hidden ones skipped, as `iter_files` skips them) that cannot be listed,
    each with why: `iter_files` (`Path.rglob`) passes over them silently, so a caller names them."""
    problems: list[tuple[str, str]] = []

    def failed(error: OSError) -> None:
        problems.append((str(error.filename or directory), error.strerror or str(error)))

    for _root, dirs, _files in os.walk(directory, onerror=failed):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
    return problems


def _check_expansion(value: Any, source: str, index: int) -> None:
    sizes: dict[int, int] = {}

    def size(node: Any, depth: int) -> int:
        if not isinstance(node, (dict, list)):
            return 1
        key = id(node)
        known = sizes.get(key)
        if known is not None:
            return known
        if depth > MAX_DEPTH:
            raise DocumentError(source, f"document {index + 1} is nested more than {MAX_DEPTH} levels deep")
        children = node.values() if isinstance(node, dict) else node
        total = 1
        for child in children:
            total += size(child, depth + 1)
            if total > MAX_EXPANDED_NODES:
                raise DocumentError(
                    source,
                    f"document {index + 1} expands to more than {MAX_EXPANDED_NODES:,} nodes "
                    "(a YAML alias bomb?); refused",
                )
        sizes[key] = total
        return total

    size(value, 0)
