"""The serve layer's error: the server cannot do its job (nothing it may watch, a bind that failed)."""

from __future__ import annotations

from workload_map.errors import WorkloadMapError

__all__ = ["ServeError"]


class ServeError(WorkloadMapError):
    """`wmap serve` cannot go on; the message is one line naming what failed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
