"""Fixtures the CLI unit tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import REPO, Result, Wmap, invoke


@pytest.fixture
def wmap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Wmap:
    """`wmap` run in process from the repository root, with HOME in a temporary directory (no ~/.kube/config, no
    config file, no $KUBECONFIG: see `invoke`)."""
    monkeypatch.chdir(REPO)

    def call(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> Result:
        return invoke(args, home=tmp_path, stdin=stdin, env=env)

    return call
