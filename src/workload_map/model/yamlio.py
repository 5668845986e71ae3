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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import yaml

from workload_map._io import MAX_INPUT_BYTES, STREAM_TIMEOUT, InputError, read_input_text
from workload_map.errors import WorkloadMapError

try:
    _BaseLoader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """The safe loader, refusing a mapping that repeats a key (PyYAML would silently keep the last one), and
    reading unquoted timestamps as the strings they are in Kubernetes objects.

    A repeated key in a definition is a lost matcher or path; kubectl refuses such manifests too.
    """

    yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, Any]]]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                continue
            key = key_node.value
            if key in seen:
                mark = key_node.start_mark
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}; remove one of them", mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


# Expanded node count past which a document is treated as an alias bomb. A large `helm template` output has
# well under a million nodes; a billion-laughs document has billions.
MAX_EXPANDED_NODES = 5_000_000


class DocumentError(WorkloadMapError, ValueError):
    """A source that cannot be read as YAML/JSON documents."""

    def __init__(self, source: str, message: str) -> None:
        self.source = source
        self.message = message
        super().__init__(f"{source}: {message}")


@dataclass(frozen=True)
class Document:
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
    """Every non-empty document of a YAML (or JSON) stream, in order."""
    documents: list[Document] = []
    try:
        for index, value in enumerate(yaml.load_all(io.StringIO(text), Loader=_Loader)):
            if value is None:
                continue
            _check_expansion(value, source, index)
            documents.append(Document(source, index, value))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise DocumentError(source, f"invalid YAML{where}: {problem}") from None
    except yaml.YAMLError as exc:
        raise DocumentError(source, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise DocumentError(source, "document is nested too deeply") from None
    return documents


def read_documents(source: str | Path) -> list[Document]:
    label, text = read_source_text(source)
    return parse_documents(text, label)


def iter_files(directory: Path, suffixes: tuple[str, ...] = (".yaml", ".yml", ".json")) -> Iterator[Path]:
    """Files of a directory tree with one of the suffixes, in a stable (sorted) order; hidden ones skipped.

    Hidden means a dot-name below `directory`: the directory's own path may have any (`../defs`,
    `~/.config/wmap/definitions`)."""
    for path in sorted(directory.rglob("*")):
        if not (path.suffix in suffixes and path.is_file()):
            continue
        if not any(part.startswith(".") for part in path.relative_to(directory).parts):
            yield path


def _check_expansion(value: Any, source: str, index: int) -> None:
    sizes: dict[int, int] = {}

    def size(node: Any, depth: int) -> int:
        if not isinstance(node, (dict, list)):
            return 1
        key = id(node)
        known = sizes.get(key)
        if known is not None:
            return known
        if depth > 500:
            raise DocumentError(source, f"document {index + 1} is nested more than 500 levels deep")
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
