"""`wmap serve`'s flags, checked before anything connects: --bind's forms and a bad one (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import invoke
from workload_map.cli.commands import COMMANDS
from workload_map.cli.commands.serve import parse_bind
from workload_map.cli.errors import UsageError


def test_serve_is_a_registered_command() -> None:
    assert COMMANDS["serve"].available


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:8080", ("127.0.0.1", 8080)),
        ("0.0.0.0:0", ("0.0.0.0", 0)),
        (":9400", ("0.0.0.0", 9400)),
        ("[::1]:8080", ("::1", 8080)),
        ("localhost:65535", ("localhost", 65535)),
    ],
)
def test_bind_forms(value: str, expected: tuple[str, int]) -> None:
    assert parse_bind(value) == expected


@pytest.mark.parametrize("value", ["8080", "host:", "host:http", "host:65536", "host:-1"])
def test_a_bad_bind_is_a_usage_error(value: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--bind must be HOST:PORT"):
        parse_bind(value)
    # before any kubeconfig is read: the server named here does not exist
    result = invoke(["serve", "--bind", value, "--server", "https://127.0.0.1:1"], home=tmp_path)
    assert result.code == 2
    assert result.stderr.splitlines()[0] == (
        f"error: --bind must be HOST:PORT with a port from 0 to 65535, not {value!r}"
    )
