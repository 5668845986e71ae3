"""The built-in catalog precompiled: the typed definitions as one msgpack blob, so start-up decodes one file
instead of parsing 24+ YAML files.

The blob lives in the cache directory (`$WMAP_CACHE_DIR`, else `$XDG_CACHE_HOME/workload-map`, else
`~/.cache/workload-map`) under `catalog/<key>.msgpack`. The key is a 256-bit BLAKE2b digest of everything the
decoded result depends on: the package version, the msgspec version, the source of the model's types (an edited
field changes the wire shape) and every packaged definition file's name and bytes. So a blob is never stale: a
definition added, removed or edited gives a new key, and the YAML is parsed again and a new blob written. The
files are read on every start to compute the key (a few hundred KB at most, far cheaper than parsing them).

The cache is an optimisation only: an unwritable directory, a missing, truncated or undecodable blob all fall back
to the YAML (a bad blob is rewritten), with no message. `WMAP_NO_CATALOG_CACHE=1` turns it off.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import msgspec

from workload_map import _version
from workload_map.model import Karta, types

try:  # hashlib's own builtin BLAKE2, without the OpenSSL set-up `import hashlib` pays (~2 ms of every start)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

# Bump when the blob's layout changes in a way the key does not already cover.
_FORMAT = b"wmap-catalog-1"
_DECODER = msgspec.msgpack.Decoder(tuple[Karta, ...])
_ENCODER = msgspec.msgpack.Encoder()


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$WMAP_CACHE_DIR`, else `$XDG_CACHE_HOME/workload-map`, else `~/.cache/workload-map` (the same rule as the
    discovery cache, which lives in a higher layer)."""
    env = os.environ if environ is None else environ
    if env.get("WMAP_CACHE_DIR"):
        return Path(env["WMAP_CACHE_DIR"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "workload-map"


def catalog_key(files: Sequence[tuple[str, bytes]]) -> str:
    """The cache key for definition files given as (name, bytes), in the order they are loaded."""
    digest = blake2b(_FORMAT, digest_size=32)
    for part in (_version.__version__.encode(), msgspec.__version__.encode(), _types_source()):
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
) -> tuple[Karta, ...]:
    """The definitions of `files`: decoded from the blob for their key, else `parse(files)` (written to the blob
    for the next run). Errors from `parse` propagate; cache errors never do."""
    env = os.environ if environ is None else environ
    if env.get("WMAP_NO_CATALOG_CACHE") == "1":
        return parse(files)
    path = blob_path(catalog_key(files), env)
    try:
        return _DECODER.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        pass  # not built yet, unreadable or damaged: parse the YAML and (re)write it
    kartas = parse(files)
    _write(path, _ENCODER.encode(kartas))
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


def _types_source() -> bytes:
    """The model types' source: a changed field changes the decoded shape even under the same version number."""
    try:
        return Path(types.__file__).read_bytes()
    except (OSError, TypeError):
        return b""
