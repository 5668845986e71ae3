"""Every limit the library enforces on untrusted input, in one place (the table in docs/security.md).

Imports nothing: every layer may read these.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "MAX_COMPONENT_DEPTH",
    "MAX_DEPTH",
    "MAX_EXPANDED_NODES",
    "MAX_INPUT_BYTES",
    "MAX_INT_DIGITS",
    "MAX_RESPONSE_BYTES",
    "STREAM_TIMEOUT",
]

MAX_INPUT_BYTES: Final = 64 * 1024 * 1024
"""Bytes one input may have (a file, a device, a pipe, a FIFO, stdin), counted on the bytes read."""

STREAM_TIMEOUT: Final = 30.0
"""Seconds a named pipe, FIFO, socket or device may take to deliver its whole input."""

MAX_DEPTH: Final = 500
"""Nesting levels of one document or object (YAML/JSON documents, workload objects, pods)."""

MAX_EXPANDED_NODES: Final = 5_000_000
"""Nodes one YAML document may expand to through its aliases (past it: an alias bomb)."""

MAX_INT_DIGITS: Final = 4300
"""Digits of an integer in a document or object (Python's int-str conversion limit: a longer one cannot even be
printed)."""

MAX_RESPONSE_BYTES: Final = 256 * 1024 * 1024
"""Bytes of one API server answer (a page of a list, an object, discovery), counted as they arrive. A page of the
chunked lists we send is a few MiB; etcd keeps one object under 1.5 MiB by default."""

MAX_COMPONENT_DEPTH: Final = 100
"""Levels of a definition's ownerRef chain below the root (views and plans are trees of that depth)."""
