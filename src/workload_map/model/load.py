"""Loading Karta definitions from dicts, text, files, directories and streams.

Two entry points with two policies:
- `load_definitions(source)` is strict: the first bad definition raises `DefinitionError` naming the YAML field
  path (`spec.structureDefinition.childComponents[1].instanceIdPath`) and, for a typo, the field meant.
- `scan_definitions(source)` is for bulk sources (a directory, a cluster's list): a bad definition is reported in
  `LoadResult.problems` and the rest load.
"""

from __future__ import annotations

import difflib
import json
import re
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import msgspec

from workload_map._jsontype import json_type
from workload_map._regex import LazyPattern
from workload_map.errors import ArgumentTypeError, WorkloadMapError
from workload_map.model.types import API_VERSION, KIND, Karta
from workload_map.model.yamlio import (
    Document,
    DocumentError,
    is_directory,
    iter_files,
    parse_documents_each,
    read_documents_each,
)

DefinitionSource = Union[str, Path, Mapping[str, Any], Karta, Iterable[Any]]


class DefinitionError(WorkloadMapError, ValueError):
    """A definition that cannot be loaded: where it came from, the YAML field path, and what to do.

    `unreadable` is True when the source itself could not be read or parsed as YAML/JSON (no definition in it
    could be looked at), as opposed to one definition in it being wrong.
    """

    def __init__(self, source: str, message: str, path: str = "", *, unreadable: bool = False) -> None:
        self.source = source
        self.path = path
        self.message = message
        self.unreadable = unreadable
        where = f" at {path}" if path else ""
        super().__init__(f"{source}{where}: {message}")


@dataclass
class LoadResult:
    """What a bulk load found: the definitions, the problems, and both in source order (`items`)."""

    definitions: list[Karta] = field(default_factory=list)
    problems: list[DefinitionError] = field(default_factory=list)
    # (label, definition or problem) in the order met; the label names the file and document.
    items: list[tuple[str, Karta | DefinitionError]] = field(default_factory=list)

    def add(self, label: str, item: Karta | DefinitionError) -> None:
        if isinstance(item, Karta):
            self.definitions.append(item)
        else:
            self.problems.append(item)
        self.items.append((label, item))


def load_definitions(source: DefinitionSource) -> list[Karta]:
    """Every definition in `source`; raises `DefinitionError` on the first one that is not valid."""
    result = _load(source, strict=True)
    if not result.definitions and _is_one_input(source):
        raise DefinitionError(_label(source), NO_DEFINITIONS)
    return result.definitions


def scan_definitions(source: DefinitionSource) -> LoadResult:
    """Every loadable definition in `source`, with a problem entry for each one skipped."""
    return _load(source, strict=False)


def load_definition(source: DefinitionSource) -> Karta:
    """Exactly one definition."""
    definitions = load_definitions(source)
    if not definitions:
        raise DefinitionError(_label(source), NO_DEFINITIONS)
    if len(definitions) != 1:
        raise DefinitionError(_label(source), f"expected one definition, found {len(definitions)}")
    return definitions[0]


NO_DEFINITIONS = "no definitions found (the input is empty)"


def _is_one_input(source: DefinitionSource) -> bool:
    """A file or a text: where an empty result means the user gave us nothing (a directory may be empty)."""
    if isinstance(source, Path) or (isinstance(source, str) and _looks_like_path(source)):
        return not is_directory(source)
    return isinstance(source, str)


def karta_from_dict(value: Any, source: str = "<dict>") -> Karta:
    """A definition from a plain value: a whole `kind: Karta` object, or a bare spec."""
    if not isinstance(value, Mapping):
        raise DefinitionError(source, f"a definition must be a mapping, not {_json_type(value)}")
    value = dict(value)
    if "structureDefinition" in value and "kind" not in value:
        value = {"kind": KIND, "apiVersion": API_VERSION, "metadata": {"name": ""}, "spec": value}
    else:
        # A whole object whose header was left out (`kubectl apply` would need it; we do not).
        spec = value.get("spec")
        if "kind" not in value and isinstance(spec, Mapping) and "structureDefinition" in spec:
            value = {"kind": KIND, **value}
        if "apiVersion" not in value and value.get("kind") == KIND:
            value = {"apiVersion": API_VERSION, **value}
    kind = value.get("kind")
    if kind in ("KartaList", "List"):
        raise DefinitionError(source, f"a {kind}'s items must be a list of definitions", "items")
    if kind is None:
        raise DefinitionError(source, f"kind is missing: this is not a Karta definition (kind: {KIND})", "kind")
    if kind != KIND:
        raise DefinitionError(source, f"kind is {_brief(kind)}, not {KIND!r}: this is not a Karta definition", "kind")
    api_version = value.get("apiVersion")
    if api_version != API_VERSION:
        raise DefinitionError(
            source, f"apiVersion is {_brief(api_version)}; this tool reads {API_VERSION!r}", "apiVersion"
        )
    _drop_null_defaults(value)
    try:
        karta = msgspec.convert(value, Karta, strict=True)
    except msgspec.ValidationError as exc:
        raise _explain(exc, source, value) from None
    if karta.status is not None:
        karta = msgspec.structs.replace(karta, status=None)
    return karta


def _brief(value: Any) -> str:
    """A raw value for a message: a short repr of a string or a small number, else its type (a document's value may
    be nested thousands deep, or an integer too long to print)."""
    if isinstance(value, str):
        return repr(value) if len(value) <= 80 else repr(value[:77] + "...")
    if value is None or isinstance(value, bool) or (isinstance(value, int | float) and abs(value) < 10**30):
        return repr(value)
    return _json_type(value)


_DEFAULTED_CONDITION_FIELDS = ("typeFieldName", "statusFieldName", "messageFieldName", "reasonFieldName")


def _drop_null_defaults(value: dict[str, Any]) -> None:
    """`messageFieldName: null` means the CRD default, as on the API server (nulls are pruned, then defaulted).

    Copies what it changes; the caller's dict is left alone. Anything malformed is left for msgspec to report.
    """
    spec = value.get("spec")
    structure = spec.get("structureDefinition") if isinstance(spec, Mapping) else None
    if not isinstance(structure, Mapping):
        return
    components: list[Any] = [structure.get("rootComponent")]
    children = structure.get("childComponents")
    if isinstance(children, list):
        components += children
    if not any(_null_condition_field(c) for c in components):
        return
    structure = dict(structure)
    value["spec"] = {**spec, "structureDefinition": structure}  # type: ignore[dict-item]
    fixed = [_without_null_condition_fields(c) for c in components]
    structure["rootComponent"] = fixed[0]
    if isinstance(children, list):
        structure["childComponents"] = fixed[1:]


def _conditions_of(component: Any) -> Any:
    status = component.get("statusDefinition") if isinstance(component, Mapping) else None
    return status.get("conditionsDefinition") if isinstance(status, Mapping) else None


def _null_condition_field(component: Any) -> bool:
    conditions = _conditions_of(component)
    return isinstance(conditions, Mapping) and any(
        k in conditions and conditions[k] is None for k in _DEFAULTED_CONDITION_FIELDS
    )


def _without_null_condition_fields(component: Any) -> Any:
    if not _null_condition_field(component):
        return component
    conditions = {
        k: v for k, v in _conditions_of(component).items() if not (k in _DEFAULTED_CONDITION_FIELDS and v is None)
    }
    status = {**component["statusDefinition"], "conditionsDefinition": conditions}
    return {**component, "statusDefinition": status}


# --- sources ------------------------------------------------------------------------------------------------


def _load(source: DefinitionSource, *, strict: bool) -> LoadResult:
    result = LoadResult()
    for label, value in _values(source, result, strict=strict):
        if isinstance(value, Karta):
            result.add(label, value)
            continue
        for item_label, item in _unwrap_lists(label, value):
            try:
                result.add(item_label, karta_from_dict(item, item_label))
            except DefinitionError as exc:
                if strict:
                    raise
                result.add(item_label, exc)
    return result


def _values(source: DefinitionSource, result: LoadResult, *, strict: bool) -> Iterable[tuple[str, Any]]:
    if isinstance(source, Karta):
        yield "<definition>", source
    elif isinstance(source, Mapping):
        yield "<dict>", source
    elif isinstance(source, Path) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        if is_directory(path):
            files = list(iter_files(path))
            for file in files:
                yield from _documents_of(read_documents_each, file, result, strict=strict)
        else:
            yield from _documents_of(read_documents_each, path, result, strict=strict)
    elif isinstance(source, str):
        yield from _documents_of(lambda text: parse_documents_each(text, "<text>"), source, result, strict=strict)
    else:
        if isinstance(source, bytes | bytearray) or not isinstance(source, Iterable):
            raise ArgumentTypeError("a definition source", _SOURCE_TYPES, source)
        for index, item in enumerate(source):
            if isinstance(item, (str, Path, Karta)):  # several files, texts or definitions
                yield from _values(item, result, strict=strict)
            else:
                yield f"<item {index + 1}>", item


_SOURCE_TYPES = "a path, YAML/JSON text, a mapping, a Karta or an iterable of them (decode bytes first)"


def _documents_of(
    reader: typing.Callable[[Any], list[Document | DocumentError]],
    arg: Any,
    result: LoadResult,
    *,
    strict: bool,
) -> Iterable[tuple[str, Any]]:
    """The (label, value) of every document; a document that cannot be read is a problem of its own (the others
    still load) unless `strict` or no document of the source could be read (the source is then unreadable)."""
    try:
        items = reader(arg)
    except DocumentError as exc:
        error = DefinitionError(exc.source, exc.message, unreadable=True)
        if strict:
            raise error from None
        result.add(exc.source, error)
        return
    failures = [item for item in items if isinstance(item, DocumentError)]
    if failures and (strict or len(failures) == len(items)):
        error = DefinitionError(failures[0].source, failures[0].message, unreadable=True)
        if strict:
            raise error from None
        result.add(failures[0].source, error)
        return
    many = len(items) > 1
    for item in items:
        if isinstance(item, DocumentError):
            result.add(item.label, DefinitionError(item.label, item.message))
            continue
        yield (item.label if many else item.source), item.value


def _unwrap_lists(label: str, value: Any) -> Iterable[tuple[str, Any]]:
    """A `kind: KartaList` (or a `kind: List` as kubectl prints it) yields its items."""
    if isinstance(value, Mapping) and value.get("kind") in ("KartaList", "List") and "items" in value:
        items = value.get("items") or []
        if not isinstance(items, list):
            yield label, value
            return
        for index, item in enumerate(items):
            yield f"{label} items[{index}]", item
    else:
        yield label, value


def _looks_like_path(text: str) -> bool:
    """A string is a path unless it is plainly document text (several lines, or inline JSON)."""
    return "\n" not in text and len(text) < 4096 and not text.lstrip().startswith(("{", "["))


def loads_definitions(text: str, source: str = "<text>") -> list[Karta]:
    """Every definition in YAML/JSON text (never taken for a path)."""
    if not isinstance(text, str):
        raise ArgumentTypeError("the text of loads_definitions", "a str (YAML or JSON text)", text)
    result = LoadResult()
    for label, value in _documents_of(lambda t: parse_documents_each(t, source), text, result, strict=True):
        for item_label, item in _unwrap_lists(label, value):
            result.definitions.append(karta_from_dict(item, item_label))
    if not result.definitions:
        raise DefinitionError(source, NO_DEFINITIONS)
    return result.definitions


def _label(source: DefinitionSource) -> str:
    return str(source) if isinstance(source, (str, Path)) and _looks_like_path(str(source)) else "<definition>"


# --- error messages -----------------------------------------------------------------------------------------

_MSGSPEC_PATH = LazyPattern(r" - at `\$(?P<path>[^`]*)`$")
_MSGSPEC_KEY = LazyPattern(r" - at `key` in `\$(?P<path>[^`]*)`$")
_UNKNOWN_FIELD = LazyPattern(r"Object contains unknown field `(?P<name>[^`]*)`")
_MISSING_FIELD = LazyPattern(r"Object missing required field `(?P<name>[^`]*)`")
_EXPECTED = LazyPattern(r"Expected `(?P<want>[^`]*)`, got `(?P<got>[^`]*)`")


def _explain(exc: msgspec.ValidationError, source: str, value: Any = None) -> DefinitionError:
    text = str(exc)
    if key := _MSGSPEC_KEY.search(text):
        path = key.group("path").lstrip(".")
        return DefinitionError(source, "a key is not a string: quote it", path)
    match = _MSGSPEC_PATH.search(text)
    raw_path = match.group("path") if match else ""
    message = text[: match.start()] if match else text
    if raw_path.endswith("[...]"):
        raw_path = _name_map_key(value, raw_path)
    path = raw_path.lstrip(".")
    if unknown := _UNKNOWN_FIELD.match(message):
        name = unknown.group("name")
        full = f"{path}.{name}" if path else name
        allowed = _fields_at(raw_path)
        hint = _did_you_mean(name, allowed)
        listing = f" (allowed: {', '.join(allowed)})" if allowed and not hint else ""
        return DefinitionError(source, f"unknown field {name!r}{hint}{listing}", full)
    if missing := _MISSING_FIELD.match(message):
        name = missing.group("name")
        full = f"{path}.{name}" if path else name
        return DefinitionError(source, f"required field {name!r} is missing", full)
    if expected := _EXPECTED.match(message):
        want = _TYPE_WORDS.get(expected.group("want"), expected.group("want"))
        got = _TYPE_WORDS.get(expected.group("got"), expected.group("got"))
        hint = _quote_hint(path, got, _value_at(value, raw_path)) if want == "a string" else ""
        return DefinitionError(source, f"must be {want}, not {got}{hint}", path)
    return DefinitionError(source, message.strip(), path)


# Fields holding jq expressions (the last name of the YAML path; list indexes stripped).
_JQ_FIELDS = frozenset({"expression", "path", "idPath", "keyPath", "instanceIdPath", "groupByKeyPaths", "filters"})


def _quote_hint(path: str, got: str, raw: Any) -> str:
    """What to write instead of an unquoted scalar where a string is needed."""
    if got not in ("an integer", "a number", "a boolean", "null"):
        return ""
    field_name = re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[-1]
    try:
        literal = "null" if raw is None else json.dumps(raw)
    except ValueError:  # an integer too long to print (past 4300 digits): no literal to suggest
        return ""
    if field_name in _JQ_FIELDS or field_name.endswith("Path"):
        return f"; jq expressions are strings: quote it ('{literal}')"
    if field_name == "value" and ".suspendDefinition." in path:
        return f"; the value is a JSON literal held in a string: quote it ('{literal}')"
    if isinstance(raw, bool):
        # YAML 1.1 reads True/yes/on unquoted as a boolean.
        return f'; YAML reads it as a boolean: quote it ("{"True" if raw else "False"}")'
    return f'; quote it ("{literal}")'


def _value_at(value: Any, raw_path: str) -> Any:
    """The raw value at a msgspec error path (`.spec.x[0].y`), or None when it cannot be followed."""
    current = value
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", raw_path):
        try:
            current = current[int(index)] if index else current[name]
        except (KeyError, IndexError, TypeError):
            return None
    return current


def _name_map_key(value: Any, raw_path: str) -> str:
    """msgspec says `matchLabels[...]` for a bad map value: name the first key whose value is not a string."""
    prefix = raw_path[: -len("[...]")]
    mapping = _value_at(value, prefix)
    if isinstance(mapping, Mapping):
        for key, item in mapping.items():
            if not isinstance(key, str) or not isinstance(item, str):
                return f"{prefix}.{key}"
    return prefix


_TYPE_WORDS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
    "str | null": "a string",
    "object | null": "a mapping",
    "array | null": "a list",
}


def _did_you_mean(name: str, allowed: list[str]) -> str:
    close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _fields_at(raw_path: str) -> list[str]:
    """The wire field names allowed at a msgspec error path such as `.spec.structureDefinition`."""
    current: Any = Karta
    for token in re.findall(r"\.([^.\[]+)|\[(\d+)\]", raw_path):
        name, index = token
        current = _unwrap_optional(current)
        if index:
            args = typing.get_args(current)
            current = args[0] if args else None
            continue
        current = _field_type(current, name)
        if current is None:
            return []
    current = _unwrap_optional(current)
    info = getattr(current, "__struct_encode_fields__", None)
    return sorted(info) if info else []


def _field_type(struct: Any, wire_name: str) -> Any:
    encode = getattr(struct, "__struct_encode_fields__", None)
    names = getattr(struct, "__struct_fields__", None)
    if not encode or not names:
        return None
    try:
        attribute = names[list(encode).index(wire_name)]
    except ValueError:
        return None
    return typing.get_type_hints(struct).get(attribute)


def _unwrap_optional(tp: Any) -> Any:
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) in (Union, getattr(__import__("types"), "UnionType", None)) and len(args) == 1:
        return args[0]
    return tp


_YAML_TYPE_WORDS = {
    "array": "a list",
    "string": "a string",
    "boolean": "a boolean",
    "number": "a number",
    "null": "null",
}


def _json_type(value: Any) -> str:
    """A value's type in the words of a YAML document (`a list`, ...); the Python type name of anything else."""
    return _YAML_TYPE_WORDS.get(json_type(value), type(value).__name__)
