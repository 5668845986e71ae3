"""The modules the console script defers (`cli.deferred`, `cli.main.import_msgspec_alone`): their code runs at
first use, once, in the module object every import statement hands out, and what they give is what the module
imported the usual way gives. Each case runs in a fresh interpreter: deferring changes `sys.modules`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, *args: str, path: Path | None = None) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WMAP_")}
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


# what is compared: a documented struct's JSON schema (msgspec dedents the docstring with textwrap, through its
# inspect module), what platform says, uuid's answers, and msgspec's TOML and YAML decoders
_COMPARED = '''
import msgspec, platform, uuid

class Doc(msgspec.Struct):
    """A documented struct.

        Indented lines, which msgspec's schema dedents with textwrap.
    """
    name: str
    count: int = 0

compared = [msgspec.json.schema(Doc), platform.system(), platform.machine(), str(uuid.uuid3(uuid.NAMESPACE_DNS, "x"))]
compared += [msgspec.toml.decode(b"a = 1", type=dict), msgspec.yaml.decode(b"a: [1, x]")]
'''

_STANDARD_LIBRARY = r"""
import json, subprocess, sys
from workload_map.cli.main import import_msgspec_alone
import_msgspec_alone()  # as the console script does first
names = ("platform", "textwrap", "msgspec.inspect", "msgspec.toml", "msgspec.yaml")
deferred = {name: type(sys.modules[name]).__name__ for name in names}
import uuid, platform, textwrap, msgspec
same_objects = uuid.platform is platform is sys.modules["platform"]
same_objects = same_objects and msgspec.inspect is sys.modules["msgspec.inspect"]
still_deferred = type(platform).__name__  # an import statement does not run the module
constants = [uuid._AIX, uuid._LINUX]
real = [platform.system() == "AIX", platform.system() == "Linux"]
exec(sys.argv[1])
after = {name: type(sys.modules[name]).__name__ for name in names}
from textwrap import dedent
plain = subprocess.run(  # the same, imported the usual way
    [sys.executable, "-c", sys.argv[1] + "import json; print(json.dumps(compared))"],
    capture_output=True, text=True, check=True,
).stdout
print(json.dumps({
    "deferred": deferred, "same_objects": same_objects, "still_deferred": still_deferred, "constants": constants,
    "real": real, "after": after, "dedent": dedent("  a\n  b"), "ours": compared, "plain": json.loads(plain),
    "uuid4": len(str(uuid.uuid4())),
}))
"""


@pytest.mark.skipif(sys.version_info < (3, 11) or os.name != "posix", reason="deferred on POSIX, Python 3.11+")
def test_deferred_standard_library_modules_give_what_a_plain_import_gives() -> None:
    found = _python(_STANDARD_LIBRARY, _COMPARED)
    names = ("platform", "textwrap", "msgspec.inspect", "msgspec.toml", "msgspec.yaml")
    assert found["deferred"] == dict.fromkeys(names, "_Deferred")
    assert found["same_objects"] and found["still_deferred"] == "_Deferred"
    assert found["constants"] == found["real"]  # uuid's _AIX and _LINUX, from the stand-in, as platform answers
    assert found["after"] == dict.fromkeys(names, "module")
    assert found["ours"] == found["plain"]  # the schema (docstring dedented), platform, uuid: as imported plainly
    assert found["dedent"] == "a\nb" and found["uuid4"] == 36


def _module(path: Path, name: str, body: str) -> None:
    (path / f"{name}.py").write_text(textwrap.dedent(body), encoding="utf-8")


def test_a_deferred_module_runs_once_at_its_first_use_even_from_two_threads(tmp_path: Path) -> None:
    _module(
        tmp_path,
        "slow_module",
        """
        import builtins, time
        builtins.slow_module_runs = getattr(builtins, "slow_module_runs", 0) + 1
        time.sleep(0.2)  # the second thread asks while this runs
        VALUE = 42
        """,
    )
    found = _python(
        """
        import builtins, json, sys, threading
        from workload_map.cli.deferred import defer
        module = defer("slow_module")
        import slow_module
        before = getattr(builtins, "slow_module_runs", 0)
        seen = []
        threads = [threading.Thread(target=lambda: seen.append(slow_module.VALUE)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(json.dumps({"same": module is slow_module is sys.modules["slow_module"], "before": before,
                          "runs": builtins.slow_module_runs, "seen": seen, "file": slow_module.__file__,
                          "plain": type(slow_module).__name__, "again": defer("slow_module") is None}))
        """,
        path=tmp_path,
    )
    assert found["same"] and found["before"] == 0
    assert found["runs"] == 1 and found["seen"] == [42, 42]
    assert found["file"] == str(tmp_path / "slow_module.py") and found["plain"] == "module" and found["again"]


def test_a_deferred_module_that_fails_is_not_left_imported(tmp_path: Path) -> None:
    _module(tmp_path, "broken_module", "VALUE = 1\nraise RuntimeError('broken at import')\n")
    _module(tmp_path, "self_asking", "import sys\nFIRST = 1\nSECOND = sys.modules[__name__].LATER\nLATER = 2\n")
    found = _python(
        """
        import json, sys
        from workload_map.cli.deferred import defer
        defer("broken_module"); defer("self_asking")
        import broken_module, self_asking
        errors = []
        for module, attribute in ((broken_module, "VALUE"), (self_asking, "FIRST")):
            try:
                getattr(module, attribute)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
        print(json.dumps({"errors": errors, "left": [n for n in ("broken_module", "self_asking") if n in sys.modules]}))
        """,
        path=tmp_path,
    )
    assert found["errors"] == [
        "RuntimeError: broken at import",
        "AttributeError: partially initialized module 'self_asking' has no attribute 'LATER'",
    ]
    assert found["left"] == []  # as after a failed import: the next import statement tries again


def test_nothing_is_deferred_that_another_finder_would_answer(tmp_path: Path) -> None:
    _module(tmp_path, "claimed_module", "VALUE = 'from the file'\n")
    found = _python(
        """
        import importlib.abc, importlib.machinery, json, sys
        from workload_map.cli.deferred import defer

        class Claims(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "claimed_module":
                    return importlib.machinery.ModuleSpec(name, None)
                return None

        sys.meta_path.insert(0, Claims())
        print(json.dumps({"claimed": defer("claimed_module") is None, "missing": defer("no_such_module") is None,
                          "builtin": defer("_thread") is None, "loaded": defer("json") is None}))
        """,
        path=tmp_path,
    )
    assert found == {"claimed": True, "missing": True, "builtin": True, "loaded": True}


_DATETIME = r"""
import importlib.util, json, sys
ran = []
def trace(frame, event, arg):
    if event == "call" and frame.f_code.co_filename.endswith("/datetime.py"):
        ran.append(frame.f_code.co_name)
sys.settrace(trace)
from workload_map.cli.main import import_msgspec_alone
import_msgspec_alone()  # as the console script does first: msgspec imports datetime
sys.settrace(None)
made = sys.modules["datetime"]
import datetime, msgspec
# datetime.py itself, run into a module object of its own (its classes are _datetime's, as ours are)
spec = importlib.util.spec_from_file_location("datetime", made.__file__)
real = importlib.util.module_from_spec(spec)
spec.loader.exec_module(real)
ours, theirs = vars(made), vars(real)
differ = sorted(
    key for key in set(ours) | set(theirs)
    if key not in ("__spec__", "__loader__")
    and not (key in ours and key in theirs and (ours[key] is theirs[key] or ours[key] == theirs[key]))
)
print(json.dumps({
    "ran": ran, "same_module": datetime is made, "differ": differ, "keys": sorted(ours) == sorted(theirs),
    "spec": [made.__spec__.name, made.__spec__.origin, made.__spec__.cached] == [spec.name, spec.origin, spec.cached],
    "loader": type(made.__loader__) is type(real.__loader__) and made.__loader__.path == real.__loader__.path,
    "classes": made.datetime is real.datetime and made.timezone.utc is real.UTC,
    "msgspec": msgspec.json.decode(b'"2026-12-01T22:00:00Z"', type=datetime.datetime).isoformat(),
}))
"""


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="datetime is made from _datetime on Python 3.11 only")
def test_datetime_made_from_its_c_implementation_is_the_module_a_plain_import_makes() -> None:
    found = _python(_DATETIME)
    assert found["ran"] == []  # not one line of datetime.py ran
    assert found["same_module"] and found["keys"] and found["differ"] == []
    assert found["spec"] and found["loader"] and found["classes"]
    assert found["msgspec"] == "2026-12-01T22:00:00+00:00"


_FRACTIONS = r"""
import json, re, subprocess, sys
from workload_map.cli.main import import_msgspec_alone
import_msgspec_alone()
import fractions
pattern = fractions._RATIONAL_FORMAT
before = [type(pattern).__name__, "compiled" in vars(pattern), re.compile.__module__]
texts = sys.argv[1:]
def read(text):
    try:
        return str(fractions.Fraction(text))
    except (ValueError, ZeroDivisionError) as exc:
        return f"{type(exc).__name__}: {exc}"
ours = [read(text) for text in texts]
plain = subprocess.run(
    [sys.executable, "-c", "import fractions, json, sys\n"
     "def read(t):\n    try:\n        return str(fractions.Fraction(t))\n"
     "    except (ValueError, ZeroDivisionError) as exc:\n        return f'{type(exc).__name__}: {exc}'\n"
     "print(json.dumps([read(t) for t in sys.argv[1:]]))", *texts],
    capture_output=True, text=True, check=True,
).stdout
print(json.dumps({"before": before, "after": "compiled" in vars(pattern), "ours": ours, "plain": json.loads(plain),
                  "flags": pattern.flags == re.VERBOSE | re.IGNORECASE}))
"""


def test_fractions_pattern_compiled_on_first_use_reads_text_as_a_plain_import_does() -> None:
    texts = ["3/7", " -1.5e3 ", "+2", "1_000/3", ".5", "1/0", "abc", "", "1.5E-2", "3 /7", "٣/٧", "0x10"]
    found = _python(_FRACTIONS, *texts)
    assert found["before"] == ["LazyPattern", False, "re"]  # not compiled at import; re.compile is re's again
    assert found["after"] and found["flags"]
    assert found["ours"] == found["plain"]
