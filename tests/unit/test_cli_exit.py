"""How the console script ends (`cli.main._exit_now`): without the interpreter's teardown, but only after what a
user can see is done: the `atexit` handlers ran, stdout and stderr are flushed, and no other thread is running."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _script(body: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`body`, then the console script's `main()` with `args` as the command line."""
    code = f"import sys\n{body}\nsys.argv = ['wmap', *sys.argv[1:]]\nfrom workload_map.cli.main import main\nmain()\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, check=False, timeout=120
    )


def test_the_whole_output_and_the_exit_code_come_out() -> None:
    done = _script("", "describe", "-f", "examples/pytorchjob.yaml", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["resources"]["gpus"] == 33  # all of it, flushed before the exit


def test_an_error_keeps_its_exit_code_and_message() -> None:
    args = ("describe", "-f", "no-such-file.yaml")
    done = _script("", *args)
    code = f"from workload_map.cli.main import run\nprint(run({list(args)!r}))"
    in_process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.returncode == int(in_process.stdout.split()[-1]) == 1
    assert done.stdout == "" and done.stderr == in_process.stderr
    assert done.stderr.startswith("error: no-such-file.yaml: ")


def test_atexit_handlers_run_and_what_they_print_is_flushed() -> None:
    body = "import atexit\natexit.register(lambda: sys.stderr.write('handler ran\\n'))"
    done = _script(body, "--version")
    assert done.returncode == 0
    assert done.stderr == "handler ran\n"


def test_a_running_thread_gets_the_normal_exit(tmp_path: Path) -> None:
    marker = tmp_path / "done"
    body = (
        "import threading, time, pathlib\n"
        f"def work():\n    time.sleep(0.5)\n    pathlib.Path({str(marker)!r}).write_text('finished')\n"
        "threading.Thread(target=work).start()"
    )
    done = _script(body, "--version")
    assert done.returncode == 0 and done.stdout.strip()
    assert marker.read_text() == "finished"  # the interpreter joined the thread before it exited


def test_a_caller_in_this_process_gets_system_exit() -> None:
    code = (
        "from workload_map.cli.main import main\n"
        "try:\n    main(['--version'])\n"
        "except SystemExit as exc:\n    print('exit', exc.code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.splitlines()[-1] == "exit 0"


def test_the_collector_sleeps_through_the_imports_only() -> None:
    """The console script pauses the cyclic collector while the command's modules are imported (cli.pause_gc) and
    turns it back on, the imported objects frozen, before the command runs; a caller of `run` is left alone."""
    report = (
        "import atexit, gc\n"
        "atexit.register(lambda: sys.stderr.write(f'{gc.isenabled()} {gc.get_freeze_count() > 1000}\\n'))"
    )
    done = _script(report, "describe", "-f", "examples/pytorchjob.yaml", "-o", "json")
    assert done.returncode == 0 and done.stderr == "True True\n"
    code = (
        "import gc, io, sys\n"
        "from workload_map.cli.main import run\n"
        "out, sys.stdout = sys.stdout, io.StringIO()\n"
        "run(['describe', '-f', 'examples/pytorchjob.yaml', '-o', 'json'])\n"
        "sys.stdout = out\n"
        "print(gc.isenabled(), gc.get_freeze_count())\n"
    )
    in_process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert in_process.stdout.split() == ["True", "0"]
