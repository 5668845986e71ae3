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

The blob also holds the syntax tree of every jq expression of those definitions (`jq.trees`): a run hands them
to the jq parser (`trees.remember`) and so never lexes or parses a catalog expression again. So the key also
covers the parser (`trees.tree_stamp`: the modules that decide what tree a text parses to and the node classes),
the same way; an expression whose tree cannot be stored is simply parsed when used.

The cache is an optimisation only: an unwritable directory, a missing, truncated or undecodable blob all fall back
to the YAML (a bad blob is rewritten), with no message. `WMAP_NO_CATALOG_CACHE=1` turns it off.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

import msgspec

from workload_map import _version
from workload_map.jq import trees
from workload_map.model import Karta, types
from workload_map.model.validated import mark_validated

if TYPE_CHECKING:
    from pathlib import Path

try:  # hashlib's own builtin BLAKE2, without the OpenSSL set-up `import hashlib` pays (~2 ms of every start)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

# Bump when the blob's layout changes in a way the key does not already cover.
_FORMAT = b"wmap-catalog-4"
# the definition files it was built from (name, bytes), the definitions, for each whether it had no validation
# errors (empty when the blob was built without a check), and the syntax trees of their jq expressions (text ->
# `trees.encode`; empty when the parser cannot be stamped)
_DECODER = msgspec.msgpack.Decoder(
    tuple[tuple[tuple[str, bytes], ...], tuple[Karta, ...], tuple[bool, ...], dict[str, bytes]]
)
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
    (`trees.tree_stamp`), for a blob that holds the expressions' syntax trees."""
    digest = blake2b(_FORMAT, digest_size=32)
    parts = [_version.__version__.encode(), msgspec.__version__.encode(), _types_source()]
    parts.append(b"unchecked" if validator is None else b"checked\n" + validator)
    parts.append(b"no trees" if parser is None else b"trees\n" + parser)
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    for name, data in files:
        encoded = name.encode()
        digest.update(len(encoded).to_bytes(8, "big"))
        digest.update(encoded)
        digest.update(len(data).to_bytes(8, "big"))
    return digest.hexdigest()


def blob_path(key: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where the blob for `key` is kept."""
    from pathlib import Path

    return Path(_blob_file(key, os.environ if environ is None else environ))


def _blob_file(key: str, env: Mapping[str, str]) -> str:
    return os.path.join(_cache_directory(env), "catalog", f"{key}.msgpack")


def load_cached(
    files: Sequence[tuple[str, bytes]],
    parse: Callable[[Sequence[tuple[str, bytes]]], tuple[Karta, ...]],
    environ: Mapping[str, str] | None = None,
    check: Check | None = None,
) -> tuple[Karta, ...]:
    """The definitions of `files`: decoded from the blob for their key, else `parse(files)` (written to the blob
    for the next run). With `check` (definitions -> whether each has no validation errors, run when the blob is
    built), the returned objects that passed are marked validated (`model.validated`). Errors from `parse`
    propagate; cache errors never do."""
    env = os.environ if environ is None else environ
    if env.get("WMAP_NO_CATALOG_CACHE") == "1":
        return parse(files)
    stamp = None if check is None else validator_stamp()
    if stamp is None:
        check = None  # the validator's modules cannot be stamped (a zipped package): record no validity
    parser = trees.tree_stamp()
    path = _blob_file(catalog_key(files, validator=stamp, parser=parser), env)
    given = tuple((name, data) for name, data in files)
    try:
        built_from, kartas, valid, parsed = _DECODER.decode(read_file(path))
        fresh = built_from == given  # the same bytes (the key covers the names and sizes)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        fresh = False
    if not fresh:  # not built yet, unreadable, damaged, or built from other bytes: parse the YAML and (re)write it
        kartas = parse(files)
        valid = () if check is None else tuple(bool(ok) for ok in check(kartas))
        parsed = {} if parser is None else expression_trees(kartas)
        _write(path, _ENCODER.encode((given, kartas, valid, parsed)))
    if len(valid) == len(kartas):
        mark_validated(karta for karta, ok in zip(kartas, valid, strict=True) if ok)
    trees.remember(parsed)
    return kartas


def read_file(path: str) -> bytes:
    """The bytes of a package or cache file, read with `os.read`: a file object's buffering costs more than the
    read itself for the 50-odd small files every start hashes (~0.3 ms; issue 19)."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        chunks = []
        while chunk := os.read(handle, _CHUNK):
            chunks.append(chunk)
    finally:
        os.close(handle)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


_CHUNK = 1 << 20


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
    they cannot be listed."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    stamps: list[str] = []
    try:
        for directory in (package, *(os.path.join(package, name) for name in _VALIDATOR_PACKAGES)):
            with os.scandir(directory) as listing:
                entries = sorted((entry for entry in listing if entry.name.endswith(".py")), key=lambda e: e.name)
            name = os.path.basename(directory)
            for entry in entries:
                stat = entry.stat()
                stamps.append(f"{name}/{entry.name}:{stat.st_size}:{stat.st_mtime_ns}")
    except OSError:
        return None
    return "\n".join(stamps).encode()


def _types_source() -> bytes:
    """The model types' source: a changed field changes the decoded shape even under the same version number."""
    try:
        with open(types.__file__, "rb") as source:  # __file__ None (a frozen module): TypeError
            return source.read()
    except (OSError, TypeError):
        return b""
