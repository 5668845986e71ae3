"""Reading YAML/JSON documents safely: the one place that turns bytes into plain Python values.

Used for definitions and for workload manifests alike. Every failure becomes a `DocumentError` whose message
names the source and line, never a parser traceback. Two hostile inputs are handled on purpose: an alias bomb
("billion laughs") loads cheaply with PyYAML because aliases share objects, but anything that walks the result
would expand it, so the expanded size is measured (linearly, memoised by identity) and refused past a bound;
and an oversized input is refused while it is read (`workload_map._io`: the bytes read are counted, so devices,
pipes and FIFOs are bounded too), before parsing.

Three readers, tried in turn: one JSON document goes to the JSON decoder; a YAML text to the fast reader of the
manifest subset (`model.yaml_subset`: pure Python, so PyYAML is never imported for it); a text it declines to the
PyYAML path (`model.pyyaml_reader`), imported then, which holds every rule and every error message. The first two
give exactly what the PyYAML path would (tests/unit/test_yaml_subset.py).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map._io import InputError, read_input_text
from workload_map._limits import MAX_DEPTH, MAX_EXPANDED_NODES, MAX_INPUT_BYTES, STREAM_TIMEOUT
from workload_map.errors import ArgumentTypeError, WorkloadMapError
from workload_map.model import yaml_subset

if TYPE_CHECKING:  # pathlib only where a directory is walked: ~2.5 ms of every start (issue 19)
    from pathlib import Path

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
    fast = yaml_subset.read_stream(text)
    if fast is not None:
        return [Document(source, index, value) for index, value in fast]
    from workload_map.model import pyyaml_reader  # PyYAML: only for a text the fast reader declines

    return pyyaml_reader.parse_stream(text, source)


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
        check_expansion(value, source, 0)
    except DocumentError as exc:
        return [DocumentError(source, exc.message, 0)]
    return [Document(source, 0, value)]


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
    from pathlib import Path

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


def check_expansion(value: Any, source: str, index: int) -> None:
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
