"""A leaner finder and loader for plain source modules, put by the console script just before the import system's
path finder (issue 19: start-up).

The import system spends ~280,000 instructions on a submodule before its code runs (~460,000 on a top-level
module found late on `sys.path`). A `describe -f` imports some 100 modules from files (ours, msgspec's, the standard
library's), so that is ~25 million instructions, an eighth of the command. Most of it is Python code in
`importlib._bootstrap_external` that runs once per module:
- the path finder's walk over the parent's `__path__` or `sys.path`, with a `stat` of each directory;
- a file finder trying each suffix in turn, with a `stat` of each candidate;
- `cache_from_source` working out the bytecode file's name from the source's;
- the loader's header checks, spread over several calls, and another `stat` of the source;
- two AttributeErrors in `_init_module_attrs`, for a new module's `__file__` and `__cached__`.

`SourceModuleFinder` gives the same answer with less of that work: ~170,000 instructions a submodule, ~200,000 a
top-level module, and a `describe -f` of ~178.5 M instructions instead of ~188 M. It covers what most of a command's
imports are: a module from a source file that has a current bytecode file.

It finds what the path finder would find, and loads what the source loader would load, or it steps aside:
- Directories. It reads each one once (`os.listdir`) and applies the file finder's rules in the file finder's
  order, entry by entry of the parent's `__path__` (of `sys.path` for a top-level module):
  - a subdirectory with `__init__.py` is a package;
  - an extension module (`*.so`, or a package's `__init__.so`), a bytecode-only module or package, a namespace
    portion, and a name that is not a regular file or directory are left to the import system (`find_spec`
    returns None);
  - then `NAME.py`; a directory without the name, or without any file finder (a missing entry), is passed over
    as the path finder passes it over.
  A directory is not read again when it changes: as the import system's documentation asks, a program that writes
  a module calls `importlib.invalidate_caches()` before importing it, which clears what this finder read too.
- Entries. A relative entry, a namespace package's path, and an entry with another finder (a zip archive's) are
  left to the path finder.
- The spec. It is the one the path finder would make: the same origin, `cached` path and search locations, and a
  `SourceFileLoader` (a subclass). So `__file__`, `__cached__`, `__loader__`, `get_source` (a traceback's lines)
  and `importlib.resources` read as before.
- Bytecode. The loader takes the bytecode file only when its header is the one the source loader would accept:
  the magic number, the timestamp flags, and the source's modification time and size (from the finder's `stat`
  of the source, taken again for a reload). Then, as the source loader does, the code names the source file where
  it is now. Anything else goes to `SourceFileLoader.get_code` itself, which compiles the source and writes the
  bytecode file as always: no bytecode file, a stale or hash-based one, a damaged one, a read error.
- Settings. It is not installed when the interpreter's import settings differ from the ones it follows:
  `sys.pycache_prefix`, an optimization level (`-O`), no `cache_tag`, path hooks other than the interpreter's own,
  or no path finder in `sys.meta_path`. The builtin and frozen importers come before it, as before.

Only the console script installs it (`cli.main.main`), never `import workload_map`: a library user's import
system is their own. `tests/unit/test_cli_finder.py` compares its specs and code with the path finder's, module by
module, and covers each case it steps aside for.
"""

from __future__ import annotations

import os
import sys
from _imp import _fix_co_filename  # type: ignore[attr-defined]  # typeshed has no stub for it
from importlib._bootstrap_external import MAGIC_NUMBER
from importlib.machinery import EXTENSION_SUFFIXES, FileFinder, ModuleSpec, PathFinder, SourceFileLoader
from marshal import loads

TYPE_CHECKING = False  # not `typing`'s: this module runs before anything imports typing (~13 M instructions)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import CodeType, ModuleType
    from typing import Any, Final

_HEADER: Final = 16  # magic (4), flags (4), the source's mtime (4) and size (4): PEP 552's timestamp form
_TIMESTAMP_FLAGS: Final = b"\x00\x00\x00\x00"
_CHUNK: Final = 1 << 16  # bytes read at a time (most bytecode files are smaller; no `fstat` for the size)
_ModuleType: Final = type(sys)


def _is_dir(path: str) -> bool:
    try:
        return os.stat(path).st_mode & 0o170000 == 0o040000  # S_IFDIR, as the file finder's _path_isdir
    except (OSError, ValueError):
        return False


def _header(path: str) -> bytes | None:
    """The header a current bytecode file of the source `path` starts with (its magic number, the timestamp
    flags, the source's modification time and size, as `importlib` writes them); None when `path` is not a regular
    file (the file finder's `_path_isfile` would pass it over)."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.st_mode & 0o170000 != 0o100000:  # S_IFREG
        return None
    return b"".join(
        (
            MAGIC_NUMBER,
            _TIMESTAMP_FLAGS,
            (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little"),
            (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little"),
        )
    )


class _Loader(SourceFileLoader):
    """`SourceFileLoader`, with the bytecode file's name given and its header checked in one comparison."""

    def __init__(self, fullname: str, path: str, cached: str, header: bytes | None) -> None:
        super().__init__(fullname, path)
        self.cached = cached
        self._header = header  # from the finder's `stat` of the source: used by the first load only

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        """The module with `__file__` and `__cached__` set already, as the import system then sets them: it asks
        for each first, and a module without them answers with an AttributeError (~10,000 instructions each)."""
        module = _ModuleType(spec.name)
        module.__file__ = spec.origin
        module.__cached__ = spec.cached  # type: ignore[attr-defined]
        return module

    def get_code(self, fullname: str) -> CodeType:
        """The module's code from its bytecode file when that is current (the source loader's timestamp rules);
        anything else is the source loader's own answer (it compiles the source and writes the file)."""
        header, self._header = self._header, None
        if header is None:  # a later load (`importlib.reload`): the source may have changed since it was found
            header = _header(self.path)
        try:
            descriptor = os.open(self.cached, os.O_RDONLY | os.O_CLOEXEC)
            try:
                chunks = []
                while chunk := os.read(descriptor, _CHUNK):
                    chunks.append(chunk)
            finally:
                os.close(descriptor)
        except OSError:
            return super().get_code(fullname)  # type: ignore[return-value]  # typeshed: CodeType | None
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if header is None or data[:_HEADER] != header:
            return super().get_code(fullname)  # type: ignore[return-value]
        try:
            code = loads(memoryview(data)[_HEADER:])
        except (EOFError, ValueError, TypeError):  # a damaged file: the source loader reports or replaces it
            return super().get_code(fullname)  # type: ignore[return-value]
        _fix_co_filename(code, self.path)  # as the source loader does: a moved tree's tracebacks name its files
        return code  # type: ignore[no-any-return]


# what a directory holds for a name: its module's spec, nothing (the search goes on to the next directory), or
# something this finder leaves to the path finder (the search stops: `find_spec` returns None)
_NOT_HERE: Final = object()
_DECLINE: Final = object()


class SourceModuleFinder:
    """A meta path finder for plain source modules (see the module docstring); None for everything else, which the
    finders after it answer as before."""

    answers_as_path_finder: Final = True  # what it answers, the path finder would (`cli.deferred` reads it)

    def __init__(self, cache_tag: str) -> None:
        self._tag = cache_tag
        self._listings: dict[str, frozenset[str] | None] = {}

    def invalidate_caches(self) -> None:
        """`importlib.invalidate_caches()`: read the directories again."""
        self._listings.clear()

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> Any:
        """The spec the path finder would give `name`, when it is one this finder makes; else None."""
        if path is None:
            entries: Sequence[str] = sys.path  # a top-level module: the first entry that has it, in order
        elif type(path) is list:
            entries = path
        else:
            return None  # a namespace package's path (it recomputes itself from sys.path)
        tail = name.rpartition(".")[2]
        cache = sys.path_importer_cache
        for entry in entries:
            if type(entry) is not str or not entry.startswith("/"):
                return None  # a relative entry: the file finder makes it absolute from the working directory
            cached = cache.get(entry, _NOT_HERE)
            if cached is None:
                continue  # no finder for this entry: the path finder skips it
            if cached is _NOT_HERE:  # not looked at yet: the path hooks would make a file finder of a directory
                if not _is_dir(entry):
                    if os.path.lexists(entry):  # a zip archive, perhaps: zipimport's
                        return None
                    continue
            elif type(cached) is not FileFinder:
                return None  # another finder answers for this entry
            found = self._find_in(name, tail, entry.rstrip("/"))  # rstrip: as the file finder joins paths
            if found is not _NOT_HERE:
                return None if found is _DECLINE else found
        return None

    def _find_in(self, name: str, tail: str, directory: str) -> object:
        """The spec of `name` in `directory`, `_NOT_HERE` or `_DECLINE`, by the file finder's rules and order."""
        names = self._names(directory)
        if names is None:
            return _DECLINE
        if tail in names and _is_dir(f"{directory}/{tail}"):
            package = f"{directory}/{tail}"
            inside = self._names(package)
            if inside is None:
                return _DECLINE
            for suffix in EXTENSION_SUFFIXES:
                if "__init__" + suffix in inside:
                    return _DECLINE
            if "__init__.py" not in inside:
                return _DECLINE  # a bytecode-only package or a namespace portion: the path finder's
            origin = f"{package}/__init__.py"
            return self._spec(name, origin, f"{package}/__pycache__/__init__.{self._tag}.pyc", package)
        for suffix in EXTENSION_SUFFIXES:
            if tail + suffix in names:
                return _DECLINE
        if tail + ".py" in names:
            return self._spec(name, f"{directory}/{tail}.py", f"{directory}/__pycache__/{tail}.{self._tag}.pyc", None)
        if tail + ".pyc" in names:
            return _DECLINE
        return _NOT_HERE

    def _names(self, directory: str) -> frozenset[str] | None:
        """`directory`'s names, read once (None: it cannot be read). Not read again when it changes: a module
        created after the start is found once `importlib.invalidate_caches()` is called, as the import system's
        documentation asks of a program that writes modules; until then this finder does not know the name and
        leaves it to the path finder."""
        names = self._listings.get(directory, _NOT_HERE)
        if names is _NOT_HERE:
            try:
                names = frozenset(os.listdir(directory))
            except (OSError, ValueError):
                names = None
            self._listings[directory] = names
        return names  # type: ignore[return-value]

    @staticmethod
    def _spec(name: str, origin: str, cached: str, package: str | None) -> object:
        """The spec of the source `origin`; `_DECLINE` when it is not a regular file (the file finder passes such
        a name over, perhaps to a bytecode file of it)."""
        header = _header(origin)
        if header is None:
            return _DECLINE
        spec = ModuleSpec(name, _Loader(name, origin, cached, header), origin=origin, is_package=package is not None)
        spec.has_location = True
        spec.cached = cached
        if package is not None:
            spec.submodule_search_locations = [package]
        return spec


def install() -> bool:
    """Put a `SourceModuleFinder` in `sys.meta_path` just before the path finder, when the interpreter's import
    settings are the ones it follows; whether it did."""
    tag = sys.implementation.cache_tag
    if (
        tag is None
        or sys.pycache_prefix is not None
        or sys.flags.optimize
        or PathFinder not in sys.meta_path
        or not _default_path_hooks()
        or any(isinstance(finder, SourceModuleFinder) for finder in sys.meta_path)
    ):
        return False
    sys.meta_path.insert(sys.meta_path.index(PathFinder), SourceModuleFinder(tag))
    return True


def _default_path_hooks() -> bool:
    """Whether `sys.path_hooks` is the interpreter's own (zip archives, then the file finder): with another hook
    a directory may be read by other rules than the file finder's."""
    hooks = sys.path_hooks
    return (
        len(hooks) == 2
        and getattr(hooks[0], "__name__", None) == "zipimporter"
        and getattr(hooks[1], "__qualname__", "").startswith("FileFinder.path_hook.")
    )
