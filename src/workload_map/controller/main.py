"""`workload-map-controller` (and `wmap controller ARGS`): parse the flags, set up logging, run the loop."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Sequence

from workload_map.controller.options import OptionsError, parse_options
from workload_map.errors import WorkloadMapError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Exit codes: 0 stopped cleanly, 1 an error (leadership lost, a controller failed), 2 a bad flag."""
    from workload_map.controller.runtime import run

    try:
        options = parse_options(sys.argv[1:] if argv is None else argv)
    except OptionsError as exc:
        print(f"workload-map-controller: error: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=options.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2"):  # a line per request: ours say what was written
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    if options.dry_run:
        logging.getLogger("workload_map.controller").info("dry-run: writes are logged, not sent")
    try:
        return asyncio.run(run(options))
    except WorkloadMapError as exc:  # the kubeconfig, the first LIST: one line, no traceback
        print(f"workload-map-controller: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0


def console_main() -> None:
    sys.exit(main())
