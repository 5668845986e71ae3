"""The built-in catalog precompiled: the typed definitions as one msgpack blob, so start-up decodes one file
instead of parsing 24+ YAML files.

The blob lives in the cache directory (`$WMAP_CACHE_DIR`, else `$XDG_CACHE_HOME/workload-map`, else
`~/.cache/workload-map`) under `catalog/<key>.msgpack`. The key is a 256-bit BLAKE2b digest of everything the
decoded result depends on: the package version, the msgspec version, the source of the model's types (an edited
field changes the wire shape) and every packaged definition file's name and size; the blob holds the very bytes of
the files it was built from, and a start compares them with the files' own (read on every start: a few hundred KB,
far cheaper than parsing them). So a blob is never stale: a definition added, removed or resized gives a new key,
an edit of the same size a blob whose bytes differ, and either way the YAML is parsed again and the blob written.
Comparing the bytes is exact, and cheaper than hashing them was (~6 million instructions of a `describe -f`; issue
19).

With a `check` (the catalog passes the validator), the blob also records which definitions had no validation
errors when it was built, and those decoded objects are marked so (`model.validated`): resolving a catalog workload
then never imports the validation layer. So the key also covers the validator's code: the name, size and
modification time of every module of the packages it runs (validation, jq, model) and of the package's top-level
helpers, as Python's own bytecode cache judges a source file (a `stat` each, no read).

A start reads only the blob's index (each definition's name and root GVK: the registry's index) and the files'
bytes, and keeps the blob open: a definition's own encoding is read and decoded into its typed `Karta` when it is
first asked for (`Definitions.karta`), so a command that reads one workload reads and decodes one of the catalog's
definitions (issue 19: decoding all of them was ~2.5 million instructions of every `describe -f`, the collector
asleep; reading the whole ~1.4 MB blob was ~1.5 ms and ~330 page faults more than its ~0.4 MB index and files). The
file opened at the start is the one read (a blob written over it since, by another version, is a new file), and it
is closed once every definition is decoded. A definition whose encoding does not read back or decode sends the
whole catalog back to its YAML, as a damaged blob does.

The blob also holds the syntax tree of every jq expression of those definitions (`jq.trees`) and what the static
analyses find in it (`jq.facts`: the roots it reads, whether it builds nesting), per definition: they are handed to
the jq parser (`trees.remember`) and the engine (`facts.remember`) when the definition is decoded, and so a run
never lexes, parses or analyses a catalog expression again. So the key also covers the modules that decide them
(`analysis_stamp`: `trees.tree_stamp` and `facts.fact_stamp`, the same way, or the validator's stamp, which lists
them already); an expression whose tree cannot be stored is simply parsed when used, a fact worked out.

The cache is an optimisation only: an unwritable directory, a missing, truncated or undecodable blob all fall back
to the YAML (a bad blob is rewritten), with no message. `WMAP_NO_CATALOG_CACHE=1` turns it off.
"""

from __future__ import annotations

import contextlib
import os
from _thread import allocate_lock
from collections.abc import Callable, Mapping, Sequence
from importlib._bootstrap_external import MAGIC_NUMBER  # loaded at every start (frozen)
from typing import TYPE_CHECKING, Any, Final

import msgspec

from workload_map import _version
from workload_map.jq import facts, stored, trees
from workload_map.model import GVK, Karta, types
from workload_map.model.validated import mark_validated

if TYPE_CHECKING:
    from pathlib import Path

try:  # hashlib's own builtin BLAKE2, without the OpenSSL set-up `import hashlib` pays (~2 ms of every start)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

# Bump when the blob's layout changes in a way the key does not already cover.
_FORMAT = b"wmap-catalog-9"
# what a definition is known by before it is decoded: its name and root GVK (stored as group, version and kind)
Head = tuple[str, GVK | None]
_StoredHead = tuple[str, tuple[str, str, str] | None]
# The blob's layout: the length of its index (8 bytes, big-endian), the index, the bytes of the definition files it
# was built from (one after another, in the index's order), then each definition's own encoding followed by the
# encoded syntax trees of its jq expressions (text -> `trees.encode`) and their static facts (text ->
# `facts.Stored`), one pair of maps. The index holds the files' names and sizes, each definition's head, whether
# each had no validation errors (empty when the blob was built without a check) and where each definition's
# encoding and trees lie after the files (offset, lengths; the trees' length is 0 when the parser cannot be
# stamped). A start reads the index and the files' bytes only; a definition's part is read when it is decoded
# (the rest of the blob, ~1 MB of its ~1.4 MB, is never read by a command that resolves one workload: issue 19).
Index = tuple[
    tuple[str, ...],
    tuple[int, ...],
    tuple[_StoredHead, ...],
    tuple[bool, ...],
    tuple[tuple[int, int, int], ...],
]
_INDEX = msgspec.msgpack.Decoder(Index)
_INDEX_LENGTH: Final = 8
# trees, facts (checked by jq.facts) and generated programs (checked by jq.stored)
_EXPRESSIONS = msgspec.msgpack.Decoder(tuple[dict[str, bytes], dict[str, Any], dict[str, Any]])
# what validation runs: a change in any of these modules may change which definitions are valid
_VALIDATOR_PACKAGES: Final = ("validation", "jq", "model")

Check = Callable[[Sequence[Karta]], Sequence[bool]]
_ENCODER = msgspec.msgpack.Encoder()


# A run works with paths as strings (os.path): importing pathlib (with urllib.parse and ipaddress) costs ~2.5 ms of
# every start (issue 19); `cache_dir` and `blob_path` still answer with a Path for their callers.
def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$WMAP_CACHE_DIR`, else `$XDG_CACHE_HOME/workload-map`, else `~/.cache/workload-map` (the same rule as the
    discovery cache, which lives in a higher layer)."""
    from pathlib import Path

    return Path(_cache_directory(os.environ if environ is None else environ))


def _cache_directory(env: Mapping[str, str]) -> str:
    if env.get("WMAP_CACHE_DIR"):
        return os.path.expanduser(env["WMAP_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "workload-map")


def catalog_key(
    files: Sequence[tuple[str, bytes]], *, validator: bytes | None = None, parser: bytes | None = None
) -> str:
    """The cache key for definition files given as (name, bytes), in the order they are loaded: it covers their
    names and sizes (the blob holds their bytes, which `load_cached` compares); `validator`: the validator's stamp
    (`validator_stamp`), for a blob that records which definitions are valid; `parser`: the jq parser's
    (`analysis_stamp`), for a blob that holds the expressions' syntax trees and facts."""
    digest = blake2b(_FORMAT, digest_size=32)
    # every piece in one msgpack encoding (self-delimiting: no two lists of pieces encode alike), hashed in one
    # update: ~0.15 M instructions fewer than joining length-prefixed pieces in Python (issue 19)
    pieces = (
        _version.__version__,
        msgspec.__version__,
        MAGIC_NUMBER,  # the stored programs' marshalled code is this interpreter's bytecode
        _types_source(),
        validator,  # None: unchecked
        parser,  # None: no trees
        [(name, len(data)) for name, data in files],
    )
    digest.update(_ENCODER.encode(pieces))
    return digest.hexdigest()


def blob_path(key: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where the blob for `key` is kept."""
    from pathlib import Path

    return Path(_blob_file(key, os.environ if environ is None else environ))


def _blob_file(key: str, env: Mapping[str, str]) -> str:
    return os.path.join(_cache_directory(env), "catalog", f"{key}.msgpack")


class _Parts:
    """Where the definitions' parts of one blob are read from: the blob's own open file (kept open until every
    definition is decoded, so a blob replaced or pruned since the start is still the one read), or the bytes
    already read where `os.pread` is not available."""

    __slots__ = ("_base", "_data", "_handle", "trusted")

    def __init__(self, handle: int, base: int, data: bytes | None = None, *, trusted: bool = False) -> None:
        self._handle = handle
        self._base = base
        self._data = data
        self.trusted = trusted  # its generated programs may run (`_trusted`)

    def read(self, offset: int, length: int) -> bytes:
        if self._data is not None:
            return self._data[offset : offset + length]
        if self._handle < 0:
            raise OSError("the blob is closed")
        return os.pread(self._handle, length, self._base + offset)

    def close(self) -> None:
        handle, self._handle = self._handle, -1
        if handle >= 0:
            os.close(handle)

    def __del__(self) -> None:
        try:  # noqa: SIM105 - not contextlib: at interpreter exit it (and `os`) may be gone already
            self.close()
        except Exception:
            pass


class Definitions:
    """The definitions of one load, in order: each one's name and root GVK at hand (`head`), each typed definition
    decoded on first use (`karta`), once: every caller gets the same object."""

    __slots__ = (
        "_bodies",
        "_kartas",
        "_left",
        "_lock",
        "_parts",
        "_rebuild",
        "_trees",
        "_valid",
        "decoded",
        "heads",
        "held",
    )

    def __init__(
        self,
        heads: tuple[Head, ...],
        parts: _Parts | None = None,
        valid: tuple[bool, ...] = (),
        spans: tuple[tuple[int, int, int], ...] = (),
        *,
        kartas: tuple[Karta, ...] | None = None,
        rebuild: Callable[[], tuple[tuple[Karta, ...], tuple[bool, ...]]] | None = None,
    ) -> None:
        self.heads = heads
        self._parts = parts
        self._valid = valid if len(valid) == len(heads) else ()
        # each definition's part after the files: (offset, its encoding's length, its trees' length), the trees
        # right after the encoding (both names for the one tuple of the index: no copy per start)
        self._bodies = self._trees = spans
        self.held: tuple[Any, ...] | None = None  # what a registry holds for these (registry._Pending), made once
        self._kartas: list[Karta | None] = list(kartas) if kartas is not None else [None] * len(heads)
        self._left = 0 if kartas is not None else len(heads)
        self._rebuild = rebuild
        self._lock = allocate_lock()
        self.decoded = 0  # how many were decoded from their encoding (for tests: a lookup decodes only its own)

    def __len__(self) -> int:
        return len(self.heads)

    def karta(self, position: int) -> Karta:
        """The typed definition at `position`, decoded on first use."""
        karta = self._kartas[position]
        if karta is not None:
            return karta
        with self._lock:
            karta = self._kartas[position]
            if karta is None:
                karta = self._decode(position)
                self._left -= 1
                if not self._left and self._parts is not None:  # nothing more to read from the blob
                    self._parts.close()
        return karta

    def all(self) -> tuple[Karta, ...]:
        """Every definition, typed, in order."""
        return tuple(self.karta(position) for position in range(len(self.heads)))

    def _decode(self, position: int) -> Karta:
        offset, length, trees_length = self._bodies[position]  # the trees right after it: one read for both
        try:
            assert self._parts is not None
            data = self._parts.read(offset, length + trees_length)
            if len(data) != length + trees_length:
                raise ValueError("the blob is shorter than its index says")
            view = memoryview(data)
            karta = _BODY.decode(view[:length])
        except Exception:  # damaged: anything the read, the decoder or a model class raises on what it was handed
            return self._from_yaml(position)
        if type(karta) is not Karta or karta.name != self.heads[position][0]:  # not this definition's encoding
            return self._from_yaml(position)
        if trees_length:
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):  # unremembered: parsed when used
                parsed, known, programs = _EXPRESSIONS.decode(view[length:])
                trees.remember(parsed)
                facts.remember(known)
                if self._parts.trusted:
                    stored.remember(programs)
        self.decoded += 1
        if self._valid and self._valid[position]:
            mark_validated((karta,))
        self._kartas[position] = karta
        return karta

    def _from_yaml(self, position: int) -> Karta:
        """A definition that would not decode: the catalog parsed again (and its blob rewritten); the definitions
        not decoded yet are taken from that parse."""
        if self._rebuild is None:
            raise RuntimeError("a definition of the catalog could not be decoded")  # pragma: no cover
        kartas, valid = self._rebuild()
        if len(kartas) != len(self.heads):  # pragma: no cover - the files' bytes are those of the blob
            raise RuntimeError("the catalog's YAML no longer gives the definitions its blob names")
        for index, karta in enumerate(kartas):
            if self._kartas[index] is None:
                self._kartas[index] = karta
                if len(valid) == len(kartas) and valid[index]:
                    mark_validated((karta,))
        self._left = 1  # karta() counts the one asked for: none is left to read
        found = self._kartas[position]
        assert found is not None
        return found


def load_cached(
    files: Sequence[tuple[str, bytes]],
    parse: Callable[[Sequence[tuple[str, bytes]]], tuple[Karta, ...]],
    environ: Mapping[str, str] | None = None,
    check: Check | None = None,
) -> tuple[Karta, ...]:
    """Every definition of `files`, typed (`load_definitions(...).all()`)."""
    return load_definitions(files, parse, environ, check).all()


def load_definitions(
    files: Sequence[tuple[str, bytes]],
    parse: Callable[[Sequence[tuple[str, bytes]]], tuple[Karta, ...]],
    environ: Mapping[str, str] | None = None,
    check: Check | None = None,
) -> Definitions:
    """The definitions of `files`: from the blob for their key (each decoded when first asked for), else
    `parse(files)` (written to the blob for the next run). With `check` (definitions -> whether each has no
    validation errors, run when the blob is built), the objects that passed are marked validated
    (`model.validated`). Errors from `parse` propagate; cache errors never do."""
    env = os.environ if environ is None else environ
    if env.get("WMAP_NO_CATALOG_CACHE") == "1":
        kartas = parse(files)
        return Definitions(_heads(kartas), kartas=kartas)
    stamp = None if check is None else validator_stamp()
    if stamp is None:
        check = None  # the validator's modules cannot be stamped (a zipped package): record no validity
    parser = analysis_stamp(stamp)
    path = _blob_file(catalog_key(files, validator=stamp, parser=parser), env)
    given = tuple((name, data) for name, data in files)

    def rebuild() -> tuple[tuple[Karta, ...], tuple[bool, ...]]:
        """Parse the YAML, record which definitions are valid and their expressions' trees, (re)write the blob."""
        kartas = parse(files)
        valid = () if check is None else tuple(bool(ok) for ok in check(kartas))
        parsed = () if parser is None else tuple(expression_trees((karta,)) for karta in kartas)
        known = tuple(expression_facts(found) for found in parsed)
        made: dict[str, list[Any] | None] = {}  # an expression several definitions share is generated once
        programs = tuple(expression_programs(found, made) for found in parsed)
        try:
            bodies = [_ENCODER.encode(_stored(karta)) for karta in kartas]
        except TypeError:  # pragma: no cover - a value of a type the stored form has no place for: no blob
            bodies = None
        if bodies is not None:
            encoded = [_ENCODER.encode(triple) for triple in zip(parsed, known, programs, strict=True)] or [b""] * len(
                bodies
            )
            stored_heads = tuple(
                (name, None if gvk is None else (gvk.group, gvk.version, gvk.kind)) for name, gvk in _heads(kartas)
            )
            _write(path, _blob(given, stored_heads, valid, bodies, encoded))
        for found, facts_found, programs_found in zip(parsed, known, programs, strict=True):
            trees.remember(found)
            facts.remember(facts_found)
            stored.remember(programs_found)
        return kartas, valid

    found = _open_blob(path, given)
    if found is None:  # not built yet, unreadable, damaged, or built from other bytes: parse the YAML and (re)write it
        kartas, valid = rebuild()
        if len(valid) == len(kartas):
            mark_validated(karta for karta, ok in zip(kartas, valid, strict=True) if ok)
        return Definitions(_heads(kartas), kartas=kartas)
    parts, (_, _, stored_heads, valid, spans) = found
    heads = tuple(
        (name, None if gvk is None else GVK(group=gvk[0], version=gvk[1], kind=gvk[2])) for name, gvk in stored_heads
    )
    return Definitions(heads, parts, valid, spans, rebuild=rebuild)


def _blob(
    files: Sequence[tuple[str, bytes]],
    heads: Sequence[_StoredHead],
    valid: Sequence[bool],
    bodies: Sequence[bytes],
    expressions: Sequence[bytes],
) -> bytes:
    """The blob's bytes (the layout is described at `Index`)."""
    spans: list[tuple[int, int, int]] = []
    offset = 0
    for body, encoded in zip(bodies, expressions, strict=True):
        spans.append((offset, len(body), len(encoded)))
        offset += len(body) + len(encoded)
    index = _ENCODER.encode(
        (tuple(name for name, _ in files), tuple(len(data) for _, data in files), tuple(heads), tuple(valid), spans)
    )
    pieces = [len(index).to_bytes(_INDEX_LENGTH, "big"), index, *(data for _, data in files)]
    for body, encoded in zip(bodies, expressions, strict=True):
        pieces += (body, encoded)
    return b"".join(pieces)


def _open_blob(path: str, files: Sequence[tuple[str, bytes]]) -> tuple[_Parts, Index] | None:
    """The blob at `path` opened and its index read, when it was built from exactly these files' bytes (the key
    covers their names and sizes; the bytes are compared here), else None (missing, unreadable, damaged, stale)."""
    try:
        handle = os.open(path, _READ_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        length = int.from_bytes(os.read(handle, _INDEX_LENGTH), "big")
        if length > _MAX_INDEX:
            raise ValueError("damaged: no index is that long")
        encoded = os.read(handle, length)
        if len(encoded) != length:
            raise ValueError("the blob is shorter than its index says")
        index = _INDEX.decode(encoded)
        names, sizes, heads, _, spans = index
        if len(names) != len(files) or len(sizes) != len(files) or len(spans) != len(heads):
            raise ValueError("the blob was built from other files")
        if not _same_files(handle, files, names, sizes):
            raise ValueError("the blob was built from other files or bytes")
        base = _INDEX_LENGTH + length + sum(sizes)
        trusted = _trusted(handle)
        if not _PREAD:
            os.lseek(handle, base, os.SEEK_SET)
        parts = (
            _Parts(handle, base, trusted=trusted) if _PREAD else _Parts(-1, base, _read_rest(handle), trusted=trusted)
        )
    except (OSError, ValueError, msgspec.DecodeError, msgspec.ValidationError):
        os.close(handle)
        return None
    if not _PREAD:
        os.close(handle)
    return parts, index


def _same_files(handle: int, files: Sequence[tuple[str, bytes]], names: Sequence[str], sizes: Sequence[int]) -> bool:
    """Whether `files` are the ones the index names, with these sizes (the key says so, unless the blob is
    damaged), and the blob's next bytes (from `handle`'s position on) are their bytes, one after another. Read 64 KiB
    at a time, each piece compared in place (`startswith` at an offset: a memcmp) and dropped: the ~400 KB read at
    once were ~100 page faults of memory made for them, ~0.3 ms of every start (issue 19)."""
    chunk = b""
    at = 0
    for (name, data), stored_name, size in zip(files, names, sizes, strict=True):
        if name != stored_name or len(data) != size:
            return False
        if at + size <= len(chunk):  # the whole file in the piece at hand
            if not chunk.startswith(data, at):
                return False
            at += size
            continue
        done = 0
        while done < size:
            if at == len(chunk):
                chunk = os.read(handle, _CHUNK)
                at = 0
                if not chunk:
                    return False
            take = min(size - done, len(chunk) - at)
            if not chunk.startswith(data if take == size else memoryview(data)[done : done + take], at):
                return False
            done += take
            at += take
    return True


def _trusted(handle: int) -> bool:
    """Whether the generated programs of the open blob may run: it is a regular file owned by the user running
    this process and writable by no one else (as a `__pycache__` file that user could have written). Elsewhere
    (another owner, group- or world-writable, a system without user ids) the blob's data is read, its code never."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:
        return False
    try:
        status = os.fstat(handle)
    except OSError:
        return False
    return status.st_uid == geteuid() and status.st_mode & 0o170022 == 0o100000  # S_IFREG, no group/other write


def _read_rest(handle: int) -> bytes:
    """The rest of an open file (where there is no `os.pread`, the definitions' parts are read at the start)."""
    chunks = []
    while chunk := os.read(handle, _CHUNK):
        chunks.append(chunk)
    return b"".join(chunks)


_MAX_INDEX: Final = 1 << 24
_PREAD: Final = hasattr(os, "pread")


def _heads(kartas: Sequence[Karta]) -> tuple[Head, ...]:
    return tuple((karta.name, karta.root_gvk) for karta in kartas)


# --- a definition's stored form ---------------------------------------------------------------------------------
# A definition is stored as its construction: a model Struct as the extension [class name, {field: value}], a
# tuple as the extension of its items, lists, string-keyed dicts and scalars as msgpack's own. Decoding calls the
# model's classes with the values they were built with, so no typed decoder is made: msgspec's `Decoder(Karta)`
# reads the annotations of the model's ~30 classes first, ~5 million instructions of every `describe -f` (issue
# 19). The key covers the model types' source, so the classes are the ones written.
_STRUCT: Final = 1
_TUPLE: Final = 2
_SCALARS: Final = (str, int, float, bool, type(None))


def _stored(value: Any) -> Any:
    """`value` in its stored form (raises TypeError for a value of no stored form)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is tuple:
        return msgspec.msgpack.Ext(_TUPLE, _ENCODER.encode([_stored(item) for item in value]))
    if kind is list:
        return [_stored(item) for item in value]
    if kind is dict and all(type(key) is str for key in value):
        return {key: _stored(item) for key, item in value.items()}
    if isinstance(value, msgspec.Struct) and kind.__module__ == types.__name__:
        fields = {name: _stored(getattr(value, name)) for name in kind.__struct_fields__}
        return msgspec.msgpack.Ext(_STRUCT, _ENCODER.encode((kind.__name__, fields)))
    raise TypeError(f"a {kind.__name__} has no stored form")


def _revive(code: int, data: memoryview) -> Any:
    """A stored tuple or model Struct, made again."""
    if code == _TUPLE:
        return tuple(_BODY.decode(data))
    if code != _STRUCT:
        raise ValueError(f"no stored form has the extension code {code}")
    name, fields = _BODY.decode(data)
    return _model_classes()[name](**fields)


_BODY = msgspec.msgpack.Decoder(ext_hook=_revive)
_CLASSES: dict[str, type[msgspec.Struct]] = {}


def _model_classes() -> dict[str, type[msgspec.Struct]]:
    if not _CLASSES:
        _CLASSES.update(
            (name, kind)
            for name, kind in vars(types).items()
            if isinstance(kind, type) and issubclass(kind, msgspec.Struct) and kind.__module__ == types.__name__
        )
    return _CLASSES


def read_file(path: str) -> bytes:
    """The bytes of a package file, read with `os.read`: a file object's buffering costs more than the read itself
    for the 50-odd small files every start compares (~0.3 ms; issue 19). The first read asks for 64 KiB, more than
    any definition file holds, without asking `fstat` for the size first: a shorter read is the end of a regular
    file, and the buffer is shrunk in place to what was read (a `stat` result is ~6,000 instructions, ~0.3 million
    for the catalog's files). A file that fills the first read is read on to its end."""
    handle = os.open(path, _READ_FLAGS)
    try:
        first = os.read(handle, _CHUNK)
        if len(first) < _CHUNK:
            return first
        chunks = [first]
        while chunk := os.read(handle, _CHUNK):
            chunks.append(chunk)
    finally:
        os.close(handle)
    return b"".join(chunks)


_CHUNK = 1 << 16
_READ_FLAGS: Final = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def expression_trees(kartas: Sequence[Karta]) -> dict[str, bytes]:
    """The encoded syntax tree of every jq expression of the definitions that parses: their own
    (`model.jq_fields`) and the plain paths their status reasons read (`resolve.reasons.reason_expressions`)."""
    # Imported here: only when a blob is built (the walker, and the parser's own work, which a run then skips)
    from workload_map.jq.errors import JqError
    from workload_map.jq.parser import parse
    from workload_map.model import jq_fields
    from workload_map.resolve.reasons import reason_expressions

    found: dict[str, bytes] = {}
    for karta in kartas:
        expressions = [expression for _path, expression in jq_fields(karta)]
        for component in karta.components:
            if component.status_definition is not None:
                expressions.extend(reason_expressions(component.status_definition))
        for expression in expressions:
            if expression in found:
                continue
            try:
                data = trees.encode(parse(expression))
            except JqError:  # not a program: parsed (and refused) when used, as without a blob
                continue
            if data is not None:
                found[expression] = data
    return found


def expression_facts(found: Mapping[str, bytes]) -> dict[str, facts.Stored]:
    """The static facts (`jq.facts`) of the expressions whose trees are stored, as a run works them out."""
    from workload_map.jq.engine import expression_facts as facts_of  # only when a blob is built

    stored: dict[str, facts.Stored] = {}
    for expression in found:
        fact = facts_of(expression)
        if fact is not None:
            stored[expression] = fact
    return stored


def expression_programs(found: Mapping[str, bytes], made: dict[str, list[Any] | None] | None = None) -> dict[str, Any]:
    """The stored programs (`jq.stored`) of the expressions whose trees are stored, as this package's generator
    makes them (plain paths too: a batch whose every expression has one runs without the fast path's set-up);
    `made`: the programs made so far for other definitions (text -> stored form, None: not generated)."""
    from workload_map.jq.codegen import stored_program  # only when a blob is built

    made = {} if made is None else made
    programs: dict[str, Any] = {}
    for expression in found:
        if expression not in made:
            program = stored_program(expression)
            made[expression] = None if program is None else list(program)
        stored_form = made[expression]
        if stored_form is not None:
            programs[expression] = stored_form
    return programs


def analysis_stamp(validator: bytes | None) -> bytes | None:
    """The key's stamp of the modules that decide the stored trees and facts (the parser's, `trees.tree_stamp`,
    and the analyses', `facts.fact_stamp`): all of them are jq modules, which the validator's stamp lists already
    (every module of the package, by the same name, size and modification time), so with it they are not stamped
    again; without it, their own stamps. None when they cannot be stamped (then nothing is stored)."""
    if validator is not None:
        return b"the jq modules: in the validator's stamp"
    tree, fact, program = trees.tree_stamp(), facts.fact_stamp(), stored.program_stamp()
    return None if tree is None or fact is None or program is None else b"\n".join((tree, fact, program))


def _write(path: str, data: bytes) -> None:
    """Write atomically (a reader never sees half a blob); give up silently when the directory is not writable."""
    import tempfile  # only when a blob is written (random and its hashing come with it: ~3 ms of a start)

    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".catalog-", dir=directory)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            _unlink(temporary)
            raise
        _prune(directory, keep=path)
    except OSError:
        pass


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


_KEPT = 4


def _prune(directory: str, keep: str) -> None:
    """Drop all but the newest few blobs: every definition edit makes a new key, and a few are kept so that two
    installed versions sharing one cache directory do not rewrite each other's blob on every run."""
    with os.scandir(directory) as listing:
        found = [(entry.stat().st_mtime, entry.path) for entry in listing if entry.name.endswith(".msgpack")]
    blobs = [path for _, path in sorted(found, reverse=True)]
    for old in blobs[_KEPT:]:
        if old != keep:
            _unlink(old)


def validator_stamp() -> bytes | None:
    """(name, size, mtime) of every module of the validator's packages and of the top-level helpers; None when
    they cannot be listed (one `package/module.py:size:mtime_ns` line each, as `jq.trees.module_stamp` writes
    them: the stamps of the jq analyses are lines of it)."""
    # abspath, not realpath: the stamp only has to change with the files it lists, and a symbolic link on the way
    # lists the same files; realpath's walk of every component is ~0.2 M instructions of every start (issue 19)
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    stamps: list[str] = []
    try:
        prefix = os.path.join(package, "")
        for name, directory in ((os.path.basename(package), package), *((n, prefix + n) for n in _VALIDATOR_PACKAGES)):
            with os.scandir(directory) as listing:
                # by name (unique in a directory, so a stat is never compared), in comprehensions: ~0.2 M
                # instructions fewer than a generator, a sort key and a loop (issue 19)
                found = [(entry.name, entry.stat()) for entry in listing if entry.name.endswith(".py")]
            found.sort()
            stamps += [f"{name}/{file}:{stat.st_size}:{stat.st_mtime_ns}" for file, stat in found]
    except OSError:
        return None
    return "\n".join(stamps).encode()


def _types_source() -> bytes:
    """The model types' source: a changed field changes the decoded shape even under the same version number."""
    try:
        return read_file(types.__file__)  # __file__ None (a frozen module): TypeError
    except (OSError, TypeError):
        return b""
