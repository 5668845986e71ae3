"""The console script's collector policy for `wmap get`'s rows (`cli.heap.KeptRows`, issue 19: scale): where the
start-up objects are frozen (the console script), a LIST's items and the rows built from them are frozen page by
page, each page's garbage collected first, and the rows are the same; anywhere else the collector is left alone.

The frozen cases run in a fresh interpreter: a freeze in the test process would outlive the test."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from workload_map.catalog import builtin_registry
from workload_map.cli.commands.get import make_rows
from workload_map.cli.heap import KeptRows, freezing

REPO = Path(__file__).resolve().parents[2]

# what the subprocesses share: 1,203 decoded JobSets (three pages of rows and a partial one)
_SET_UP = """
import gc, json, sys, threading
import yaml
from workload_map.catalog import builtin_registry
from workload_map.cli.commands.get import make_rows
from workload_map.cli import heap

base = yaml.safe_load(open("examples/jobset.yaml"))
def items(count):
    out = []
    for i in range(count):
        obj = json.loads(json.dumps(base))
        obj["metadata"]["name"] = f"train-{i}"
        out.append(json.loads(json.dumps(obj)))
    return out
definition = builtin_registry().for_object(base)
def summary(rows):
    return [(r.name, r.phase, r.phases, r.view.to_dict() if r.view else None) for r in rows]
"""


def _run(body: str) -> list[str]:
    code = _SET_UP + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _jobsets(count: int) -> list[dict[str, object]]:
    base = yaml.safe_load((REPO / "examples" / "jobset.yaml").read_text())
    return [json.loads(json.dumps({**base, "metadata": {**base["metadata"], "name": f"t-{i}"}})) for i in range(count)]


def test_a_process_that_froze_nothing_keeps_its_collector() -> None:
    objects = _jobsets(3)
    definition = builtin_registry().for_object(objects[0])
    assert definition is not None
    assert gc.get_freeze_count() == 0 and not freezing()  # the test process: nothing froze its start-up
    rows, warnings = make_rows(objects, definition, "JobSet", wide=True, listed=True)
    assert len(rows) == 3 and not warnings
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    kept = KeptRows(page=1)
    for _ in range(3):
        kept.built()
    kept.close()
    assert gc.get_freeze_count() == 0


def test_the_console_scripts_get_freezes_a_lists_items_and_rows_and_leaves_no_garbage_frozen() -> None:
    out = _run(
        """
        plain = summary(make_rows(items(1203), definition, "JobSet", wide=True, listed=True)[0])
        assert gc.get_freeze_count() == 0  # not the console script yet: nothing frozen
        # the resolutions do leave reference cycles: without the policy the collector has garbage to find
        gc.disable()
        make_rows(items(5), definition, "JobSet", wide=True, listed=True)
        gc.enable()
        cycles = gc.collect()
        gc.freeze()  # as the console script's start-up (cli.resume_gc)
        print(heap.freezing(), cycles > 0)
        listed = items(1203)
        before = gc.get_freeze_count()
        rows, warnings = make_rows(listed, definition, "JobSet", wide=True, listed=True)
        assert not warnings
        print(summary(rows) == plain, len(rows))
        tracked = {id(o) for o in gc.get_objects()}  # the generations the collector walks (not the frozen)
        print(gc.get_freeze_count() - before > 1203, id(listed[0]) in tracked, id(rows[-1]) in tracked)
        gc.unfreeze()
        print(gc.collect())  # every page's garbage was collected before its rows were frozen
        """
    )
    assert out == ["True", "True", "True", "1203", "True", "False", "False", "0"]


def test_not_a_listing_or_with_another_thread_running_nothing_is_frozen() -> None:
    out = _run(
        """
        gc.freeze()
        start = gc.get_freeze_count()

        def unfrozen(listed, rows):
            # nothing was added to the permanent generation (it may shrink: frozen start-up objects a first use
            # replaces, such as the catalog's remembered facts, are freed), and the items and rows are still in the
            # generations the collector walks
            tracked = {id(o) for o in gc.get_objects()}
            return gc.get_freeze_count() <= start and id(listed[0]) in tracked and id(rows[-1]) in tracked

        listed = items(600)
        rows, _ = make_rows(listed, definition, "JobSet", wide=False, listed=False)  # get -w, get TYPE NAME
        print(unfrozen(listed, rows))
        stop = threading.Event()
        other = threading.Thread(target=stop.wait)  # get across clusters asks them from threads
        other.start()
        print(heap.freezing())
        listed = items(600)
        rows, _ = make_rows(listed, definition, "JobSet", wide=False, listed=True)
        print(unfrozen(listed, rows))
        stop.set()
        other.join()
        gc.disable()
        print(heap.freezing(), heap.KeptRows()._on)
        """
    )
    assert out == ["True", "False", "True", "False", "False"]


def test_the_console_script_is_where_it_applies() -> None:
    """What `freezing()` reads is the console script's start-up freeze (`cli.resume_gc`); `run()` in a caller's
    process freezes nothing (tests/unit/test_cli_exit.py checks both sides of that)."""
    code = (
        "import atexit, sys\n"
        "from workload_map.cli import heap\n"
        "atexit.register(lambda: sys.stderr.write(f'{heap.freezing()}\\n'))\n"
        "sys.argv = ['wmap', 'describe', '-f', 'examples/pytorchjob.yaml', '-o', 'json']\n"
        "from workload_map.cli.main import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False, timeout=120
    )
    assert done.returncode == 0 and done.stderr == "True\n", done.stderr
