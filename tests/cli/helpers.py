"""Running `wmap` for tests: in this process (`invoke`, fast, for unit tests) or as the installed executable
(`run_installed`, for the subprocess tests in tests/cli/).

Both isolate the run from the developer's environment: no config file, no `WMAP_OUTPUT`, no colour, 80 columns.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden"

_CLEARED = (
    "WMAP_OUTPUT",
    "WMAP_CONFIG",
    "WMAP_JQ_MODE",
    "WMAP_JQ_DEADLINE",
    "WMAP_JQ_MEMORY_MB",
    "WMAP_JQ_BUDGET",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR_FORCE",
    "KUBECONFIG",
)


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class Wmap(Protocol):
    """A test's way to run wmap: `wmap("describe", "-f", path, stdin=..., env=...)`."""

    def __call__(self, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> Result: ...


def clean_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _CLEARED}
    env.update({"COLUMNS": "80", "XDG_CONFIG_HOME": str(home / ".config"), "HOME": str(home), "TERM": "xterm"})
    env.update(extra or {})
    return env


@contextmanager
def environment(env: Mapping[str, str]) -> Iterator[None]:
    """`os.environ` replaced by `env` for the block (the CLI reads it in this process), then restored."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def invoke(
    args: Sequence[str], *, home: Path, stdin: str = "", env: Mapping[str, str] | None = None, prog: str = "wmap"
) -> Result:
    """Run `wmap args` in this process with captured stdin/stdout/stderr."""
    from workload_map.cli.main import run

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    try:
        with environment(clean_env(home, env)):
            code = run(list(args), prog_name=prog)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Result(code, out.getvalue(), err.getvalue())


def executable(name: str = "wmap") -> str:
    """The installed console script (next to this interpreter first, so a pyenv shim is not timed or used)."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed: run `pip install -e . --no-deps`")
    return found


def run_installed(
    args: Sequence[str],
    *,
    home: Path,
    stdin: str = "",
    env: Mapping[str, str] | None = None,
    name: str = "wmap",
    cwd: Path = REPO,
) -> Result:
    """Run the installed executable."""
    done = subprocess.run(
        [executable(name), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=clean_env(home, env),
        cwd=cwd,
        timeout=120,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)
