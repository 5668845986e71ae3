"""A keyed work queue: a key added while it waits is queued once; a key that failed comes back after a delay that
doubles per failure (up to a minute), as controller-runtime's rate-limited queue does."""

from __future__ import annotations

import asyncio

__all__ = ["WorkQueue"]

_BASE_DELAY = 0.5
_MAX_DELAY = 60.0


class WorkQueue:
    def __init__(self) -> None:
        self._pending: dict[str, None] = {}
        self._ready = asyncio.Event()
        self._failures: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, key: str) -> None:
        self._pending[key] = None
        self._ready.set()

    def retry(self, key: str) -> None:
        """Add `key` again after its backoff."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        delay = min(_MAX_DELAY, _BASE_DELAY * 2**failures)
        asyncio.get_running_loop().call_later(delay, self.add, key)

    def forget(self, key: str) -> None:
        """`key` succeeded: its next failure starts from the base delay."""
        self._failures.pop(key, None)

    async def get(self) -> str:
        while not self._pending:
            self._ready.clear()
            await self._ready.wait()
        key = next(iter(self._pending))
        del self._pending[key]
        return key
