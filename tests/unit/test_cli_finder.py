"""cli.finder: the console script's leaner finder gives the spec the path finder gives, loads the code the source
loader loads, and steps aside wherever the two could differ (issue 19: start-up)."""

from __future__ import annotations

import importlib
import marshal
import os
import py_compile
import subprocess
import sys
from collections.abc import Iterator
from importlib.machinery import FileFinder, ModuleSpec, PathFinder, SourceFileLoader
from pathlib import Path
from types import ModuleType

import pytest

import workload_map
from workload_map.cli import finder
from workload_map.cli.finder import SourceModuleFinder

TAG = sys.implementation.cache_tag
PACKAGE_DIR = Path(workload_map.__file__).parent


def _package_modules() -> list[str]:
    """Every module and package of workload_map (by its files), below the top."""
    names = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if len(parts) > 1:
            names.append(".".join(parts))
    return names


def _parent_path(name: str) -> list[str]:
    parent = importlib.import_module(name.rpartition(".")[0])
    return list(parent.__path__)


def _same_spec(mine: ModuleSpec | None, theirs: ModuleSpec | None) -> None:
    assert (mine is None) == (theirs is None)
    if mine is None or theirs is None:
        return
    assert mine.name == theirs.name
    assert mine.origin == theirs.origin
    assert mine.cached == theirs.cached
    assert mine.has_location == theirs.has_location
    assert mine.submodule_search_locations == theirs.submodule_search_locations
    assert mine.parent == theirs.parent
    assert isinstance(mine.loader, SourceFileLoader) and isinstance(theirs.loader, SourceFileLoader)
    assert mine.loader.name == theirs.loader.name and mine.loader.path == theirs.loader.path


@pytest.mark.parametrize("name", _package_modules())
def test_every_module_of_the_package_has_the_path_finders_spec_and_code(name: str) -> None:
    path = _parent_path(name)
    mine = SourceModuleFinder(TAG).find_spec(name, path)
    theirs = PathFinder.find_spec(name, path)
    assert mine is not None, name  # all of ours are plain source modules: none is left to the path finder
    _same_spec(mine, theirs)
    assert theirs is not None and theirs.loader is not None
    assert mine.loader.get_code(name) == theirs.loader.get_code(name)  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["re._parser", "collections.abc", "msgspec.json", "msgspec.structs", "email.utils"])
def test_other_packages_submodules_read_the_same(name: str) -> None:
    path = _parent_path(name)
    _same_spec(SourceModuleFinder(TAG).find_spec(name, path), PathFinder.find_spec(name, path))


@pytest.fixture
def absolute_path(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """sys.path with its absolute entries alone (pytest's run may start it with a relative one)."""
    entries = [entry for entry in sys.path if entry.startswith("/")]
    monkeypatch.setattr(sys, "path", entries)
    return entries


TOP_LEVEL = ["typing", "enum", "functools", "decimal", "fractions", "uuid", "json", "email", "msgspec", "yaml", "click"]


@pytest.mark.usefixtures("absolute_path")
@pytest.mark.parametrize("name", TOP_LEVEL)
def test_top_level_modules_are_found_on_sys_path_as_the_path_finder_finds_them(name: str) -> None:
    mine = SourceModuleFinder(TAG).find_spec(name, None)
    assert mine is not None, name
    _same_spec(mine, PathFinder.find_spec(name, None))


@pytest.mark.usefixtures("absolute_path")
def test_extension_and_builtin_modules_are_left_to_the_import_system() -> None:
    found = SourceModuleFinder(TAG)
    assert found.find_spec("msgspec._core", _parent_path("msgspec._core")) is None  # a .so beside the sources
    assert found.find_spec("math", None) is None  # lib-dynload's extension
    assert found.find_spec("_sre", None) is None  # built in: the builtin importer's, before this finder
    assert found.find_spec("no_such_module_anywhere", None) is None


def test_the_first_entry_that_has_a_top_level_module_decides(tmp_path: Path, absolute_path: list[str]) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        directory.mkdir()
        (directory / "shadow_mod.py").write_text(f"WHERE = {directory.name!r}\n")
    (first / "nothing_here").mkdir()  # a namespace portion first: the path finder looks further, this one stops
    (second / "nothing_here.py").write_text("")
    absolute_path[:0] = [str(tmp_path / "missing"), str(first), str(second)]
    found = SourceModuleFinder(TAG)
    spec = found.find_spec("shadow_mod", None)
    _same_spec(spec, PathFinder.find_spec("shadow_mod", None))
    assert spec is not None and spec.origin == str(first / "shadow_mod.py")
    assert found.find_spec("nothing_here", None) is None
    archive = tmp_path / "archive.zip"
    archive.write_bytes(b"")
    absolute_path.insert(0, str(archive))  # a file on the path: perhaps zipimport's, left to the path finder
    assert found.find_spec("shadow_mod", None) is None


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package `pkg` under tmp_path, importable; its modules are removed from sys.modules afterwards."""
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield root
    for name in [name for name in sys.modules if name == "pkg" or name.startswith("pkg.")]:
        del sys.modules[name]


def _compiled(path: Path, text: str) -> None:
    path.write_text(text)
    py_compile.compile(str(path), doraise=True)


def test_a_package_a_namespace_portion_and_a_bytecode_only_module(tree: Path) -> None:
    import pkg  # type: ignore[import-not-found]

    (tree / "sub").mkdir()
    _compiled(tree / "sub" / "__init__.py", "X = 1\n")
    (tree / "portion").mkdir()  # no __init__: a namespace portion
    _compiled(tree / "only.py", "Y = 2\n")
    legacy = tree / "__pycache__" / f"only.{TAG}.pyc"
    os.replace(legacy, tree / "only.pyc")  # a bytecode file in place of the source
    (tree / "only.py").unlink()
    found = SourceModuleFinder(TAG)
    path = list(pkg.__path__)
    _same_spec(found.find_spec("pkg.sub", path), PathFinder.find_spec("pkg.sub", path))
    assert found.find_spec("pkg.portion", path) is None
    assert PathFinder.find_spec("pkg.portion", path) is not None  # ... which the path finder does answer
    assert found.find_spec("pkg.only", path) is None
    assert found.find_spec("pkg.missing", path) is None


def test_a_module_beside_a_package_of_its_name_is_the_package(tree: Path) -> None:
    import pkg

    (tree / "both").mkdir()
    (tree / "both" / "__init__.py").write_text("")
    (tree / "both.py").write_text("")
    spec = SourceModuleFinder(TAG).find_spec("pkg.both", list(pkg.__path__))
    _same_spec(spec, PathFinder.find_spec("pkg.both", list(pkg.__path__)))
    assert spec is not None and spec.submodule_search_locations == [str(tree / "both")]


def test_a_file_added_after_the_directory_was_read_is_found_after_invalidate_caches(tree: Path) -> None:
    # as the import system documents: a program that writes a module calls importlib.invalidate_caches() before
    # importing it; until then this finder leaves the name it does not know to the path finder
    import pkg

    found = SourceModuleFinder(TAG)
    path = list(pkg.__path__)
    assert found.find_spec("pkg.later", path) is None
    (tree / "later.py").write_text("Z = 3\n")
    assert found.find_spec("pkg.later", path) is None
    found.invalidate_caches()
    _same_spec(found.find_spec("pkg.later", path), PathFinder.find_spec("pkg.later", path))


def test_a_name_that_is_not_a_regular_file_is_left_to_the_path_finder(tree: Path) -> None:
    import pkg

    (tree / "odd.py").mkdir()  # a directory named like a module
    (tree / "link.py").symlink_to(tree / "nowhere.py")  # a dangling link
    found = SourceModuleFinder(TAG)
    assert found.find_spec("pkg.odd", list(pkg.__path__)) is None
    assert found.find_spec("pkg.link", list(pkg.__path__)) is None
    assert PathFinder.find_spec("pkg.link", list(pkg.__path__)) is None


def test_a_reload_reads_the_source_as_it_is_then(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _compiled(tree / "again.py", "value = 1\n")
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    finder.install()
    module = importlib.import_module("pkg.again")
    assert type(module.__loader__) is finder._Loader and module.value == 1
    (tree / "again.py").write_text("value = 'two'\n")  # another size: the bytecode file is stale now
    assert importlib.reload(module).value == "two"


@pytest.mark.parametrize("damage", ["stale", "truncated", "hash-based", "missing", "garbage"])
def test_a_bytecode_file_that_is_not_current_goes_to_the_source_loader(tree: Path, damage: str) -> None:
    import pkg

    source = tree / "mod.py"
    _compiled(source, "value = 'old'\n")
    cached = tree / "__pycache__" / f"mod.{TAG}.pyc"
    data = cached.read_bytes()
    if damage == "stale":  # the source edited since (a new size and time): its new code must be read
        source.write_text("value = 'new, longer'\n")
    elif damage == "truncated":
        cached.write_bytes(data[:10])
    elif damage == "hash-based":
        py_compile.compile(str(source), invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
        source.write_text("value = 'new, longer'\n")  # a checked hash no longer matches: recompiled
    elif damage == "missing":
        cached.unlink()
    else:
        cached.write_bytes(data[:16] + b"\x00not marshal")
    spec = SourceModuleFinder(TAG).find_spec("pkg.mod", list(pkg.__path__))
    assert spec is not None and spec.loader is not None
    module = ModuleType("pkg.mod")
    if damage == "garbage":  # the source loader itself refuses a damaged file with a current header
        with pytest.raises((EOFError, ValueError, TypeError)):
            spec.loader.get_code("pkg.mod")  # type: ignore[attr-defined]
        return
    exec(spec.loader.get_code("pkg.mod"), vars(module))  # type: ignore[attr-defined]
    expected = "old" if damage in ("truncated", "missing") else "new, longer"
    assert module.value == expected


def test_the_code_names_its_source_where_it_is_now(tree: Path, tmp_path: Path) -> None:
    # a tree compiled elsewhere (a moved virtual environment): tracebacks name the files where they are now
    import pkg

    _compiled(tree / "moved.py", "def f():\n    raise ValueError\n")
    cached = tree / "__pycache__" / f"moved.{TAG}.pyc"
    data = cached.read_bytes()
    code = marshal.loads(data[16:])
    cached.write_bytes(data[:16] + marshal.dumps(code.replace(co_filename="/elsewhere/moved.py")))
    spec = SourceModuleFinder(TAG).find_spec("pkg.moved", list(pkg.__path__))
    assert spec is not None and spec.loader is not None
    assert spec.loader.get_code("pkg.moved").co_filename == str(tree / "moved.py")  # type: ignore[attr-defined]


def test_entries_it_cannot_vouch_for_are_left_alone(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pkg

    (tree / "mod.py").write_text("")
    found = SourceModuleFinder(TAG)
    assert found.find_spec("pkg.mod", ["relative/dir", str(tree)]) is None
    assert found.find_spec("pkg.mod", (str(tree),)) is None  # not a list: a namespace package's path
    assert found.find_spec("pkg.mod", [str(tree / "elsewhere"), str(tree)]) is not None  # the first that has it
    monkeypatch.setitem(sys.path_importer_cache, str(tree), None)  # no finder for the entry: none finds it
    assert found.find_spec("pkg.mod", list(pkg.__path__)) is None
    monkeypatch.setitem(sys.path_importer_cache, str(tree), object())  # another kind of finder
    assert found.find_spec("pkg.mod", list(pkg.__path__)) is None
    monkeypatch.setitem(sys.path_importer_cache, str(tree), FileFinder(str(tree)))
    assert found.find_spec("pkg.mod", list(pkg.__path__)) is not None
    (tree / "ext.py").write_text("")
    (tree / f"ext{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_text("")  # the extension module wins
    assert found.find_spec("pkg.ext", list(pkg.__path__)) is None


def test_an_import_through_it_is_an_ordinary_module(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tree / "sub").mkdir()
    _compiled(tree / "sub" / "__init__.py", "")
    _compiled(tree / "sub" / "leaf.py", "import importlib.resources\nDATA = __file__\n")
    (tree / "sub" / "data.txt").write_text("packaged")
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    assert finder.install()
    assert not finder.install()  # once
    assert isinstance(sys.meta_path[sys.meta_path.index(PathFinder) - 1], SourceModuleFinder)
    leaf = importlib.import_module("pkg.sub.leaf")
    assert type(leaf.__loader__) is finder._Loader
    assert leaf.DATA == leaf.__file__ == str(tree / "sub" / "leaf.py")
    assert leaf.__cached__ == str(tree / "sub" / "__pycache__" / f"leaf.{TAG}.pyc")
    assert leaf.__spec__.parent == leaf.__package__ == "pkg.sub"
    assert sys.modules["pkg.sub"].__path__ == [str(tree / "sub")]
    assert importlib.resources.files("pkg.sub").joinpath("data.txt").read_text() == "packaged"
    assert leaf.__loader__.get_source("pkg.sub.leaf").startswith("import importlib")


@pytest.mark.parametrize("setting", ["pycache_prefix", "optimize", "path_hook", "no_path_finder"])
def test_it_is_not_installed_under_other_import_settings(setting: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, SourceModuleFinder)])
    if setting == "pycache_prefix":
        monkeypatch.setattr(sys, "pycache_prefix", "/tmp/elsewhere")
    elif setting == "optimize":
        monkeypatch.setattr(sys, "flags", type("Flags", (), {"optimize": 1})())
    elif setting == "path_hook":
        monkeypatch.setattr(sys, "path_hooks", [*sys.path_hooks, lambda path: None])
    else:
        monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if f is not PathFinder])
    before = list(sys.meta_path)
    assert not finder.install()
    assert sys.meta_path == before


def test_the_console_script_loads_its_modules_through_it(tmp_path: Path) -> None:
    # the console script ends with os._exit after the atexit handlers: the count is taken in one
    code = (
        "import atexit, sys\n"
        "def count():\n"
        "    from workload_map.cli.finder import _Loader\n"
        "    lean = [n for n, m in list(sys.modules.items()) if type(getattr(m, '__loader__', None)) is _Loader]\n"
        "    sys.stderr.write(str(len(lean)))\n"
        "atexit.register(count)\n"
        "from workload_map.cli.main import main\n"
        "sys.argv = ['wmap', 'describe', '-f', sys.argv[1], '-o', 'json']\n"
        "main()\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("WMAP_")}
    env["WMAP_CACHE_DIR"] = str(tmp_path / "cache")
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    example = Path(__file__).resolve().parents[2] / "examples" / "pytorchjob.yaml"
    done = subprocess.run(
        [sys.executable, "-c", code, str(example)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert '"kind": "PyTorchJob"' in done.stdout
    assert int(done.stderr.strip().splitlines()[-1]) > 50
