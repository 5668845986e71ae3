"""Fuzz: no builtin exception type escapes the public API (issue 16, "Proof").

Hypothesis generates manifests, pods, owners and definitions (catalog fixtures and definitions mutated with
generated values, deep nesting, huge integers, NaN and infinities, values of no JSON type, cycles), YAML/JSON text
and wrong argument types, and `tests/unit/fuzz_cases.py` calls the public functions on them (`load_definitions`,
`loads_definitions`, `scan_definitions`, `validate`, `resolve`, `Workload` with write-back and suspend/resume,
`build_view`, `attribute`, `plan`, `export`). A case passes when every call returns or raises a `WorkloadMapError`;
any other exception, a crash, the 512 MiB address-space cap or the 5 s timer fails it.

Each case runs in its own child process (a fork of a small server process that imported the library once), with
RLIMIT_AS 512 MiB and a 5 s timer. The suite is derandomized (the same cases on every run, about a minute in all);
`WMAP_FUZZ=long` explores: random cases, many more of them. Every failure found is kept below as an `@example`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.unit import fuzz_cases

REPO = Path(__file__).resolve().parents[2]
LONG = os.environ.get("WMAP_FUZZ") == "long"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the cases run in forked children (POSIX)")


FUZZ = settings(
    derandomize=not LONG,  # the same cases on every run (CI too); random exploration with WMAP_FUZZ=long
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)


def fuzz(examples: int) -> settings:
    """`examples` cases (the suite takes well under a minute), or 20 times as many random ones with WMAP_FUZZ=long."""
    return settings(FUZZ, max_examples=examples * 20 if LONG else examples)


# --- the server -----------------------------------------------------------------------------------------------------


class Server:
    """The fork server (`fuzz_cases.serve`) in a fresh interpreter: one request, one child, one answer."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "src"), *sys.path])}
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from tests.unit.fuzz_cases import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=REPO,
            env=env,
        )

    def run(self, kind: str, payload: dict[str, Any]) -> tuple[str, str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        fuzz_cases._send(self.process.stdin, (kind, payload))
        result: tuple[str, str] = fuzz_cases._receive(self.process.stdout)
        return result

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    running = Server()
    yield running
    running.close()


def check(server: Server, kind: str, payload: dict[str, Any]) -> None:
    status, detail = server.run(kind, payload)
    assert status == "ok", f"{kind} case {payload!r}: {status}: {detail}"


# --- strategies: every hostile value is a spec (printable; made into a value in the child) -----------------------

KEYS = st.sampled_from(["a", "name", "spec", "metadata", "replicas", "containers", "resources", "0", ""]) | st.text(
    max_size=5
)
JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=3),
    max_leaves=8,
)
HOSTILE = st.one_of(
    st.tuples(st.just("value"), JSONISH),
    st.tuples(st.just("scalar"), st.integers(0, 40)),
    st.tuples(st.just("bigint"), st.sampled_from([20, 400, 4300, 4301, 5000]), st.booleans()),
    st.tuples(st.just("bigstring"), st.sampled_from([11, 100, 5000])),
    st.just(("nan",)),
    st.tuples(st.just("inf"), st.booleans()),
    st.tuples(st.just("deep"), st.sampled_from([10, 99, 101, 400, 501, 1000, 3000])),
    st.just(("cycle",)),
    st.just(("parent",)),
    st.tuples(st.just("jq"), st.integers(0, 100)),
    st.tuples(st.just("odd"), st.integers(0, 20)),
)
OP = st.one_of(
    st.tuples(st.just("replace"), st.integers(0, 10**6), HOSTILE),
    st.tuples(st.just("drop"), st.integers(0, 10**6)),
    st.tuples(st.just("wrap"), st.integers(0, 10**6)),
    st.tuples(st.just("add"), st.integers(0, 10**6), KEYS, HOSTILE),
)
OPS = st.lists(OP, max_size=4)

YAML_PIECES = st.sampled_from(
    [
        "apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: a}\n",
        "spec:\n  structureDefinition:\n    rootComponent:\n      name: r\n",
        "      kind: {group: x.io, version: v1, kind: X}\n      statusDefinition: {statusMappings: {}}\n",
        "---\n",
        "...\n",
        f"replicas: {'1' * 5000}\n",
        "replicas: .nan\n",
        "replicas: -.inf\n",
        "replicas: 1:30\n",
        "a: &x [*x]\n",
        "a: &a [1]\nb: &b [*a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n",
        "x: [1, 2\n",
        "x: {a: 1, a: 2}\n",
        "- " * 600 + "1\n",
        "[" * 600 + "]" * 600 + "\n",
        "!!python/object:os.system\n",
        "key: !!binary aGVsbG8=\n",
        "t: 2026-01-10T10:00:00Z\n",
        '{"kind": "Karta", "apiVersion": "run.ai/v1alpha1"}\n',
        "\ufeff\x00\x07\n",
        "? [complex, key]\n: 1\n",
        "%YAML 1.1\n---\n",
        "<<: {a: 1}\n",
    ]
)
TEXT = st.lists(YAML_PIECES | st.text(max_size=20), min_size=1, max_size=6).map("".join)


# --- the suites -----------------------------------------------------------------------------------------------------


@fuzz(250)
@given(
    fixture=st.integers(0, 10**6),
    obj=OPS,
    pods=OPS,
    owners=st.lists(OP, max_size=2),
)
@example(fixture=0, obj=[("replace", 0, ("cycle",))], pods=[], owners=[])
@example(fixture=1, obj=[("replace", 3, ("deep", 1000))], pods=[("replace", 2, ("deep", 3000))], owners=[])
@example(fixture=2, obj=[("replace", 5, ("nan",))], pods=[("replace", 1, ("bigint", 5000, False))], owners=[])
@example(fixture=3, obj=[], pods=[("replace", 0, ("scalar", 0))], owners=[("replace", 0, ("odd", 0))])
@example(fixture=4, obj=[("replace", 7, ("odd", 9))], pods=[("add", 0, "labels", ("cycle",))], owners=[])
# found: a negative 4300-digit integer msgspec will not read back, next to a null (the NaN check's msgpack overflowed)
@example(fixture=0, obj=[("add", 7, "x", ("scalar", 0)), ("replace", 25, ("bigint", 4300, True))], pods=[], owners=[])
def test_manifests_pods_and_owners(server: Server, fixture: int, obj: list[Any], pods: list[Any], owners: Any) -> None:
    check(server, "manifest", {"fixture": fixture, "object": obj, "pods": pods, "owners": owners})


@fuzz(200)
@given(definition=st.integers(0, 10**6), ops=OPS)
@example(definition=0, ops=[("replace", 11, ("jq", 32))])  # the reduce that nests arrays 2^17 deep
@example(definition=1, ops=[("replace", 4, ("bigint", 5000, True))])
@example(definition=2, ops=[("replace", 0, ("cycle",))])
@example(definition=3, ops=[("replace", 9, ("deep", 1000))])
@example(definition=5, ops=[("replace", 20, ("jq", 6))])  # .spec.x[536870911]
@example(definition=0, ops=[("replace", 1, ("deep", 3000))])  # found: `kind` 3000 deep (its repr recursed)
@example(definition=0, ops=[("replace", 0, ("bigint", 5000, False))])  # found: `apiVersion` of 5000 digits
def test_definitions(server: Server, definition: int, ops: list[Any]) -> None:
    check(server, "definition", {"definition": definition, "ops": ops})


@fuzz(150)
@given(text=TEXT)
@example(text="a: 1\n---\nb: " + "1" * 5000 + "\n---\nc: [1\n---\nd: .nan\n")
def test_yaml_and_json_text(server: Server, text: str) -> None:
    check(server, "text", {"text": text})


@fuzz(150)
@given(value=HOSTILE, fixture=st.integers(0, 10**6))
@example(value=("scalar", 0), fixture=0)  # None everywhere: validate(None), plan(r, pods=[None]), ...
@example(value=("scalar", 3), fixture=0)  # 0: load_definitions(0)
@example(value=("bigstring", 5000), fixture=0)
@example(value=("odd", 3), fixture=0)  # bytes
@example(value=("deep", 1000), fixture=0)  # found: export(plan, format=<1000 deep>) recursed in its repr
@example(value=("jq", 34), fixture=0)  # found: load_definitions("\x00"), a path with a NUL (ValueError)
@example(value=("jq", 9), fixture=0)  # found: load_definitions(".a" * 300), a path too long (OSError)
def test_wrong_argument_types(server: Server, value: Any, fixture: int) -> None:
    check(server, "arguments", {"value": value, "fixture": fixture})


def test_the_harness_reports_what_escapes_and_what_crashes(server: Server) -> None:
    """A builtin exception, the timer, the memory cap and a signal each fail the case, with what happened."""
    assert server.run("harness", {})[0] == "ok"
    status, detail = server.run("manifest", {"fixture": "not a number"})
    assert (status, detail.split(":")[0]) == ("escaped", "TypeError")
    assert server.run("harness", {"sleep": 10, "timer": 0.5}) == ("crashed", "the case ran past its timer")
    status, detail = server.run("harness", {"allocate": 2 * fuzz_cases.MEMORY_CAP})
    assert (status, detail.split(":")[0]) == ("escaped", "MemoryError")
    assert server.run("harness", {"signal": signal.SIGSEGV}) == ("crashed", "the child died of signal SIGSEGV")
