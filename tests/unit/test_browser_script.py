"""scripts/browser.sh: how ./scripts/test finds the dashboard test's Chromium (docs/testing.md). The install branch
(apt-get as root) is not run here: it changes the machine; CI runs it on a machine without a browser."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "browser.sh"
BASH = shutil.which("bash") or "/bin/bash"


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BASH, str(SCRIPT)], capture_output=True, text=True, env=env, check=False)


def _program(directory: Path, name: str) -> Path:
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_wmap_chromium_names_the_browser(tmp_path: Path) -> None:
    browser = _program(tmp_path, "my-chrome")
    done = _run({"PATH": os.environ["PATH"], "WMAP_CHROMIUM": str(browser)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(browser)


def test_a_wmap_chromium_that_is_not_a_program_fails_saying_so(tmp_path: Path) -> None:
    done = _run({"PATH": os.environ["PATH"], "WMAP_CHROMIUM": str(tmp_path / "missing")})
    assert done.returncode == 1
    assert "is not a program" in done.stderr and str(tmp_path / "missing") in done.stderr


def test_a_browser_on_path_is_found_by_the_names_the_tests_look_for(tmp_path: Path) -> None:
    browser = _program(tmp_path, "chromium-browser")
    done = _run({"PATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(browser)


def test_without_a_browser_or_apt_get_it_fails_with_what_to_do(tmp_path: Path) -> None:
    done = _run({"PATH": str(tmp_path), "HOME": str(tmp_path)})  # no browser, no id, no apt-get on this PATH
    assert done.returncode == 1
    assert "apt-get install chromium, or set WMAP_CHROMIUM" in done.stderr
    assert done.stdout == ""
