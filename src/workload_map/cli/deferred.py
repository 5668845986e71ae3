"""Standard-library modules the console script puts in `sys.modules` with their code not run yet (issue 19:
start-up): msgspec imports `uuid` (which imports `platform`), `textwrap` and its own `inspect`, and a command needs
none of them unless it builds a JSON schema. `cli.main.import_msgspec_alone` says which and why.

A deferred module is the module object itself, with every attribute the import system's own `module_from_spec`
sets and an import statement reads (`__name__`, `__spec__`, `__file__`, `__loader__`, `__package__`) already set:
`import platform` hands it out as it hands out any loaded module. Its code runs, in that same object, when an
attribute it does not hold yet is first asked for (`platform.system`, `from textwrap import dedent`); from then on
it is a plain module. `importlib.util.LazyLoader` cannot do this on Python 3.11: it runs the module at the first
attribute read of any kind, and every later `import` statement of the module reads `__spec__`.
"""

from __future__ import annotations

import builtins
import os
import sys
from _thread import RLock
from importlib.machinery import PathFinder, SourceFileLoader, SourcelessFileLoader
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

# One lock for all: a module's code runs once even when two threads ask for an attribute at the same time (the
# second waits, then reads the finished module); reentrant, for a module whose code asks for its own attributes.
_LOCK = RLock()
_RUNNING: set[str] = set()


class _Deferred(ModuleType):
    """A module whose code has not run yet."""

    def __getattr__(self, attribute: str) -> Any:  # only for what the module does not hold yet
        name = self.__name__
        with _LOCK:
            if type(self) is _Deferred:
                if name in _RUNNING:  # the module's own code, still running, asks for what it has not set yet
                    raise AttributeError(f"partially initialized module {name!r} has no attribute {attribute!r}")
                _RUNNING.add(name)
                try:
                    self.__spec__.loader.exec_module(self)  # type: ignore[union-attr]  # set by `defer`
                except BaseException:
                    if sys.modules.get(name) is self:  # as a failed import leaves it: not imported
                        del sys.modules[name]
                    raise
                finally:
                    _RUNNING.discard(name)
                    self.__class__ = ModuleType  # type: ignore[assignment]  # from now on a plain module
        return getattr(self, attribute)


def defer(name: str) -> ModuleType | None:
    """Put module `name` in `sys.modules` with its code not run yet. Nothing is done (None) when it is loaded
    already, or when it is not a plain source or bytecode file that the import system would find with its path
    finder (`_find`)."""
    module = None if name in sys.modules else _deferred(name)
    if module is not None:
        sys.modules[name] = module
    return module


def _deferred(name: str) -> ModuleType | None:
    """Module `name`, not run yet and not in `sys.modules`; None when `defer` leaves it alone."""
    parent = name.rpartition(".")[0]
    path: list[str] | None = None
    if parent:
        package = sys.modules.get(parent)
        package_spec = _find(parent, None) if package is None else getattr(package, "__spec__", None)
        locations = None if package_spec is None else package_spec.submodule_search_locations
        if not locations:
            return None
        path = list(locations)
    spec = _find(name, path)
    if spec is None or type(spec.loader) not in (SourceFileLoader, SourcelessFileLoader):
        return None
    return _module(_Deferred, spec)


def _module(kind: type[ModuleType], spec: ModuleSpec) -> ModuleType:
    """A `kind` module with what importlib.util.module_from_spec sets for a plain file module (without importing
    importlib.util)."""
    module = kind(spec.name)
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__package__ = spec.parent
    if spec.submodule_search_locations is not None:
        module.__path__ = spec.submodule_search_locations
    if spec.has_location:
        module.__file__ = spec.origin
        if spec.cached is not None:
            module.__cached__ = spec.cached  # type: ignore[attr-defined]
    return module


def _find(name: str, path: list[str] | None) -> ModuleSpec | None:
    """The path finder's spec for `name`, when it is the finder the import system would take it from: every
    finder before it (setuptools' distutils finder, an editable install's) is asked first, as an import asks them,
    and one that answers, or cannot be asked, means None."""
    for finder in sys.meta_path:
        if finder is PathFinder:
            return PathFinder.find_spec(name, path)
        if getattr(finder, "answers_as_path_finder", False):  # cli.finder's: the path finder's spec, or none
            continue
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None or find_spec(name, path) is not None:
            return None
    return None


# Python 3.11's datetime.py: its `__all__`, and the one module it imports that stays in its namespace
_DATETIME_ALL: Final = ("date", "datetime", "time", "timedelta", "timezone", "tzinfo", "MINYEAR", "MAXYEAR", "UTC")


def import_datetime_from_c() -> None:
    """`datetime` as Python 3.11's datetime.py leaves it when its C implementation is there, without running it.

    That module defines the whole pure-Python implementation (six classes, some 2,600 lines) and then replaces it:
    `from _datetime import *`, `from _datetime import __doc__`, and every name of its own deleted but `__all__`
    and `sys`. msgspec imports it at start (for the C API capsule and the types), and running it is ~6 million
    instructions, ~2.5% of a `describe -f` (issue 19: start-up). So the same namespace is made here from
    `_datetime`, in a module with datetime.py's own spec, file and loader: the same classes, the same names, the
    same values. Python 3.12 moved the pure-Python code to `_pydatetime`, so only 3.11 needs this; nothing is done
    when `datetime` is loaded already, when `_datetime` cannot be imported, or when another finder would answer
    for `datetime`. `tests/unit/test_deferred_modules.py` compares the namespace with a plain import's."""
    if sys.hexversion >> 16 != 0x030B or "datetime" in sys.modules:  # 3.11 only (hexversion: no mypy narrowing)
        return
    spec = _find("datetime", None)
    if spec is None or type(spec.loader) not in (SourceFileLoader, SourcelessFileLoader):
        return
    try:
        implementation: ModuleType = __import__("_datetime")
    except ImportError:
        return
    module = _module(ModuleType, spec)
    namespace = vars(module)
    namespace["__builtins__"] = vars(builtins)
    namespace["__all__"] = _DATETIME_ALL
    namespace["sys"] = sys
    namespace.update((name, value) for name, value in vars(implementation).items() if not name.startswith("_"))
    namespace["__doc__"] = implementation.__doc__
    sys.modules["datetime"] = module


def import_fractions_with_a_lazy_pattern() -> None:
    """`import fractions` with its one module-level pattern compiled on first use (`workload_map._regex.LazyPattern`).

    `fractions` compiles `_RATIONAL_FORMAT` when imported (~4.7 million instructions, ~2% of a `describe -f`;
    issue 19), and only `Fraction(str)` matches it: quantities are Fractions of integers. So `re.compile` is
    `LazyPattern` for the length of that import, once the modules `fractions` imports are loaded, so that the one
    module whose code then runs is `fractions` itself. `Fraction("1/3")` compiles the same pattern with the same
    flags at its first call. Nothing is done when `fractions` is loaded already."""
    if "fractions" in sys.modules:
        return
    import decimal  # noqa: F401  # what fractions imports (msgspec has loaded decimal and numbers already)
    import math  # noqa: F401
    import numbers  # noqa: F401
    import operator  # noqa: F401
    import re

    from workload_map._regex import LazyPattern

    compile_pattern = re.compile
    re.compile = LazyPattern  # type: ignore[assignment]
    try:
        import fractions  # noqa: F401
    finally:
        re.compile = compile_pattern


def import_uuid_without_platform() -> None:
    """`import uuid` with a stand-in for the one thing it asks `platform` (`system()`, on the POSIX systems other
    than macOS), then the real `platform`, deferred, in `sys.modules` and in `uuid`."""
    if os.name != "posix" or sys.platform == "darwin" or "uuid" in sys.modules or "platform" in sys.modules:
        return
    real = _deferred("platform")
    if real is None:
        return
    stand_in = ModuleType("platform")
    stand_in.system = _system  # type: ignore[attr-defined]
    sys.modules["platform"] = stand_in
    try:
        import uuid
    finally:
        sys.modules["platform"] = real
    if getattr(uuid, "platform", None) is stand_in:
        uuid.platform = real  # type: ignore[attr-defined]


def _system() -> str:
    """`platform.system()` on POSIX: `platform.uname()`'s `system` is `os.uname()`'s `sysname`, "unknown" as ""."""
    system = os.uname().sysname
    return "" if system == "unknown" else system
