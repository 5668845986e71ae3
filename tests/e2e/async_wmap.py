"""`python -m tests.e2e.async_wmap ARGS`: the `wmap` executable with its cluster seam on the async API (see apis.py)."""

from __future__ import annotations

import sys

import pytest

from tests.e2e.apis import install_async


def main() -> int:
    from workload_map.cli.main import run

    patch = pytest.MonkeyPatch()
    install_async(patch)
    try:
        code = run(sys.argv[1:], prog_name="wmap")
        sys.stdout.flush()
    finally:
        patch.undo()
    return code


if __name__ == "__main__":
    sys.exit(main())
