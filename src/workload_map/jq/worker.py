"""Containment: the evaluation mode, and the worker process that runs libjq under a deadline and a memory cap.

libjq cannot be interrupted from Python (it holds the interpreter while it runs; a 0.2 s alarm fires only when the
evaluation ends), so an expression that loops for minutes or allocates gigabytes takes its host process with it.
In mode "worker" every libjq evaluation runs in a separate Python process instead:

* the worker is started once (lazily) and reused; it sees a minimal environment (`$ENV` shows no secrets);
* each request has a **deadline** (default 10 s, upstream's per-evaluation timeout); when it passes, the worker
  is killed, a fresh one is started, and the caller gets `JqLimitError("evaluation exceeded the 10 s deadline")`;
* the worker's address space is capped with `RLIMIT_AS` (default 1024 MiB; POSIX only); an evaluation that runs
  out gets `JqLimitError("evaluation exceeded the 1024 MiB memory cap")` and the worker is replaced;
* a worker that dies for any other reason is replaced too, and the caller gets a `JqRuntimeError` saying so;
* a batch that hits a limit is re-run one expression at a time, so only the guilty expression reports the limit.

The fast path (plain paths in pure Python, bounded by the object's size) always runs in the calling process.

Settings: `set_mode("inprocess" | "worker", deadline=10.0, memory_mb=1024)`, per document
`Document(obj, mode="worker")`, for a block of code `with mode_scope("worker", deadline=2.0) as scope:` (this
thread or task only; `scope.stopped` lists the evaluations the worker stopped inside it), or the environment:
`WMAP_JQ_MODE` (`inprocess`, `worker`; `auto`, the CLI's choice by definition origin, means `inprocess` here),
`WMAP_JQ_DEADLINE` (seconds), `WMAP_JQ_MEMORY_MB` (MiB, 0 for no cap), read on first use. In mode "inprocess"
(the default) there is no deadline and no cap: use it for trusted definitions and short-lived processes.

Protocol (stdin/stdout pipes): frames of a 4-byte big-endian length and a JSON body. The worker sends
`{"ready": true}` once; each request `{"exprs", "text", "max", "kind"}` gets `{"results": [...]}` where each
item is `{"ok": [outputs]}` or `{"error": [class name, message]}`, or `{"memory": true}`.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import json
import math
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import IO, Any, Final

import msgspec

from workload_map.jq import engine
from workload_map.jq.engine import Kind
from workload_map.jq.errors import (
    JqCompileError,
    JqError,
    JqLimitError,
    JqParseError,
    JqRuntimeError,
)

__all__ = [
    "MODES",
    "EvaluationMode",
    "EvaluationScope",
    "check_mode",
    "get_mode",
    "mode_scope",
    "run_batch",
    "set_mode",
    "shutdown",
]

MODES: Final = ("inprocess", "worker")
_STARTUP_TIMEOUT: Final = 60.0
_HEADER = struct.Struct(">I")
_ERROR_CLASSES: Final[dict[str, type[JqError]]] = {
    cls.__name__: cls for cls in (JqParseError, JqCompileError, JqRuntimeError, JqLimitError)
}


@dataclass(frozen=True)
class EvaluationMode:
    """Where libjq runs ("inprocess" or "worker"), and the worker's deadline (s) and memory cap (MiB, 0: none)."""

    mode: str = "inprocess"
    deadline: float = 10.0
    memory_mb: int = 1024


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown jq evaluation mode {mode!r}: use one of {', '.join(MODES)}")


_settings: EvaluationMode | None = None
_settings_lock = threading.Lock()


def _from_environment() -> EvaluationMode:
    settings = EvaluationMode()
    mode = os.environ.get("WMAP_JQ_MODE", "").strip().lower()
    if mode and mode != "auto":  # auto: the CLI picks per definition origin; the library default otherwise
        if mode in MODES:
            settings = replace(settings, mode=mode)
        else:
            warnings.warn(f"WMAP_JQ_MODE={mode!r} ignored: use inprocess, worker or auto", RuntimeWarning, stacklevel=3)
    deadline = _number("WMAP_JQ_DEADLINE", allow_zero=False)
    if deadline is not None:
        settings = replace(settings, deadline=deadline)
    memory = _number("WMAP_JQ_MEMORY_MB", allow_zero=True)
    if memory is not None:
        settings = replace(settings, memory_mb=int(memory))
    return settings


def _number(name: str, *, allow_zero: bool) -> float | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        warnings.warn(f"{name}={raw!r} ignored: give a positive number", RuntimeWarning, stacklevel=4)
        return None
    return value


def _process_mode() -> EvaluationMode:
    """The process-wide settings (from the environment on first use, then from `set_mode`)."""
    global _settings
    with _settings_lock:
        if _settings is None:
            _settings = _from_environment()
        return _settings


def get_mode() -> EvaluationMode:
    """The settings in force here: the innermost `mode_scope` of this thread or task, else the process-wide ones
    (from the environment on first use, then from `set_mode`)."""
    scopes = _scopes.get()
    return scopes[-1].mode if scopes else _process_mode()


def set_mode(mode: str, *, deadline: float | None = None, memory_mb: int | None = None) -> EvaluationMode:
    """Choose where libjq runs for every Document without its own mode; returns the new settings.

    `deadline` (seconds) and `memory_mb` apply to the worker; omitted, they keep their current values.
    """
    global _settings
    current = _process_mode()
    new = _settings_for(current, mode, deadline, memory_mb)
    with _settings_lock:
        _settings = new
    if new.memory_mb != current.memory_mb:
        shutdown()  # the next worker starts with the new cap
    return new


def _settings_for(
    current: EvaluationMode, mode: str | None, deadline: float | None, memory_mb: int | None
) -> EvaluationMode:
    if mode is not None:
        check_mode(mode)
    if deadline is not None and not (math.isfinite(deadline) and deadline > 0):
        raise ValueError(f"the jq deadline must be positive seconds, got {deadline}")
    if memory_mb is not None and memory_mb < 0:
        raise ValueError(f"the jq memory cap must be MiB >= 0 (0: none), got {memory_mb}")
    return EvaluationMode(
        current.mode if mode is None else mode,
        current.deadline if deadline is None else float(deadline),
        current.memory_mb if memory_mb is None else int(memory_mb),
    )


@dataclass
class EvaluationScope:
    """What `mode_scope` yields: the settings in force inside it (`mode`) and the evaluations the worker stopped
    inside it (`stopped`: each a `JqLimitError` for the deadline or the memory cap, in the order they happened)."""

    mode: EvaluationMode
    stopped: list[JqLimitError] = field(default_factory=list)


_scopes: contextvars.ContextVar[tuple[EvaluationScope, ...]] = contextvars.ContextVar(
    "workload_map_jq_scopes", default=()
)


@contextlib.contextmanager
def mode_scope(
    mode: str | None = None, *, deadline: float | None = None, memory_mb: int | None = None
) -> Iterator[EvaluationScope]:
    """Evaluate in `mode` (with this deadline and memory cap) inside the `with` block, in this thread or asyncio
    task only; omitted settings are those in force outside. Scopes nest; leaving one restores what was there.

    A `Document` with its own mode keeps it (the deadline and cap still come from the scope). Every evaluation the
    worker stops for the deadline or the memory cap is recorded in `stopped` of each enclosing scope, so a caller
    can tell "this definition was cut off" from an ordinary jq error.

        with mode_scope("worker", deadline=2.0) as scope:
            view = build_view(Workload(untrusted_definition, obj))
        if scope.stopped: ...
    """
    scope = EvaluationScope(_settings_for(get_mode(), mode, deadline, memory_mb))
    token = _scopes.set((*_scopes.get(), scope))
    try:
        yield scope
    finally:
        _scopes.reset(token)


def _stopped(error: JqLimitError) -> JqLimitError:
    """Record a deadline or memory-cap stop in the enclosing scopes; returns the error."""
    for scope in _scopes.get():
        scope.stopped.append(error)
    return error


def run_batch(
    mode: str | None, exprs: Sequence[str], text: str, max_results: int, kind: Kind
) -> list[list[Any] | JqError]:
    """`engine.run_batch` in this process or in the worker, per `mode` (None: the current setting)."""
    settings = get_mode()
    if (mode or settings.mode) == "inprocess":
        return engine.run_batch(exprs, text, max_results, kind)
    return _worker().run(exprs, text, max_results, kind, settings)


# --------------------------------------------------------------------------------------------- parent side


class _WorkerGoneError(Exception):
    def __init__(self, memory: bool, detail: str) -> None:
        super().__init__(detail)
        self.memory = memory
        self.detail = detail


class _Process:
    """One worker process with a thread reading its replies into a queue."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb
        self.ready = False
        self.replies: queue.Queue[bytes | None] = queue.Queue()
        env = {name: os.environ[name] for name in ("PATH", "SYSTEMROOT") if name in os.environ}
        boot = (
            "import sys, json; sys.path[:0] = json.loads(sys.argv[1]); "
            "from workload_map.jq.worker import serve; serve(int(sys.argv[2]))"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", boot, json.dumps(sys.path), str(memory_mb)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        try:
            while True:
                header = stream.read(_HEADER.size)
                if len(header) < _HEADER.size:
                    break
                (size,) = _HEADER.unpack(header)
                body = stream.read(size)
                if len(body) < size:
                    break
                self.replies.put(body)
        except (OSError, ValueError):
            pass
        self.replies.put(None)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _reply(self, timeout: float) -> dict[str, Any]:
        try:
            body = self.replies.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None
        if body is None:
            try:
                code = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover
                code = None
            memory = code == -signal.SIGABRT if hasattr(signal, "SIGABRT") else False
            raise _WorkerGoneError(memory, f"exit status {code}")
        reply: dict[str, Any] = msgspec.json.decode(body)
        return reply

    def wait_ready(self) -> None:
        if not self.ready:
            reply = self._reply(_STARTUP_TIMEOUT)
            if not reply.get("ready"):
                raise _WorkerGoneError(False, "no ready message")
            self.ready = True

    def request(self, payload: dict[str, Any], deadline: float) -> dict[str, Any]:
        data = msgspec.json.encode(payload)
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(_HEADER.pack(len(data)) + data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise _WorkerGoneError(False, "the pipe to the worker is closed") from None
        return self._reply(deadline)


class _Worker:
    """The reused worker process of this Python process (one; callers take turns)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process: _Process | None = None

    def _fresh(self, memory_mb: int) -> _Process:
        if self.process is not None and (self.process.memory_mb != memory_mb or self.process.proc.poll() is not None):
            self.process.kill()
            self.process = None
        if self.process is None:
            self.process = _Process(memory_mb)
        return self.process

    def _replace(self, memory_mb: int) -> None:
        if self.process is not None:
            self.process.kill()
        self.process = _Process(memory_mb)  # starts now; the next caller waits for it to be ready

    def stop(self) -> None:
        with self.lock:
            if self.process is not None:
                self.process.kill()
                self.process = None

    def run(
        self, exprs: Sequence[str], text: str, max_results: int, kind: Kind, settings: EvaluationMode
    ) -> list[list[Any] | JqError]:
        with self.lock:
            try:
                return self._run(list(exprs), text, max_results, kind, settings)
            except JqError as failed:  # the worker cannot be started: every expression reports it
                return [type(failed)(expr, failed.message) for expr in exprs]
            except _WorkerGoneError as gone:
                if len(exprs) > 1:
                    return [self._run_alone(e, text, max_results, kind, settings) for e in exprs]
                return [self._gone_error(exprs[0], gone, settings)]
            except TimeoutError:
                if len(exprs) > 1:
                    return [self._run_alone(e, text, max_results, kind, settings) for e in exprs]
                return [_deadline_error(exprs[0], settings)]

    def _run_alone(
        self, expr: str, text: str, max_results: int, kind: Kind, settings: EvaluationMode
    ) -> list[Any] | JqError:
        try:
            return self._run([expr], text, max_results, kind, settings)[0]
        except JqError as failed:
            return failed
        except _WorkerGoneError as gone:
            return self._gone_error(expr, gone, settings)
        except TimeoutError:
            return _deadline_error(expr, settings)

    def _gone_error(self, expr: str, gone: _WorkerGoneError, settings: EvaluationMode) -> JqError:
        if gone.memory and settings.memory_mb:
            return _stopped(JqLimitError(expr, f"evaluation exceeded the {settings.memory_mb} MiB memory cap"))
        return JqRuntimeError(
            expr, f"the jq worker process died during the evaluation ({gone.detail}); a new one has been started"
        )

    def _run(
        self, exprs: list[str], text: str, max_results: int, kind: Kind, settings: EvaluationMode
    ) -> list[list[Any] | JqError]:
        """One request; on a limit or a death the worker is replaced and the exception propagates."""
        try:
            return self._attempt(exprs, text, max_results, kind, settings)
        except _WorkerGoneError as gone:
            if gone.memory:
                raise
        # the worker died for no known reason (killed from outside, a crash): one more try on a fresh one
        return self._attempt(exprs, text, max_results, kind, settings)

    def _attempt(
        self, exprs: list[str], text: str, max_results: int, kind: Kind, settings: EvaluationMode
    ) -> list[list[Any] | JqError]:
        process = self._fresh(settings.memory_mb)
        try:
            process.wait_ready()
        except (_WorkerGoneError, TimeoutError):
            self._replace(settings.memory_mb)
            assert self.process is not None
            process = self.process
            try:
                process.wait_ready()
            except (_WorkerGoneError, TimeoutError) as exc:
                process.kill()
                self.process = None
                detail = exc.detail if isinstance(exc, _WorkerGoneError) else "no answer within a minute"
                raise JqRuntimeError(
                    exprs[0],
                    f"cannot start the jq worker process ({sys.executable}: {detail}); "
                    "evaluate in process (WMAP_JQ_MODE=inprocess) or check that Python can import workload_map",
                ) from exc
        try:
            reply = process.request({"exprs": exprs, "text": text, "max": max_results, "kind": kind}, settings.deadline)
        except (TimeoutError, _WorkerGoneError):
            self._replace(settings.memory_mb)
            raise
        if reply.get("memory"):
            self._replace(settings.memory_mb)
            raise _WorkerGoneError(True, "out of memory")
        results: list[list[Any] | JqError] = []
        for expr, item in zip(exprs, reply["results"], strict=True):
            if "ok" in item:
                results.append(item["ok"])
            else:
                name, message = item["error"]
                results.append(_ERROR_CLASSES.get(name, JqRuntimeError)(expr, message))
        return results


def _deadline_error(expr: str, settings: EvaluationMode) -> JqLimitError:
    return _stopped(JqLimitError(expr, f"evaluation exceeded the {settings.deadline:g} s deadline"))


_WORKER: _Worker | None = None
_worker_lock = threading.Lock()


def _worker() -> _Worker:
    global _WORKER
    with _worker_lock:
        if _WORKER is None:
            _WORKER = _Worker()
            atexit.register(shutdown)
        return _WORKER


def _forget_after_fork() -> None:
    """A forked child must not share the parent's worker (or its pipes): it starts its own when needed."""
    global _WORKER, _worker_lock
    _WORKER = None
    _worker_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def shutdown() -> None:
    """Stop the worker process (a later evaluation in mode "worker" starts a new one)."""
    if _WORKER is not None:
        _WORKER.stop()


def worker_pid() -> int | None:
    """The worker process id, or None when none is running (for tests and diagnostics)."""
    process = _WORKER.process if _WORKER is not None else None
    return process.proc.pid if process is not None and process.proc.poll() is None else None


# ---------------------------------------------------------------------------------------------- worker side


def _limit_memory(memory_mb: int) -> None:
    if memory_mb <= 0:
        return
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX: no cap
        return
    cap = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: killed when the parent dies, even mid-evaluation
    except (OSError, AttributeError):  # pragma: no cover
        pass


def _write(stream: IO[bytes], payload: Any) -> None:
    data = msgspec.json.encode(payload)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _encode_results(results: list[list[Any] | JqError]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for result in results:
        if isinstance(result, JqError):
            out.append({"error": [type(result).__name__, result.message]})
        else:
            out.append({"ok": result})
    return out


def serve(memory_mb: int) -> None:
    """The worker's main loop: read a request, evaluate it in this process, reply; exit when stdin closes."""
    _die_with_parent()
    _limit_memory(memory_mb)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    _write(stdout, {"ready": True})
    while True:
        header = stdin.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        (size,) = _HEADER.unpack(header)
        request = msgspec.json.decode(stdin.read(size))
        started = time.monotonic()
        try:
            results = engine.run_batch(request["exprs"], request["text"], request["max"], request["kind"])
            _write(stdout, {"results": _encode_results(results), "seconds": time.monotonic() - started})
        except MemoryError:
            _write(stdout, {"memory": True})
