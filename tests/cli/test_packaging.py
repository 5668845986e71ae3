"""Packaging: the krew manifest and its wrapper agree with the package, and the console scripts are declared."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import REPO
from workload_map import __version__

KREW = REPO / "krew"


def test_krew_manifest_is_a_plugin_whose_bin_is_the_wrapper_at_the_package_version() -> None:
    manifest = yaml.safe_load((KREW / "wmap.yaml").read_text())
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin" and manifest["metadata"]["name"] == "wmap"
    assert manifest["spec"]["version"] == f"v{__version__}"
    (platform,) = manifest["spec"]["platforms"]
    assert platform["bin"] == "kubectl-wmap"
    assert {"from": "kubectl-wmap", "to": "."} in platform["files"]
    assert len(platform["sha256"]) == 64 and platform["uri"].endswith(f"v{__version__}.tar.gz")
    wrapper = (KREW / "kubectl-wmap").read_text()
    assert f'VERSION="{__version__}"' in wrapper
    assert os.access(KREW / "kubectl-wmap", os.X_OK)


def test_krew_wrapper_explains_how_to_install_when_nothing_is_there(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(KREW / "kubectl-wmap"), "--version"],
        capture_output=True,
        text=True,
        env={"PATH": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "pipx install workload-map" in done.stderr


def test_console_scripts_are_declared() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {
        "wmap": "workload_map.cli.main:main",
        "kubectl-wmap": "workload_map.cli.main:main",
        "kubectl_complete-wmap": "workload_map.cli.main:kubectl_complete",
        "workload-map-controller": "workload_map.controller.main:console_main",  # docs/controller.md
    }
