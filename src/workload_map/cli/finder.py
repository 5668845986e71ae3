"""A leaner finder and loader for submodules, put by the console script just before the import system's path
finder (issue 19: start-up).

The import system spends ~280,000 instructions on a module before its code runs. A `describe -f` imports some 90
submodules (ours, msgspec's, the standard library's `re` and `collections`), so that is ~25 million instructions,
an eighth of the command. Most of it is Python code in `importlib._bootstrap_external` that runs once per module:
- the path finder's walk over the parent's `__path__`;
- a file finder trying each suffix in turn;
- `cache_from_source` working out the bytecode file's name from the source's;
- the loader's header checks, spread over several calls;
- two AttributeErrors in `_init_module_attrs`, for a new module's `__file__` and `__cached__`.

`SubmoduleFinder` gives the same answer with less of that work (~170,000 instructions a module; the whole
`describe -f` goes from ~188 M to ~179 M). It covers what most of a command's imports are: a submodule of a
regular package whose `__path__` is one absolute directory, which has source and a current bytecode file.

It finds what the path finder would find, and loads what the source loader would load, or it steps aside:
- Directories. It reads each one once with `os.scandir`, and again when the directory's modification time
  changes, as the file finder caches it. It applies the file finder's rules in the file finder's order:
  - a subdirectory with `__init__.py` is a package;
  - an extension module (`*.so`, or a package's `__init__.so`), a bytecode-only module or package, and a
    namespace portion are left to the import system (`find_spec` returns None);
  - then `NAME.py`;
  - a name it does not find is left to the import system too.
- Entries. An entry with another finder in `sys.path_importer_cache` is left alone, and so is a relative one.
- The spec. It is the one the path finder would make: the same origin, `cached` path and search locations, and a
  `SourceFileLoader` (a subclass). So `__file__`, `__cached__`, `__loader__`, `get_source` (a traceback's lines)
  and `importlib.resources` read as before.
- Bytecode. The loader takes the bytecode file only when it is current by the source loader's rules: the magic
  number, the timestamp flags, and the source's modification time and size in its header. Then, as the source
  loader does, the code names the source file where it is now. Anything else goes to `SourceFileLoader.get_code`
  itself, which compiles the source and writes the bytecode file as always: no bytecode file, a stale or
  hash-based one, a damaged one, a read error.
- Settings. It is not installed when the interpreter's import settings differ from the ones it follows:
  `sys.pycache_prefix`, an optimization level (`-O`), no `cache_tag`, path hooks other than the interpreter's own,
  or no path finder in `sys.meta_path`.

Only the console script installs it (`cli.main.main`), never `import workload_map`: a library user's import
system is their own. `tests/unit/test_cli_finder.py` compares its specs and code with the path finder's, module by
module.
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
_ModuleType: Final = type(sys)


class _Listing:
    """One directory's entries as the file finder caches them: read again when the directory's modification time
    changes (an entry added or removed), its regular files and subdirectories by name."""

    __slots__ = ("dirs", "files", "mtime")

    def __init__(self, directory: str, mtime: float) -> None:
        self.mtime = mtime
        self.files: set[str] = set()
        self.dirs: set[str] = set()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        if entry.is_file():
                            self.files.add(entry.name)
                        elif entry.is_dir():
                            self.dirs.add(entry.name)
                    except OSError:  # pragma: no cover - an entry gone while read: the import system decides
                        continue
        except OSError:  # pragma: no cover - removed since its stat: nothing found here, the path finder decides
            pass


class _Loader(SourceFileLoader):
    """`SourceFileLoader`, with the bytecode file's name given and its header read in one place."""

    def __init__(self, fullname: str, path: str, cached: str) -> None:
        super().__init__(fullname, path)
        self.cached = cached

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
        try:
            stat = os.stat(self.path)
            descriptor = os.open(self.cached, os.O_RDONLY | os.O_CLOEXEC)
            try:
                size = os.fstat(descriptor).st_size
                data = os.read(descriptor, size)
            finally:
                os.close(descriptor)
        except OSError:
            return super().get_code(fullname)  # type: ignore[return-value]  # typeshed: CodeType | None
        if (
            len(data) < _HEADER
            or data[:4] != MAGIC_NUMBER
            or data[4:8] != _TIMESTAMP_FLAGS
            or int.from_bytes(data[8:12], "little") != int(stat.st_mtime) & 0xFFFFFFFF
            or int.from_bytes(data[12:16], "little") != stat.st_size & 0xFFFFFFFF
            or len(data) != size  # a short read: the source loader reads it whole
        ):
            return super().get_code(fullname)  # type: ignore[return-value]
        try:
            code = loads(memoryview(data)[_HEADER:])
        except (EOFError, ValueError, TypeError):  # a damaged file: the source loader reports or replaces it
            return super().get_code(fullname)  # type: ignore[return-value]
        _fix_co_filename(code, self.path)  # as the source loader does: a moved tree's tracebacks name its files
        return code  # type: ignore[no-any-return]


class SubmoduleFinder:
    """A meta path finder for submodules of regular packages whose `__path__` is one directory (see the module
    docstring); None for everything else, which the finders after it answer as before."""

    answers_as_path_finder: Final = True  # what it answers, the path finder would (`cli.deferred` reads it)

    def __init__(self, cache_tag: str) -> None:
        self._tag = cache_tag
        self._listings: dict[str, _Listing] = {}

    def _listing(self, directory: str) -> _Listing | None:
        """`directory`'s entries, current by its modification time; None when it cannot be read (a zip archive's
        path among them)."""
        try:
            mtime = os.stat(directory).st_mtime
        except (OSError, ValueError):
            return None
        listing = self._listings.get(directory)
        if listing is None or listing.mtime != mtime:
            listing = self._listings[directory] = _Listing(directory, mtime)
        return listing

    def invalidate_caches(self) -> None:
        """`importlib.invalidate_caches()`: read the directories again."""
        self._listings.clear()

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> Any:
        """The spec the path finder would give `name`, when it is one this finder makes; else None."""
        if path is None or type(path) is not list or len(path) != 1:
            return None  # a top-level module (sys.path's order), a namespace package, several locations
        entry = path[0]
        if type(entry) is not str or not entry.startswith("/"):
            return None  # a relative entry: the file finder makes it absolute from the working directory
        cached = sys.path_importer_cache.get(entry, FileFinder)
        if not (cached is FileFinder or type(cached) is FileFinder):
            return None  # another finder answers for this entry (or, None, none does)
        directory = entry.rstrip("/")  # as the file finder joins paths
        tail = name.rpartition(".")[2]
        listing = self._listing(directory) if directory else None
        if listing is None:
            return None
        if tail in listing.dirs:
            package = f"{directory}/{tail}"
            inner = self._listing(package)
            if inner is None:
                return None
            inside = inner.files
            for suffix in EXTENSION_SUFFIXES:
                if "__init__" + suffix in inside:
                    return None
            if "__init__.py" in inside:
                origin = f"{package}/__init__.py"
                return self._spec(name, origin, f"{package}/__pycache__/__init__.{self._tag}.pyc", package)
            # no source `__init__`: a bytecode-only package or a namespace portion, left to the path finder
            return None
        files = listing.files
        for suffix in EXTENSION_SUFFIXES:
            if tail + suffix in files:
                return None
        if tail + ".py" not in files:
            return None
        origin = f"{directory}/{tail}.py"
        return self._spec(name, origin, f"{directory}/__pycache__/{tail}.{self._tag}.pyc", None)

    @staticmethod
    def _spec(name: str, origin: str, cached: str, package: str | None) -> ModuleSpec:
        spec = ModuleSpec(name, _Loader(name, origin, cached), origin=origin, is_package=package is not None)
        spec.has_location = True
        spec.cached = cached
        if package is not None:
            spec.submodule_search_locations = [package]
        return spec


def install() -> bool:
    """Put a `SubmoduleFinder` in `sys.meta_path` just before the path finder, when the interpreter's import
    settings are the ones it follows; whether it did."""
    tag = sys.implementation.cache_tag
    if (
        tag is None
        or sys.pycache_prefix is not None
        or sys.flags.optimize
        or PathFinder not in sys.meta_path
        or not _default_path_hooks()
        or any(isinstance(finder, SubmoduleFinder) for finder in sys.meta_path)
    ):
        return False
    sys.meta_path.insert(sys.meta_path.index(PathFinder), SubmoduleFinder(tag))
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
