"""The start-up budget, held structurally (issue 19): what `wmap describe -f FILE -o json` and `wmap --version`
import, and that no module of the package compiles a regular expression when it is imported. No timing here: the
figures are in benchmarks/ (bench_cli.py, bench_kli.py); these tests keep the imports that made them from coming
back unnoticed.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "pytorchjob.yaml"

# Never part of describing a catalog workload from a file: each has its own reason to be loaded (and a test
# elsewhere that it still works when it is).
NOT_IN_DESCRIBE = (
    "workload_map.validation",  # the catalog's definitions were validated when its blob was built
    "workload_map.model.load",  # the YAML definition loader: only to rebuild the blob or read --definitions
    "workload_map.model.schema",  # JSON Schema and CRD generation
    "workload_map.model.dump",
    "workload_map.model.scaffold",
    "workload_map.view.schema",
    "workload_map.pods",  # a file's workload has no pods to attribute
    "workload_map.gang",
    "workload_map.cluster",
    "workload_map.jq.safety",  # the static safety check is the validator's
    "workload_map.jq.worker",  # catalog expressions run in process
    "workload_map.jq.aio",
    "workload_map.jq.codegen",  # one object per definition: no batch is evaluated twice, none is generated
    "workload_map.jq.compiler",  # what is not a plain path runs the program stored with the catalog (jq.stored)
    "workload_map.jq.grammar",  # every catalog expression's tree comes from the blob: nothing is parsed
    # every catalog expression runs its stored program, and its roots and whether it is a plain path are stored
    # facts (jq.facts): no tree is decoded, nothing compiled or analysed, so the jq front end is never loaded
    "workload_map.jq.ast",
    "workload_map.jq.parser",
    "workload_map.jq.fastpath",
    "workload_map.jq.reads",
    "workload_map.jq.engine",  # what compiles an expression, and libjq's side: nothing is compiled
    "workload_map.jq.lexer",
    "workload_map.jq.fold",
    "workload_map.asyncio",
    "jq",  # the libjq binding: only for an expression the compiler leaves to libjq
    "subprocess",
    "asyncio",
    "tempfile",  # only to write the catalog blob
    "lightkube",
    "httpx",
    "rich",
    "yaml",  # PyYAML: only for a text the fast reader (model.yaml_subset) declines, and for -o yaml
    "importlib.metadata",
    "importlib.resources",
    "pkg_resources",
    # `describe -f FILE -o FORMAT` without a config file runs without click (cli.quick): no parser, no root group
    "click",
    "workload_map.cli.root",
    "workload_map.cli.options",
    "workload_map.cli.commands.describe",  # the click command; its work is commands.describe_files
    "gettext",  # click's
    "difflib",  # click's, for a mistyped option
    "typing_extensions",  # msgspec is imported without it (cli.main.import_msgspec_alone)
    "workload_map.resolve.tree",  # Workload.tree(): a view never needs it
    "workload_map.jq.writeback",  # Workload.update() and suspend/resume: a describe writes nothing
    "workload_map.resources.human",  # human-readable amounts are for tables and trees, not -o json
    "workload_map.resolve.references",  # the definition has no references annotation (cli.pipeline)
    "workload_map.model.references",
    # no dataclass on the path (msgspec Structs, or jq.policy's slotted class): `dataclasses` imports `inspect`
    "dataclasses",
    "inspect",
    "dis",
    "tokenize",
    "ast",  # the standard library's (the jq syntax tree is workload_map.jq.ast)
    # paths as strings (os.path) for the config file, the catalog and a plain -f file
    "pathlib",
    "urllib",
    "ipaddress",
    "threading",  # locks from _thread (allocate_lock, RLock: what threading's Lock() and RLock() make)
    "base64",  # only for bytes in jq.convert and for @base64 (with struct and binascii)
    "struct",
    "binascii",
    "encodings.utf_8_sig",  # _io drops a BOM itself: no codec search
    "workload_map.cli.command_table",  # the command names: for the help and a config file only
    "importlib.util",  # cli.deferred sets a deferred module's attributes itself
    # -o json: the tree renderer is imported for a tree only (a view's Origin is cli.render.origin)
    "workload_map.cli.render.tree",
    "workload_map.cli.render.text",
    "workload_map.cli.render.hints",
    "workload_map.cli.render.fmt",
    "workload_map.cli.render.shape",  # the tree's shape; a view's Origin names Group as a type only
    "select",  # _io polls a pipe, FIFO or stdin only
)

# what the interpreter imports at start-up (site, .pth files: certifi's imports importlib.resources and tempfile in
# some installs) is not the command's: only the modules the run added are judged
_DESCRIBE = """
import io, os, re, sys  # json only at the end: the console script defers it (and imports re itself)
baseline = set(sys.modules)
patterns = set(re._cache)  # every re.compile (a LazyPattern's first use, a msgspec Meta(pattern=...)) is cached
from workload_map.cli import finder
finder.install()  # as the console script does first
from workload_map.cli.main import import_msgspec_alone
import_msgspec_alone()
from workload_map.catalog import precompiled, registry
files = registry._builtin_files()
stamp = precompiled.validator_stamp()
key = precompiled.catalog_key(files, validator=stamp, parser=precompiled.analysis_stamp(stamp))
warm = os.path.exists(precompiled._blob_file(key, os.environ))  # blob_path's Path would import pathlib
from workload_map.cli.main import run
out, sys.stdout = sys.stdout, io.StringIO()
code = run(["describe", "-f", sys.argv[1], "-o", "json"])
view, sys.stdout = sys.stdout.getvalue(), out
added = sorted(set(sys.modules) - baseline)
parser = sys.modules.get("workload_map.jq.parser")
parsed = -1 if parser is None else parser._parse.cache_info().misses  # -1: not even imported
# modules in sys.modules whose code never ran (cli.deferred): type() reads no attribute, so it does not run them
deferred = sorted(name for name, module in sys.modules.items() if type(module).__name__ == "_Deferred")
fractions_compiled = "compiled" in vars(sys.modules["fractions"]._RATIONAL_FORMAT)  # a LazyPattern until used
compiled = sorted(str(key[1])[:60] for key in set(re._cache) - patterns)
quantity_string = "QuantityString" in vars(sys.modules["workload_map.resources.quantity"])  # made on first use
catalog = registry._BUILTIN
decoded = [catalog.decoded, sum(karta is not None for karta in catalog._kartas)]  # from the blob, in all
engine = sys.modules.get("workload_map.jq.engine")  # None: never imported (every expression ran a stored program)
read_back = sys.modules["workload_map.jq.facts"]._read_back  # the facts asked for, as they were read back
analysed = 0 if engine is None else engine.compile_expression.cache_info().currsize
facts = [analysed, len(read_back), sum(f is None for f in read_back.values())]
loaded = sys.modules["workload_map.jq.stored"]._loaded  # the stored programs asked for, as they were read back
programs = [len(loaded), sum(p is None for p in loaded.values())]
import json
lean = sorted(name for name, m in sys.modules.items() if type(getattr(m, "__loader__", None)) is finder._Loader)
print(json.dumps({"lean": lean, "warm": warm, "code": code, "view": json.loads(view), "modules": added,
                  "parsed": parsed, "deferred": deferred, "fractions_compiled": fractions_compiled,
                  "compiled": compiled, "quantity_string": quantity_string, "decoded": decoded, "facts": facts,
                  "programs": programs}))
"""


def _loaded(name: str, modules: list[str]) -> list[str]:
    return [module for module in modules if module == name or module.startswith(name + ".")]


def _python(code: str, *args: str, env: dict[str, str], bare: bool = False) -> Any:
    # bare: without `site` (-S), the tree's source and the site-packages on the path instead: this interpreter's
    # .pth files (an editable install's finder, certifi's) import pathlib and more before the command starts, which
    # would hide those from the budget
    flags = ["-S"] if bare else []
    if bare:
        env = {**env, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), *site.getsitepackages()])}
    done = subprocess.run(
        [sys.executable, *flags, "-c", code, *args], capture_output=True, text=True, env=env, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("WMAP_")}
    return {**base, "WMAP_CACHE_DIR": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


@pytest.mark.parametrize(
    ("example", "kind", "gpus"), [(EXAMPLE, "PyTorchJob", 33), (REPO / "examples" / "jobset.yaml", "JobSet", 8)]
)
def test_describing_a_file_imports_only_what_it_needs(env: dict[str, str], example: Path, kind: str, gpus: int) -> None:
    # The first run builds the catalog blob (and so validates the catalog); a run that finds the blob is the one
    # every later command makes. Another process editing a definition or a validator module in this tree between
    # two runs changes the key, so a run that found no blob is made again.
    for _attempt in range(4):
        found = _python(_DESCRIBE, str(example), env=env, bare=True)
        assert found["code"] == 0
        if found["warm"]:
            break
    assert found["warm"], "the catalog blob was rebuilt on every run"
    assert found["view"]["kind"] == kind and found["view"]["resources"]["gpus"] == gpus
    modules = found["modules"]
    unexpected = {name: _loaded(name, modules) for name in NOT_IN_DESCRIBE if _loaded(name, modules)}
    assert not unexpected, unexpected
    # the package's own modules after cli.main came through the leaner finder (cli.finder), msgspec's and the
    # standard library's submodules too
    lean = found["lean"]
    assert len(_loaded("workload_map", lean)) > 50 and _loaded("msgspec", lean) and "collections.abc" in lean, lean
    assert found["parsed"] <= 0  # not loaded (-1), or every tree came from the blob (jq.trees): nothing was lexed
    # imported by msgspec (uuid's platform, its JSON schema's textwrap and inspect, its toml and yaml), never run
    # (cli.deferred)
    assert found["deferred"] == sorted(DEFERRED_IN_DESCRIBE)
    assert not found["fractions_compiled"]  # quantities are Fractions of integers: no Fraction(str) in a describe
    # no pattern compiled: quantities are scanned without one (resources.quantity._scan), integral floats looked
    # for without one (jq.convert._may_hold_integral_float), and the view's quantity type with its pattern is made
    # only when a view is decoded or its schema written. resolve._json's `null` search is the one pattern a
    # describe compiles (a literal: ~0.3 M instructions, and faster than `in` on an object's text)
    assert found["compiled"] == ["b'null'"]
    assert not found["quantity_string"]
    assert found["decoded"] == [1, 1]  # of the catalog's definitions, the one the workload is resolved with
    # every expression the engine worked on (none, when every one has a stored program) had its roots and nesting
    # from the blob (jq.facts): none was analysed (the structure's reads ask for facts too, hence `>=`)
    analysed, read_back, unreadable = found["facts"]
    assert read_back > 2 and read_back >= analysed and unreadable == 0, found["facts"]
    # the catalog's expressions ran their stored programs (jq.stored), every one read back
    asked, unread = found["programs"]
    assert asked > 2 and unread == 0, found["programs"]


# What msgspec imports and a describe never uses: in sys.modules, their code not run (cli.main.import_msgspec_alone)
DEFERRED_IN_DESCRIBE = ("json", "platform", "textwrap", "msgspec.inspect", "msgspec.toml", "msgspec.yaml")


def test_the_definition_types_carry_their_annotations_as_objects() -> None:
    # model.types has no `from __future__ import annotations`: as strings, every decoder over the types (the
    # catalog blob's, at every start) compiles and evaluates each annotation first
    from workload_map.model import types

    structs = [value for value in vars(types).values() if isinstance(value, type) and issubclass(value, msgspec.Struct)]
    assert len(structs) > 20
    strings = [
        (cls.__name__, name) for cls in structs for name, hint in cls.__annotations__.items() if isinstance(hint, str)
    ]
    assert not strings, strings


def test_a_cold_run_builds_the_blob_and_validates_the_catalog(env: dict[str, str]) -> None:
    found = _python(_DESCRIBE, str(EXAMPLE), env=env)
    assert not found["warm"] and found["code"] == 0
    assert _loaded("workload_map.validation", found["modules"])  # the check recorded in the blob
    blobs = list((Path(env["WMAP_CACHE_DIR"]) / "catalog").glob("*.msgpack"))
    assert blobs


def test_version_imports_no_library() -> None:
    code = (  # no json here: it imports re
        "import io, sys\n"
        "baseline = set(sys.modules)\n"
        "from workload_map.cli.main import run\n"
        "out, sys.stdout = sys.stdout, io.StringIO()\n"
        "run(['--version'])\n"
        "sys.stdout = out\n"
        "print(' '.join(sorted(set(sys.modules) - baseline)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    modules = done.stdout.split()
    assert "workload_map.cli.main" in modules
    heavy = [
        name for name in ("click", "yaml", "msgspec", "re", "dataclasses", "workload_map.catalog") if name in modules
    ]
    assert not heavy, heavy


_TYPING_EXTENSIONS_AFTER = """
import json, sys, typing
from workload_map.cli.main import import_msgspec_alone
import_msgspec_alone()
import msgspec, msgspec._utils
blocked = "typing_extensions" not in sys.modules
import typing_extensions as te  # still importable afterwards (lightkube's and httpx's imports)

class Spec(msgspec.Struct):
    replicas: te.Annotated[int, msgspec.Meta(ge=0)]
    name: te.Annotated[str, msgspec.Meta(max_length=3)] = "a"

class Doc(te.TypedDict):
    kind: str
    count: te.NotRequired[int]

try:
    msgspec.convert({"replicas": -1}, Spec)
    refused = False
except msgspec.ValidationError:
    refused = True
doc = msgspec.json.decode(b'{"kind": "Job"}', type=Doc)
try:
    msgspec.json.decode(b'{"count": 1}', type=Doc)
    missing_refused = False
except msgspec.ValidationError:
    missing_refused = True
print(json.dumps({
    "blocked": blocked, "refused": refused, "doc": doc, "missing_refused": missing_refused,
    "stdlib_hints": msgspec._utils._get_type_hints is typing.get_type_hints,
    "spec": msgspec.to_builtins(msgspec.convert({"replicas": 2}, Spec)),
}))
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the console script imports msgspec as usual on 3.10")
def test_msgspec_without_typing_extensions_reads_types_the_same() -> None:
    found = _python(_TYPING_EXTENSIONS_AFTER, env=dict(os.environ))
    assert found["blocked"] and found["stdlib_hints"]
    assert found["refused"] and found["missing_refused"]  # Annotated constraints and TypedDict required keys hold
    assert found["doc"] == {"kind": "Job"} and found["spec"] == {"replicas": 2, "name": "a"}


def test_the_console_script_answers_version_without_importing_msgspec() -> None:
    # as the `wmap` script runs it: main() with no arguments (the collector paused, the quick exit); the modules it
    # added are printed by an atexit handler, which the quick exit runs before it ends the process
    code = (
        "import atexit, sys\n"
        "baseline = set(sys.modules)\n"
        "atexit.register(lambda: sys.stderr.write(' '.join(sorted(set(sys.modules) - baseline))))\n"
        "sys.argv = ['wmap', '--version']\n"
        "from workload_map.cli.main import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    modules = done.stderr.split()
    assert done.stdout.strip() and "workload_map.cli.main" in modules
    never = ("click", "msgspec", "typing_extensions", "re", "workload_map.cli.app")
    heavy = [name for name in never if name in modules]
    assert not heavy, heavy


# None: msgspec compiles a `Meta(pattern=...)` when the annotated type is made, and the one such type, the quantity
# syntax the JSON view's schema states and its decoding checks, is made on first use (`quantity.QuantityString`).
ALLOWED_IMPORT_COMPILES: set[tuple[str, str]] = set()

_COMPILES = r"""
import importlib, json, pkgutil, re, sys
import workload_map
compiles = []
original = re._compile
def recording(pattern, flags):
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.endswith(("re/__init__.py", "enum.py")):
        frame = frame.f_back
    if frame is not None and frame.f_code.co_name == "<module>" and "/workload_map/" in frame.f_code.co_filename:
        compiles.append([frame.f_code.co_filename.split("/src/")[-1].split("site-packages/")[-1], frame.f_lineno,
                         str(getattr(pattern, "pattern", pattern))[:80]])
    return original(pattern, flags)
re._compile = recording
failed = []
for info in pkgutil.walk_packages(workload_map.__path__, "workload_map."):
    try:
        importlib.import_module(info.name)
    except ImportError as exc:  # an optional extra that is not installed
        failed.append([info.name, str(exc)])
print(json.dumps({"compiles": compiles, "failed": failed}))
"""


def test_no_module_compiles_a_regular_expression_when_imported() -> None:
    found = _python(_COMPILES, env=dict(os.environ))
    assert not found["failed"], found["failed"]  # every module imported (the test extra installs the optional ones)
    unexpected = [entry for entry in found["compiles"] if (entry[0], entry[2]) not in ALLOWED_IMPORT_COMPILES]
    assert not unexpected, unexpected


_FROZEN_CATALOG = """
import atexit, gc, json, sys
def report():
    from workload_map.catalog import registry
    catalog = registry._BUILTIN  # loaded by the run: the index at hand, the definitions decoded when asked for
    tracked = {id(obj) for obj in gc.get_objects()}  # generations 0-2: a frozen object is in none of them
    held = [catalog, catalog.heads, *catalog.heads, catalog._bodies, catalog._trees]
    decoded = [karta.name for karta in catalog._kartas if karta is not None]
    sys.stderr.write(json.dumps({"heads": len(catalog.heads), "tracked": sum(id(k) in tracked for k in held),
                                 "decoded": catalog.decoded, "names": decoded,
                                 "frozen": gc.get_freeze_count(), "enabled": gc.isenabled()}))
atexit.register(report)  # the quick exit runs atexit handlers before it ends the process
sys.argv = ["wmap", "describe", "-f", sys.argv[1], "-o", "json"]
from workload_map.cli.main import main
main()
"""


def test_the_console_script_loads_the_catalog_before_the_collector_resumes(env: dict[str, str]) -> None:
    # made while the collector sleeps, the catalog's index and encodings are frozen with the modules
    # (cli.quick._load_catalog): a collection never walks them. Of its definitions, the describe decoded the one it
    # resolved with (catalog.precompiled.Definitions), and no other
    for _attempt in range(4):  # the first run builds the blob (every definition from the YAML); then it is found
        done = subprocess.run(
            [sys.executable, "-c", _FROZEN_CATALOG, str(EXAMPLE)],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        found = json.loads(done.stderr)
        if found["decoded"]:
            break
    assert found["heads"] > 50 and found["tracked"] == 0 and found["enabled"]
    assert found["decoded"] == 1 and len(found["names"]) == 1 and "pytorchjob" in found["names"][0], found
    assert found["frozen"] > 10_000
