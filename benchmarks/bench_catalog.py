"""Built-in catalog cost, as ratios against a baseline measured in the same run.

Rows:
* ``builtin_definitions()`` once the catalog is loaded (each call hands out the same frozen objects in a new list),
  against ``copy.deepcopy`` of the same definitions: what sharing frozen objects saves over defensive copies.
* the first load of the whole catalog from its YAML (read, parse, type every packaged definition), against parsing
  the same files with PyYAML's C loader alone: the price of typing and checking on top of YAML;
* the start-up load from the precompiled blob (read the files to key it, decode one msgpack blob), against the
  same PyYAML parse (issue 19: the YAML is parsed only when a definition changed).
* ``registry.for_object`` on a workload object, against a dict lookup by the same key: the price of a lookup.

Run alone: ``python benchmarks/bench_catalog.py``.
"""

from __future__ import annotations

import copy
from importlib import resources
from typing import Any

import yaml

from _common import best, row
from workload_map.catalog import builtin_definitions, builtin_registry, registry


def _best_us(stmt: Any, number: int, repeat: int = 5) -> float:
    """Microseconds per call, the best of `repeat` rounds of `number` calls with the collector off (as timeit)."""
    return best(stmt, repeat=repeat, number=number, gc_off=True) * 1e6


def rows() -> list[dict[str, Any]]:
    definitions = builtin_definitions()
    fresh = _best_us(builtin_definitions, 20)
    deep = _best_us(lambda: copy.deepcopy(definitions), 5)

    texts = [
        entry.read_text(encoding="utf-8")
        for entry in resources.files("workload_map.catalog").joinpath("definitions").iterdir()
        if entry.name.endswith(".yaml")
    ]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    def first_load() -> None:
        registry._parse_builtin(registry._builtin_files())

    first = _best_us(first_load, 1, repeat=3)
    registry._load_builtin()  # builds the precompiled blob if it is not there yet
    cached = _best_us(registry._load_builtin, 1, repeat=5)
    parse = _best_us(lambda: [yaml.load(text, Loader=loader) for text in texts], 1, repeat=3)

    reg = builtin_registry()
    obj = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "x"}}
    table = {("kubeflow.org", "v1", "PyTorchJob"): definitions[0]}
    lookup = _best_us(lambda: reg.for_object(obj), 5000)
    plain = _best_us(lambda: table.get(("kubeflow.org", "v1", "PyTorchJob")), 5000)
    return [
        row(
            f"builtin_definitions(), {len(definitions)} definitions, shared (vs copy.deepcopy of them)",
            fresh,
            deep,
            0.5,
            "us",
            digits=1,
            ratio_digits=3,
        ),
        row(
            "first load of the built-in catalog from YAML (vs PyYAML C-loader parse of the same files)",
            first / 1000,
            parse / 1000,
            None,
            "ms",
            digits=1,
        ),
        row(
            "start-up load of the built-in catalog, precompiled blob (vs PyYAML C-loader parse of the same files)",
            cached / 1000,
            parse / 1000,
            0.1,
            "ms",
            digits=2,
            ratio_digits=3,
        ),
        row("registry.for_object (vs a dict lookup by GVK)", lookup, plain, None, "us", digits=3, ratio_digits=1),
    ]


if __name__ == "__main__":
    for item in rows():
        print(item)
