"""Containment: the worker process that runs libjq under a deadline and a memory cap, for every policy.

libjq cannot be interrupted from Python (it holds the interpreter while it runs; a 0.2 s alarm fires only when the
evaluation ends), so an expression that loops for minutes, allocates gigabytes or nests deeply enough to crash
it takes its host process with it. Every libjq evaluation therefore runs in a separate Python process:

* the worker is started on first use (never by importing) and reused: one process per memory cap, shared by every
  policy with that cap (`_WORKERS`; the deadline is enforced per request here, so it needs no process of its own);
  it sees a minimal environment (`$ENV` shows no secrets);
* each request has a **deadline** (default 10 s, upstream's per-evaluation timeout); when it passes, the worker
  is killed, a fresh one is started, and the caller gets `JqLimitError("evaluation exceeded the 10 s deadline")`;
* the worker's address space is capped with `RLIMIT_AS` (default 1024 MiB; POSIX only); an evaluation that runs
  out gets `JqLimitError("evaluation exceeded the 1024 MiB memory cap")` and the worker is replaced;
* a worker that dies for any other reason (a segfault) is replaced too, the request is tried once more, and a
  second death is a stop: `JqLimitError("the jq worker process died during the evaluation ...")`;
* a batch that hits a limit is re-run one expression at a time, so only the guilty expression reports the limit.

libjq never runs in the calling process, whatever the policy's mode: a mode only says what runs in process
before libjq is asked (plain paths always; the compiled evaluator under "inprocess", see `Document`). So every
policy's deadline and memory cap bound every libjq evaluation.

The caller passes the policy (`Document(obj, policy=...)`); nothing here reads the environment or keeps a mode.
Stops (the deadline, the memory cap, a death) are recorded in the policy's `stops`, which the caller owns, and
the time each request took is told to it (`EvaluationPolicy.spent`).

Protocol (stdin/stdout pipes): frames of a 4-byte big-endian length and a JSON body. The worker sends
`{"ready": true}` once; each request `{"exprs", "text", "max", "kind"}` gets `{"results": [...]}` where each
item is `{"ok": [outputs]}` or `{"error": [class name, message]}`, or `{"memory": true}`.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Generator, Sequence
from typing import IO, Any, Final

import msgspec

from workload_map.errors import WorkloadMapError
from workload_map.jq import engine
from workload_map.jq.engine import Kind
from workload_map.jq.errors import (
    JqCompileError,
    JqError,
    JqLimitError,
    JqParseError,
    JqRuntimeError,
)
from workload_map.jq.policy import EvaluationPolicy

__all__ = ["run_batch", "shutdown", "worker_pid", "worker_pids"]

_STARTUP_TIMEOUT: Final = 60.0
_HEADER = struct.Struct(">I")
_ERROR_CLASSES: Final[dict[str, type[JqError]]] = {
    cls.__name__: cls for cls in (JqParseError, JqCompileError, JqRuntimeError, JqLimitError)
}


def run_batch(
    policy: EvaluationPolicy, exprs: Sequence[str], text: str, max_results: int, kind: Kind
) -> list[list[Any] | JqError]:
    """`engine.run_batch` in the worker, under `policy`'s deadline and memory cap, whatever its mode: libjq never
    runs in the calling process (an expression can crash it: a segfault from nesting, an allocation the process
    cannot survive). What a policy's mode decides is what runs in process before libjq is asked (`Document`)."""
    return _worker(policy.memory_mb).run(exprs, text, max_results, kind, policy)


# --------------------------------------------------------------------------------------------- parent side


class _WorkerGoneError(WorkloadMapError):
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
        argv, env = worker_command(memory_mb)
        self.proc = subprocess.Popen(
            argv,
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
    """The reused worker process for one memory cap (callers take turns); replaced when it dies or is stopped."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb
        self.lock = threading.Lock()
        self.process: _Process | None = None

    def _fresh(self) -> _Process:
        if self.process is not None and self.process.proc.poll() is not None:
            self.process.kill()
            self.process = None
        if self.process is None:
            self.process = _Process(self.memory_mb)
        return self.process

    def _replace(self) -> None:
        if self.process is not None:
            self.process.kill()
        self.process = _Process(self.memory_mb)  # starts now; the next caller waits for it to be ready

    def stop(self) -> None:
        with self.lock:
            if self.process is not None:
                self.process.kill()
                self.process = None

    def run(
        self, exprs: Sequence[str], text: str, max_results: int, kind: Kind, policy: EvaluationPolicy
    ) -> list[list[Any] | JqError]:
        with self.lock:
            plan = request_plan(list(exprs), policy)
            outcome: Outcome | None = None
            while True:
                try:
                    attempt = plan.send(outcome)  # type: ignore[arg-type]
                except StopIteration as stop:
                    results: list[list[Any] | JqError] = stop.value
                    return results
                started = time.monotonic()
                try:
                    outcome = self._attempt(attempt, text, max_results, kind, policy)
                except (JqError, _WorkerGoneError, TimeoutError) as failed:
                    outcome = failed
                policy.spent(time.monotonic() - started)

    def _attempt(
        self, exprs: list[str], text: str, max_results: int, kind: Kind, policy: EvaluationPolicy
    ) -> list[list[Any] | JqError]:
        process = self._fresh()
        try:
            process.wait_ready()
        except (_WorkerGoneError, TimeoutError):
            self._replace()
            assert self.process is not None
            process = self.process
            try:
                process.wait_ready()
            except (_WorkerGoneError, TimeoutError) as exc:
                process.kill()
                self.process = None
                detail = exc.detail if isinstance(exc, _WorkerGoneError) else "no answer within a minute"
                raise cannot_start(exprs[0], detail) from exc
        try:
            reply = process.request({"exprs": exprs, "text": text, "max": max_results, "kind": kind}, policy.deadline)
        except (TimeoutError, _WorkerGoneError):
            self._replace()
            raise
        if reply.get("memory"):
            self._replace()
            raise _WorkerGoneError(True, "out of memory")
        return decode_results(exprs, reply)


# ------------------------------------------------ what both shells (this one, and jq.aio's pool) share: no I/O

Outcome = list[list[Any] | JqError] | BaseException
"""What one attempt gave: the results, or `TimeoutError` (the deadline), `_WorkerGoneError` (the worker died or ran
out of memory) or a `JqError` (the worker cannot be started)."""


def worker_command(memory_mb: int) -> tuple[list[str], dict[str, str]]:
    """The worker's command line and its minimal environment (`$ENV` shows no secrets)."""
    env = {name: os.environ[name] for name in ("PATH", "SYSTEMROOT") if name in os.environ}
    boot = (
        "import sys, json; sys.path[:0] = json.loads(sys.argv[1]); "
        "from workload_map.jq.worker import serve; serve(int(sys.argv[2]))"
    )
    return [sys.executable, "-I", "-c", boot, json.dumps(sys.path), str(memory_mb)], env


def cannot_start(expr: str, detail: str) -> JqRuntimeError:
    return JqRuntimeError(
        expr,
        f"cannot start the jq worker process ({sys.executable}: {detail}); only plain paths and expressions the "
        "compiler covers run without it (libjq never runs in the calling process): check that Python can "
        "import workload_map",
    )


def encode_request(exprs: Sequence[str], text: str, max_results: int, kind: Kind) -> bytes:
    data = msgspec.json.encode({"exprs": list(exprs), "text": text, "max": max_results, "kind": kind})
    return _HEADER.pack(len(data)) + data


def decode_results(exprs: Sequence[str], reply: dict[str, Any]) -> list[list[Any] | JqError]:
    results: list[list[Any] | JqError] = []
    for expr, item in zip(exprs, reply["results"], strict=True):
        if "ok" in item:
            results.append(item["ok"])
        else:
            name, message = item["error"]
            results.append(_ERROR_CLASSES.get(name, JqRuntimeError)(expr, message))
    return results


def request_plan(
    exprs: list[str], policy: EvaluationPolicy
) -> Generator[list[str], Outcome, list[list[Any] | JqError]]:
    """How a batch is run and what each failure means, sans I/O: yields the expressions of each attempt, receives
    its `Outcome`. One more attempt after an unexplained death; a batch that hits a limit (or kills its worker) is
    re-run one expression at a time, so only the guilty one reports it; a worker that cannot start fails all."""
    outcome = yield from _attempts(exprs)
    if isinstance(outcome, list):
        return outcome
    if isinstance(outcome, JqError):
        return [type(outcome)(expr, outcome.message) for expr in exprs]
    if len(exprs) > 1:
        results: list[list[Any] | JqError] = []
        for expr in exprs:
            alone = yield from _attempts([expr])
            results.append(alone[0] if isinstance(alone, list) else _failure(expr, alone, policy))
        return results
    return [_failure(exprs[0], outcome, policy)]


def _attempts(exprs: list[str]) -> Generator[list[str], Outcome, Outcome]:
    outcome = yield exprs
    if isinstance(outcome, _WorkerGoneError) and not outcome.memory:
        outcome = yield exprs  # killed from outside, a crash: one more try on a fresh worker
    return outcome


def _failure(expr: str, outcome: BaseException, policy: EvaluationPolicy) -> JqError:
    if isinstance(outcome, JqError):
        return type(outcome)(expr, outcome.message)
    if isinstance(outcome, _WorkerGoneError):
        if outcome.memory and policy.memory_mb:
            return policy.stopped(JqLimitError(expr, f"evaluation exceeded the {policy.memory_mb} MiB memory cap"))
        # a death is a stop too (recorded, so a caller can tell it from a jq error: wmap exits 1 naming it)
        return policy.stopped(
            JqLimitError(
                expr, f"the jq worker process died during the evaluation ({outcome.detail}); a new one has been started"
            )
        )
    return _deadline_error(expr, policy)


def _deadline_error(expr: str, policy: EvaluationPolicy) -> JqLimitError:
    return policy.stopped(JqLimitError(expr, f"evaluation exceeded the {policy.deadline:g} s deadline"))


_WORKERS: dict[int, _Worker] = {}
"""The worker of each memory cap in use (MiB), created on first use: policies with the same cap share one process
(the deadline is per request). Not mode state: which policy an evaluation runs under is always the caller's."""
_workers_lock = threading.Lock()
_at_exit = False


def _worker(memory_mb: int) -> _Worker:
    global _at_exit
    with _workers_lock:
        worker = _WORKERS.get(memory_mb)
        if worker is None:
            worker = _WORKERS[memory_mb] = _Worker(memory_mb)
            if not _at_exit:
                atexit.register(shutdown)
                _at_exit = True
        return worker


def _forget_after_fork() -> None:
    """A forked child must not share the parent's workers (or their pipes): it starts its own when needed."""
    global _workers_lock
    _WORKERS.clear()
    _workers_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def shutdown() -> None:
    """Stop every worker process (a later evaluation under a "worker" policy starts a new one)."""
    with _workers_lock:
        workers = list(_WORKERS.values())
    for worker in workers:
        worker.stop()


def worker_pids() -> dict[int, int]:
    """The running worker processes: process id by memory cap (MiB); `{}` when none runs (tests, diagnostics)."""
    with _workers_lock:
        workers = list(_WORKERS.values())
    pids: dict[int, int] = {}
    for worker in workers:
        process = worker.process
        if process is not None and process.proc.poll() is None:
            pids[worker.memory_mb] = process.proc.pid
    return pids


def worker_pid(policy: EvaluationPolicy) -> int | None:
    """The id of the worker process that evaluates for `policy` (by its memory cap), or None when none runs."""
    return worker_pids().get(policy.memory_mb)


# ---------------------------------------------------------------------------------------------- worker side


def _limit_memory(memory_mb: int) -> None:
    if memory_mb <= 0:
        return
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX: no cap
        return
    cap = memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)  # the parent's own cap (a sandbox, the fuzz suite's children) cannot be raised
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
