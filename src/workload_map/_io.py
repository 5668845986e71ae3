"""The one bounded reader: every input the library (and the CLI) reads from a path, a stream or standard input.

`read_input(source)` returns the bytes of

* a regular file (the limit counted on the bytes actually read, never on `st_size`: a file that grows, or one
  of `/proc`'s that says it is empty, is bounded all the same);
* a device (`/dev/zero` stops at the limit), a pipe, a FIFO or a socket: opened non-blocking, so a FIFO with no
  writer never blocks the open, and read under a time budget (`timeout`, 30 s by default; `None` waits);
* `-`: standard input (as long as its writer takes unless `stdin_timeout` is given; closed stdin is an error);
* a binary (or text) stream: anything with `read(n)`, such as `importlib.resources` files or `sys.stdin.buffer`.

Every failure is an `InputError` (a `WorkloadMapError`, also a `ValueError`) whose message names the input:
`InputTooLargeError` (over `limit`, 64 MiB by default; the message names the limit), `InputTimeoutError` (the budget ran
out), and the plain class for a missing file, a permission, a directory, closed stdin or an I/O error (`reason`
says which). `read_input_text` decodes UTF-8 (a BOM is dropped) and returns `(label, text)`.

This module is a bottom layer (it imports only `workload_map.errors` and `workload_map._limits`), so every layer
and the CLI can use it.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from typing import TYPE_CHECKING, Any, Final

from workload_map._limits import MAX_INPUT_BYTES, STREAM_TIMEOUT
from workload_map.errors import ArgumentTypeError, WorkloadMapError

__all__ = [
    "MAX_INPUT_BYTES",
    "STREAM_TIMEOUT",
    "InputError",
    "InputTimeoutError",
    "InputTooLargeError",
    "describe_limit",
    "read_input",
    "read_input_text",
]

_CHUNK: Final = 1024 * 1024
_SHORT: Final = 64 * 1024  # what a read after a short one asks for: usually only the end, b""

if TYPE_CHECKING:  # annotations only: the Literal, the Protocol and the Union cost ~0.5 M instructions at import
    from typing import Literal, Protocol, Union

    Reason = Literal["missing", "permission", "directory", "too-large", "timeout", "closed", "not-utf8", "unreadable"]

    class _Readable(Protocol):
        def read(self, size: int = ..., /) -> Any: ...

    Source = Union[str, "os.PathLike[str]", _Readable]


class InputError(WorkloadMapError, ValueError):
    """An input that cannot be read: `source` (the label: the path, `<stdin>`), `message`, `reason`."""

    def __init__(self, source: str, message: str, reason: Reason = "unreadable") -> None:
        self.source = source
        self.message = message
        self.reason: Reason = reason
        super().__init__(f"{source}: {message}")


class InputTooLargeError(InputError):
    """More than `limit` bytes were read: the input is refused (nothing past the limit is read)."""

    def __init__(self, source: str, limit: int) -> None:
        self.limit = limit
        super().__init__(
            source, f"input is larger than the {describe_limit(limit)} limit; inputs over it are refused", "too-large"
        )


class InputTimeoutError(InputError):
    """A pipe, FIFO, socket or device did not deliver its input (to the end) within `timeout` seconds."""

    def __init__(self, source: str, timeout: float) -> None:
        self.timeout = timeout
        super().__init__(
            source,
            f"cannot be read: no end of input within {timeout:g} s (a FIFO or pipe without a writer?)",
            "timeout",
        )


def describe_limit(limit: int) -> str:
    """`64 MiB` for a whole number of MiB, else the byte count (`1,000 bytes`)."""
    mib = 1024 * 1024
    if limit >= mib and limit % mib == 0:
        return f"{limit // mib} MiB"
    return f"{limit:,} bytes"


def read_input(
    source: Source,
    *,
    limit: int = MAX_INPUT_BYTES,
    timeout: float | None = STREAM_TIMEOUT,
    stdin_timeout: float | None = None,
    label: str | None = None,
) -> bytes:
    """The bytes of `source` (a path, `-` for standard input, or a stream), at most `limit` of them.

    `timeout` bounds a named pipe, FIFO, socket or device (regular files need none); `stdin_timeout` bounds
    standard input. `label` names the input in messages (default: the path, `<stdin>`, `<stream>`).
    """
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if text == "-":
            return _read_stdin(label or "<stdin>", limit, stdin_timeout)
        return _read_path(text, label or text, limit, timeout)
    if callable(getattr(source, "read", None)):
        return _read_stream(source, label or "<stream>", limit)
    raise ArgumentTypeError("an input", "a path, '-' or a readable stream", source)


def read_input_text(
    source: Source,
    *,
    limit: int = MAX_INPUT_BYTES,
    timeout: float | None = STREAM_TIMEOUT,
    stdin_timeout: float | None = None,
    label: str | None = None,
) -> tuple[str, str]:
    """`(label, text)` of `source` read by `read_input` and decoded as UTF-8 (a leading BOM dropped)."""
    if label is None:
        if isinstance(source, (str, os.PathLike)):
            label = "<stdin>" if os.fspath(source) == "-" else os.fspath(source)
        else:
            label = "<stream>"
    data = read_input(source, limit=limit, timeout=timeout, stdin_timeout=stdin_timeout, label=label)
    # What the "utf-8-sig" codec does (a leading BOM dropped, then UTF-8, an error's byte counted after the BOM),
    # without the codec search and the `encodings.utf_8_sig` import it costs a start (~0.3 ms; issue 19)
    if data[:3] == _BOM:
        data = data[3:]
    try:
        return label, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(label, f"is not UTF-8 text (byte {exc.start})", "not-utf8") from None


_BOM: Final = b"\xef\xbb\xbf"


# --- paths ------------------------------------------------------------------------------------------------------

_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)


def _read_path(path: str, label: str, limit: int, timeout: float | None) -> bytes:
    try:
        # O_NONBLOCK: opening a FIFO without a writer returns at once (the read below waits, under `timeout`)
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY)
    except OSError as exc:
        raise _os_error(label, exc) from None
    except ValueError:  # a NUL in the path: no file has that name
        raise InputError(label, "no such file (the path holds a NUL character)", "missing") from None
    try:
        status = os.fstat(fd)
        mode = status.st_mode
        if stat.S_ISDIR(mode):
            raise InputError(label, "is a directory, not a file", "directory")
        regular = stat.S_ISREG(mode)
        deadline = None if regular or timeout is None else time.monotonic() + timeout
        # a regular file's first read asks for its size and one byte more, the read after a short one for a little:
        # a read of a whole chunk makes a buffer that large (a 1 MiB mapping, made and dropped twice for a 1 KB
        # manifest; issue 19). The limit is counted on what is read, as ever, never on the size.
        first = status.st_size + 1 if regular else _CHUNK
        return _read_fd(fd, label, limit, poll=not regular, deadline=deadline, timeout=timeout, first=first)
    except OSError as exc:
        raise _os_error(label, exc) from None
    finally:
        os.close(fd)


def _os_error(label: str, exc: OSError) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError(label, "no such file", "missing")
    if isinstance(exc, PermissionError):
        return InputError(label, "permission denied", "permission")
    if isinstance(exc, IsADirectoryError):
        return InputError(label, "is a directory, not a file", "directory")
    return InputError(label, f"cannot be read: {exc.strerror or exc}")


def _read_fd(
    fd: int,
    label: str,
    limit: int,
    *,
    poll: bool,
    deadline: float | None,
    timeout: float | None,
    first: int = _CHUNK,
) -> bytes:
    """Read `fd` to its end, at most `limit` bytes; with `poll`, wait for data with `select` (under `deadline`).
    `first`: how much the first read asks for; after a read shorter than asked (the end, or a pipe's share) the
    next asks for `_SHORT`, after a full one for `_CHUNK`."""
    chunks: list[bytes] = []
    total = 0
    size = max(1, min(first, _CHUNK))
    poller = _poller(fd) if poll else None
    while True:
        if poller is not None:
            wait_ms: float | None = None
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise InputTimeoutError(label, timeout or 0.0)
                wait_ms = remaining * 1000
            if not poller(wait_ms):
                raise InputTimeoutError(label, timeout or 0.0)
        asked = min(size, limit + 1 - total)
        try:
            chunk = os.read(fd, asked)
        except (BlockingIOError, InterruptedError):
            continue
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise InputTooLargeError(label, limit)
        size = _CHUNK if len(chunk) == asked else _SHORT


def _poller(fd: int) -> Any:
    """A function `wait(ms or None) -> bool` (True: readable or hung up), or None where the OS cannot poll."""
    import select  # only for a pipe, FIFO or stdin: a regular file is read without it (issue 19: start-up)

    if hasattr(select, "poll"):
        poll = select.poll()
        poll.register(fd, select.POLLIN | select.POLLPRI)

        def wait(ms: float | None) -> bool:
            return bool(poll.poll(None if ms is None else max(1, int(ms))))

        return wait
    return None  # pragma: no cover - Windows: no poll on files; reads block


# --- standard input and streams ------------------------------------------------------------------------------------


def _read_stdin(label: str, limit: int, timeout: float | None) -> bytes:
    stdin = sys.stdin
    if stdin is None:
        raise InputError(label, "cannot be read: standard input is closed", "closed")
    stream = getattr(stdin, "buffer", stdin)
    if timeout is not None:
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None
        if fd is not None:
            try:
                return _read_fd(fd, label, limit, poll=True, deadline=time.monotonic() + timeout, timeout=timeout)
            except OSError as exc:
                raise _os_error(label, exc) from None
    return _read_stream(stream, label, limit)


def _read_stream(stream: _Readable, label: str, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    try:
        while True:
            chunk = stream.read(min(_CHUNK, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            if isinstance(chunk, str):  # a text stream (a test's stdin): count its UTF-8 bytes
                chunk = chunk.encode("utf-8", "surrogateescape")
            elif not isinstance(chunk, bytes | bytearray | memoryview):
                raise InputError(label, f"cannot be read: the stream returned {type(chunk).__name__}, not bytes")
            chunks.append(bytes(chunk))
            total += len(chunk)
            if total > limit:
                raise InputTooLargeError(label, limit)
    except InputError:
        raise
    except OSError as exc:
        raise _os_error(label, exc) from None
    except ValueError as exc:  # a closed file
        raise InputError(label, f"cannot be read: {exc}", "closed") from None
