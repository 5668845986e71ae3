"""The serve layer (issue 23): the live engine's workloads as Prometheus metrics and a read-only JSON API over
HTTP, for `wmap serve` and for a controller process. Above `cluster` (it reads the cluster through the informers),
below `cli` (which only parses flags and calls `serve`). See docs/serve.md.

Modules: `run` (`serve`, `ServeConfig`) > `http` (the aiohttp routes) > `api` (JSON documents) | `metrics` (the
Prometheus collector) | `engine` (informers, index, views) > `store` > `errors`.
"""

from __future__ import annotations

from workload_map.serve.errors import ServeError

__all__ = ["ServeError"]
