"""The cases of the library fuzz suite (`test_fuzz_library.py`) and the fork server that runs each one in a child
process with RLIMIT_AS 512 MiB and a 5 s timer. No hypothesis here: the server imports only the library.

A case is plain data (printable, so hypothesis can shrink it and an `@example` can hold it): which fixture or
definition to start from and a list of mutations, whose hostile values are specs (`("bigint", 5000)`, `("deep",
900)`, `("cycle",)`, `("nan",)`, ...) turned into values in the child. The child calls the public API
(`load_definitions`, `loads_definitions`, `scan_definitions`, `validate`, `Workload`, `resolve`, `build_view`,
`attribute`, `plan`, `export`, write-back, suspend/resume) and lets only `WorkloadMapError` pass: anything else, a
crash, the memory cap or the timer is the case's failure, reported with its traceback.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import decimal
import math
import os
import pickle
import signal
import struct
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
MEMORY_CAP = 512 * 1024 * 1024
TIMEOUT_SECONDS = 5

# --- hostile values, as specs ------------------------------------------------------------------------------------

# jq expressions a hostile definition may carry (the static check must refuse or the engine must contain them)
JQ_POOL: tuple[str, ...] = (
    ".",
    "..",
    ".spec",
    ".metadata.name",
    ".spec.replicas // 1",
    ".spec.template",
    ".spec.x[536870911]",
    "1" * 5000,
    "1e4300",
    ".a" * 300,
    "(" * 200 + "." + ")" * 200,
    "[.[]?]",
    ".[]",
    "def f: f; f",
    'error("x")',
    'error("x" * 100000)',
    "limit(5; repeat(1))",
    "env",
    "$__loc__",
    "input",
    "nan",
    "infinite",
    "-infinite",
    '"1:30"',
    "-4",
    "null",
    "[]",
    "{}",
    '""',
    "tostring",
    ".spec | keys[]",
    ".spec | to_entries[] | .key",
    "def f: (.,.); def g: f|f|f|f|f|f|f|f|f|f; reduce (g|g) as $x (null; [.])",
    ".a[",
    "\x00",
    ".spec.replicatedJobs[]?.name",
)

SCALARS: tuple[Any, ...] = (None, True, False, 0, 1, -1, -4, 2**31, 2**63, 2**70, 0.5, 3.0, "", "x", "1:30", "-4")


def materialize(spec: Any, root: Any = None, parent: Any = None) -> Any:
    """The value a spec stands for (`("bigint", digits)`, `("deep", levels)`, `("cycle",)`, ...)."""
    if not isinstance(spec, tuple) or not spec:
        return spec
    kind, *args = spec
    if kind == "value":
        return copy.deepcopy(args[0])
    if kind == "scalar":
        return SCALARS[args[0] % len(SCALARS)]
    if kind == "bigint":
        digits = max(1, args[0])
        return (-1 if len(args) > 1 and args[1] else 1) * int("1" * min(digits, 4300)) * 10 ** max(0, digits - 4300)
    if kind == "bigstring":
        return "9" * args[0]
    if kind == "nan":
        return math.nan
    if kind == "inf":
        return -math.inf if args and args[0] else math.inf
    if kind == "deep":
        value: Any = args[1] if len(args) > 1 else {}
        for index in range(args[0]):
            value = [value] if index % 3 == 2 else {"a": value}
        return value
    if kind == "cycle":
        return root if root is not None else parent
    if kind == "parent":
        return parent
    if kind == "jq":
        return JQ_POOL[args[0] % len(JQ_POOL)]
    if kind == "odd":  # values of no JSON type
        return (
            {1, 2},
            frozenset({"a"}),
            (1, 2),
            b"bytes",
            complex(1, 2),
            decimal.Decimal("1.5"),
            datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc),
            datetime.date(2026, 1, 1),
            float("-0.0"),
            {(1, 2): "tuple key"},
            {None: 1, 1: 2, 1.5: 3, False: 4},
        )[args[0] % 11]
    if kind == "list":
        return [materialize(item, root, parent) for item in args[0]]
    if kind == "dict":
        return {str(key): materialize(item, root, parent) for key, item in args[0]}
    return spec


def _paths(value: Any, prefix: tuple[Any, ...] = (), limit: int = 4000) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, prefix)]
    while stack and len(out) < limit:
        node, where = stack.pop()
        if isinstance(node, dict):
            for key in list(node)[:50]:
                out.append((*where, key))
                stack.append((node[key], (*where, key)))
        elif isinstance(node, list):
            for index in range(min(len(node), 50)):
                out.append((*where, index))
                stack.append((node[index], (*where, index)))
    out.sort(key=repr)
    return out


def apply_ops(document: Any, ops: list[tuple[Any, ...]]) -> Any:
    """`document` changed by each op: ("replace", choice, spec), ("drop", choice), ("wrap", choice),
    ("add", choice, key, spec) on the path `choice` picks (modulo the number of paths)."""
    for op in ops:
        paths = _paths(document)
        if not paths:
            if op[0] == "replace":
                document = materialize(op[2], document, document)
            continue
        path = paths[op[1] % len(paths)]
        parent: Any = document
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if op[0] == "drop":
            del parent[last]
        elif op[0] == "replace":
            parent[last] = materialize(op[2], document, parent)
        elif op[0] == "wrap":
            parent[last] = [parent[last]] if op[1] % 2 else {"wrapped": parent[last]}
        elif op[0] == "add" and isinstance(parent[last], dict):
            parent[last][str(op[2])] = materialize(op[3], document, parent[last])
    return document


# --- the fixtures, loaded once in the server ------------------------------------------------------------------------

_FIXTURES: list[tuple[str, Any, dict[str, Any], list[Any], list[Any]]] = []
_DEFINITIONS: list[dict[str, Any]] = []


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def fixtures() -> list[tuple[str, Any, dict[str, Any], list[Any], list[Any]]]:
    """(name, definition, object, pods, owners) of every catalog fixture."""
    if not _FIXTURES:
        from workload_map.catalog import builtin_registry

        registry = builtin_registry()
        for directory in sorted((REPO / "tests" / "fixtures" / "catalog").iterdir()):
            if not (directory / "workload.yaml").is_file():
                continue
            obj = _load(directory / "workload.yaml")
            found = registry.for_object(obj)
            if found is None:
                continue
            pods = _load(directory / "pods.yaml")["items"] if (directory / "pods.yaml").is_file() else []
            owners = _load(directory / "owners.yaml")["items"] if (directory / "owners.yaml").is_file() else []
            _FIXTURES.append((directory.name, found.karta, obj, pods, owners))
    return _FIXTURES


def definitions() -> list[dict[str, Any]]:
    """Every built-in definition as the dict it is loaded from."""
    if not _DEFINITIONS:
        from workload_map.catalog import builtin_definitions
        from workload_map.model import to_dict

        _DEFINITIONS.extend(to_dict(karta) for karta in builtin_definitions())
    return _DEFINITIONS


# --- running a case ---------------------------------------------------------------------------------------------------


def _call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The function's result, or None when it raised one of the library's own errors (anything else escapes)."""
    from workload_map import WorkloadMapError

    try:
        return function(*args, **kwargs)
    except WorkloadMapError:
        return None


def _exercise(karta: Any, obj: Any, pods: Any, owners: Any) -> None:
    """Everything the public API does with one definition, object, pods and owners."""
    from workload_map import Workload, attribute, build_view, export, plan, validate
    from workload_map.gang import FORMATS
    from workload_map.resolve import resolve

    _call(validate, karta)
    resolution = _call(resolve, karta, obj)
    if resolution is None:
        resolution = _call(resolve, karta, obj, validate=False, check_gvk=False)
    if resolution is not None:
        _ = (resolution.errors, resolution.warnings, resolution.status, resolution.object)
        _call(resolution.to_dict)
        for component in resolution:
            for instance in component.instances.values():
                _ = (instance.pod_template, instance.requests, instance.desired_replicas, instance.min_replicas)
        _call(build_view, resolution)
        attribution = _call(attribute, resolution, pods, owners)
        _call(attribute, resolution, pods, owners, check_ownership=False)
        if attribution is not None:
            view = _call(build_view, resolution, attribution)
            if view is not None:
                _call(view.to_dict)
        gang_plan = _call(plan, resolution, pods)
        if gang_plan is None:
            gang_plan = _call(plan, resolution)
        if gang_plan is not None:
            _call(gang_plan.to_dict)
            for format_ in FORMATS:
                _call(export, gang_plan, format_)
    workload = _call(Workload, karta, obj)
    if workload is None:
        workload = _call(Workload, karta, obj, validate=False, check_gvk=False)
    if workload is not None:
        _write_back(workload)


def _write_back(workload: Any) -> None:
    from workload_map import WorkloadMapError

    for component in workload:
        for read, write in (
            ("pod_template_specs", "update_pod_template_specs"),
            ("pod_specs", "update_pod_specs"),
            ("pod_metadata", "update_pod_metadata"),
            ("fragmented_pod_specs", "update_fragmented_pod_specs"),
        ):
            try:
                values = getattr(component, read)
            except WorkloadMapError:
                continue
            if values is not None:
                _call(getattr(component, write), values)
        _call(lambda c=component: c.scales)
        _call(lambda c=component: c.status)
    _call(workload.suspend)
    _call(workload.resume)
    _call(workload.merge_patch)
    _call(workload.to_object)
    _call(workload.tree)


def case_manifest(payload: dict[str, Any]) -> str:
    """A catalog fixture's object, pods and owners, each mutated."""
    name, karta, obj, pods, owners = fixtures()[payload["fixture"] % len(fixtures())]
    obj = apply_ops(copy.deepcopy(obj), payload.get("object", []))
    pods = apply_ops(copy.deepcopy(pods), payload.get("pods", []))
    owners = apply_ops(copy.deepcopy(owners), payload.get("owners", []))
    _exercise(karta, obj, pods, owners)
    return name


def case_definition(payload: dict[str, Any]) -> str:
    """A built-in definition's dict, mutated, loaded every way, then used on the fixture object of its kind."""
    from workload_map import load_definitions, loads_definitions, scan_definitions
    from workload_map.model import dump_json, dump_yaml

    source = definitions()[payload["definition"] % len(definitions())]
    value = apply_ops(copy.deepcopy(source), payload.get("ops", []))
    loaded = _call(load_definitions, value) or []
    result = _call(scan_definitions, value)
    if result is not None:
        loaded = loaded or list(result.definitions)
    for text in _texts(value):
        loaded = loaded or _call(loads_definitions, text) or []
        _call(scan_definitions, text)
    for karta in loaded[:1]:
        _call(dump_yaml, karta)
        _call(dump_json, karta)
        for fixture_name, _, obj, pods, owners in fixtures():
            if fixture_name == source["metadata"]["name"] or fixture_name.startswith(source["metadata"]["name"]):
                _exercise(karta, copy.deepcopy(obj), copy.deepcopy(pods), copy.deepcopy(owners))
                break
        else:
            _exercise(karta, copy.deepcopy(fixtures()[0][2]), [], [])
    return str(source["metadata"]["name"])


def _texts(value: Any) -> list[str]:
    """The value as YAML and JSON text, when it has such a form (a cycle or a value of no JSON type has none)."""
    import json

    texts: list[str] = []
    with contextlib.suppress(Exception):
        texts.append(json.dumps(value))
    with contextlib.suppress(Exception):
        texts.append(yaml.safe_dump(value, sort_keys=False))
    return texts


def case_text(payload: dict[str, Any]) -> str:
    """YAML/JSON text made of pieces (definitions, hostile scalars, syntax errors, aliases, `---`)."""
    from workload_map import load_definitions, loads_definitions, scan_definitions
    from workload_map.model import parse_documents_each

    text = payload["text"]
    _call(loads_definitions, text)
    _call(scan_definitions, text)
    _call(parse_documents_each, text)
    result = _call(scan_definitions, text)
    for karta in (result.definitions if result is not None else [])[:2]:
        _exercise(karta, copy.deepcopy(fixtures()[0][2]), [], [])
    if "\n" not in text and len(text) < 200:
        _call(load_definitions, text)  # taken for a path
    return f"{len(text)} characters"


def case_arguments(payload: dict[str, Any]) -> str:
    """Every public function given a hostile value in place of each argument."""
    from workload_map import (
        Workload,
        attribute,
        build_view,
        export,
        load_definitions,
        loads_definitions,
        plan,
        scan_definitions,
        validate,
    )
    from workload_map.resolve import resolve

    value = materialize(payload["value"])
    _, karta, obj, pods, owners = fixtures()[payload.get("fixture", 0) % len(fixtures())]
    resolution = resolve(karta, copy.deepcopy(obj))
    if isinstance(value, dict) and not value:
        value = {"owners": owners}  # an owners-shaped mapping where a pod or a plan belongs
    calls: list[Callable[[], Any]] = [
        lambda: load_definitions(value),
        lambda: scan_definitions(value),
        lambda: loads_definitions(value),
        lambda: validate(value),
        lambda: Workload(value, obj),
        lambda: Workload(karta, value),
        lambda: Workload(karta, obj, policy=value),
        lambda: Workload(karta, obj, related=value),
        lambda: resolve(karta, value),
        lambda: resolve(value, obj),
        lambda: build_view(value),
        lambda: build_view(resolution, value),
        lambda: build_view(resolution, gpu_resource_names=value),
        lambda: attribute(value, pods),
        lambda: attribute(resolution, value),
        lambda: attribute(resolution, pods, value),
        lambda: attribute(resolution, [value]),
        lambda: attribute(resolution, [value], check_ownership=False),
        lambda: plan(value),
        lambda: plan(resolution, value),
        lambda: plan(resolution, [value]),
        lambda: export(value, "kai"),
        lambda: export(_call(plan, resolution) or value, value),
    ]
    for call in calls:
        _call(call)
    return type(value).__name__


def case_harness(payload: dict[str, Any]) -> str:
    """For the harness's own test: sleep past the timer, allocate past the cap, or die of a signal."""
    import time

    if "sleep" in payload:
        time.sleep(payload["sleep"])
    if "allocate" in payload:
        block = bytearray(payload["allocate"])
        return str(len(block))
    if "signal" in payload:
        os.kill(os.getpid(), payload["signal"])
    return "done"


CASES: dict[str, Callable[[dict[str, Any]], str]] = {
    "harness": case_harness,
    "manifest": case_manifest,
    "definition": case_definition,
    "text": case_text,
    "arguments": case_arguments,
}


def run(kind: str, payload: dict[str, Any]) -> tuple[str, str]:
    """("ok", what ran) or ("escaped", the traceback of an exception that is not the library's own)."""
    try:
        return "ok", CASES[kind](payload)
    except BaseException as exc:
        if isinstance(exc, SystemExit | KeyboardInterrupt):
            raise
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=12))
        return "escaped", f"{type(exc).__name__}: {text[-6000:]}"


# --- the fork server ------------------------------------------------------------------------------------------------


def _send(stream: Any, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def _receive(stream: Any) -> Any:
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError
    (size,) = struct.unpack(">Q", header)
    return pickle.loads(stream.read(size))


def _child(kind: str, payload: dict[str, Any], write_fd: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    timer = payload.get("timer", TIMEOUT_SECONDS) if kind == "harness" else TIMEOUT_SECONDS
    signal.setitimer(signal.ITIMER_REAL, timer)  # SIGALRM's default action ends the process
    result = run(kind, payload)
    data = pickle.dumps(result)
    view = memoryview(data)
    while view:
        written = os.write(write_fd, view)
        view = view[written:]
    os.close(write_fd)


def run_isolated(kind: str, payload: dict[str, Any]) -> tuple[str, str]:
    """`run` in a forked child with the memory cap and the timer: ("ok" | "escaped" | "crashed", detail)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read_fd)
            _child(kind, payload, write_fd)
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks: list[bytes] = []
    while True:
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if chunks:
        try:
            return pickle.loads(b"".join(chunks))  # type: ignore[no-any-return]
        except Exception as exc:
            return "crashed", f"unreadable result ({exc})"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGALRM:
            return "crashed", "the case ran past its timer"
        return "crashed", f"the child died of signal {signal.Signals(number).name}"
    return "crashed", f"the child exited with status {os.WEXITSTATUS(status)} and no result"


def serve() -> None:
    """Answer (kind, payload) requests on stdin with `run_isolated` results on stdout, until stdin closes."""
    sys.setrecursionlimit(1000)
    import workload_map.gang
    import workload_map.pods
    import workload_map.resolve
    import workload_map.view  # noqa: F401 - every layer imported once, before the first fork

    fixtures()
    definitions()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            kind, payload = _receive(stdin)
        except EOFError:
            return
        _send(stdout, run_isolated(kind, payload))


if __name__ == "__main__":
    serve()
