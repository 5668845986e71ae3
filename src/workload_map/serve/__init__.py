"""The serve layer (issue 23): the live engine's workloads as Prometheus metrics, a read-only JSON API and a
dashboard over HTTP, for `wmap serve` and for a controller process. Above `cluster` (it reads the cluster through
the informers), below `cli` (which only parses flags and calls `serve`). See docs/serve.md.

Modules: `run` (`serve`, `ServeConfig`) > `http` (the aiohttp routes, the dashboard's files) > `api` (JSON
documents) | `access` (per-user tokens: TokenReview, SubjectAccessReview) | `metrics` (the Prometheus exposition)
| `engine` (informers, index, views) > `store` > `errors`.
"""

from __future__ import annotations

from workload_map.serve.errors import ServeError

__all__ = ["ServeError"]
