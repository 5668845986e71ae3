"""The built-in catalog precompiled: the typed definitions as one msgpack blob, so start-up decodes one file
instead of parsing 24+ YAML files.

The blob lives in the cache directory (`$WMAP_CACHE_DIR`, else `$XDG_CACHE_HOME/workload-map`, else
`~/.cache/workload-map`) under `catalog/<key>.msgpack`. The key is a 256-bit BLAKE2b digest of everything the
decoded result depends on: the package version, the msgspec version, the source of the model's types (an edited
field changes the wire shape) and every packaged definition file's name and bytes. So a blob is never stale: a
definition added, removed or edited gives a new key, and the YAML is parsed again and a new blob written. The
files are read on every start to compute the key (a few hundred KB at most, far cheaper than parsing them).

With a `check` (the catalog passes the validator), the blob also records which definitions had no validation
errors when it was built, and those decoded objects are marked so (`model.validated`): resolving a catalog workload
then never imports the validation layer. So the key also covers the validator's code: the name, size and
modification time of every module of the packages it runs (validation, jq, model) and of the package's top-level
helpers, as Python's own bytecode cache judges a source file (a `stat` each, no read).

The cache is an optimisation only: an unwritable directory, a missing, truncated or undecodable blob all fall back
to the YAML (a bad blob is rewritten), with no message. `WMAP_NO_CATALOG_CACHE=1` turns it off.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final

import msgspec

from workload_map import _version
from workload_map.model import Karta, types
from workload_map.model.validated import mark_validated

try:  # hashlib's own builtin BLAKE2, without the OpenSSL set-up `import hashlib` pays (~2 ms of every start)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

# Bump when the blob's layout changes in a way the key does not already cover.
_FORMAT = b"wmap-catalog-2"
# the definitions, and for each whether it had no validation errors (empty when the blob was built without a check)
_DECODER = msgspec.msgpack.Decoder(tuple[tuple[Karta, ...], tuple[bool, ...]])
# what validation runs: a change in any of these modules may change which definitions are valid
_VALIDATOR_PACKAGES: Final = ("validation", "jq", "model")

Check = Callable[[Sequence[Karta]], Sequence[bool]]
_ENCODER = msgspec.msgpack.Encoder()


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$WMAP_CACHE_DIR`, else `$XDG_CACHE_HOME/workload-map`, else `~/.cache/workload-map` (the same rule as the
    discovery cache, which lives in a higher layer)."""
    env = os.environ if environ is None else environ
    if env.get("WMAP_CACHE_DIR"):
        return Path(env["WMAP_CACHE_DIR"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "workload-map"


def catalog_key(files: Sequence[tuple[str, bytes]], *, validator: bytes | None = None) -> str:
    """The cache key for definition files given as (name, bytes), in the order they are loaded; `validator`: the
    validator's stamp (`validator_stamp`), for a blob that records which definitions are valid."""
    digest = blake2b(_FORMAT, digest_size=32)
    parts = [_version.__version__.encode(), msgspec.__version__.encode(), _types_source()]
    parts.append(b"unchecked" if validator is None else b"checked\n" + validator)
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    for name, data in files:
        for part in (name.encode(), data):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
    return digest.hexdigest()


def blob_path(key: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where the blob for `key` is kept."""
    return cache_dir(environ) / "catalog" / f"{key}.msgpack"


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
    path = blob_path(catalog_key(files, validator=stamp), env)
    try:
        kartas, valid = _DECODER.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        # not built yet, unreadable or damaged: parse the YAML and (re)write it
        kartas = parse(files)
        valid = () if check is None else tuple(bool(ok) for ok in check(kartas))
        _write(path, _ENCODER.encode((kartas, valid)))
    if len(valid) == len(kartas):
        mark_validated(karta for karta, ok in zip(kartas, valid, strict=True) if ok)
    return kartas


def _write(path: Path, data: bytes) -> None:
    """Write atomically (a reader never sees half a blob); give up silently when the directory is not writable."""
    import tempfile  # only when a blob is written (random and its hashing come with it: ~3 ms of a start)

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".catalog-", dir=path.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _prune(path.parent, keep=path)
    except OSError:
        pass


_KEPT = 4


def _prune(directory: Path, keep: Path) -> None:
    """Drop all but the newest few blobs: every definition edit makes a new key, and a few are kept so that two
    installed versions sharing one cache directory do not rewrite each other's blob on every run."""
    blobs = sorted(directory.glob("*.msgpack"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in blobs[_KEPT:]:
        if old != keep:
            old.unlink(missing_ok=True)


def validator_stamp() -> bytes | None:
    """(name, size, mtime) of every module of the validator's packages and of the top-level helpers; None when
    they cannot be listed."""
    package = Path(__file__).resolve().parent.parent
    stamps: list[str] = []
    try:
        for directory in (package, *(package / name for name in _VALIDATOR_PACKAGES)):
            with os.scandir(directory) as listing:
                entries = sorted((entry for entry in listing if entry.name.endswith(".py")), key=lambda e: e.name)
            for entry in entries:
                stat = entry.stat()
                stamps.append(f"{directory.name}/{entry.name}:{stat.st_size}:{stat.st_mtime_ns}")
    except OSError:
        return None
    return "\n".join(stamps).encode()


def _types_source() -> bytes:
    """The model types' source: a changed field changes the decoded shape even under the same version number."""
    try:
        return Path(types.__file__).read_bytes()
    except (OSError, TypeError):
        return b""
