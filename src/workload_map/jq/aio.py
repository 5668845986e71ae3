"""`WorkerPool`: worker-mode jq evaluation from an event loop, many evaluations in flight, none blocking the loop.

The sync worker (`worker.py`) keeps one process per memory cap and callers take turns. Here a pool keeps up to
`size` worker processes per memory cap (started on demand, reused, each serving one evaluation at a time), so up to
`size` evaluations of the same cap run at once; more wait for a free worker. Each evaluation has its policy's
deadline (counted from when its request is sent) and its policy's memory cap (`RLIMIT_AS` of the worker it runs on).

* **Deadline**: the worker is killed, the evaluation gets `JqLimitError("evaluation exceeded the 10 s deadline")`
  (appended to the policy's `stops`), and a later evaluation starts a fresh worker.
* **Cancellation** (`task.cancel()`, `asyncio.timeout(...)`, a client disconnect): the worker running that
  evaluation is killed (libjq cannot be interrupted any other way) and reaped before `CancelledError` propagates;
  the other evaluations are untouched.
* Memory cap, a worker that dies, a batch that hits a limit: as in the sync worker, decided by the same code
  (`worker.request_plan`). The wire protocol and the worker's main loop are the sync worker's too.

What runs where is the Document's own logic (`Document.evaluate_many_steps`, `paths_steps`): the fast path and,
under an "inprocess" policy, the compiled evaluator run in the calling thread (bounded by its step budget); the
libjq batch goes to the pool under either mode. Use a "worker" policy for anything untrusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Sequence
from typing import Any, TypeVar

import msgspec

from workload_map.jq import worker
from workload_map.jq.document import Document, Steps
from workload_map.jq.engine import MAX_RESULTS, Kind
from workload_map.jq.errors import JqError
from workload_map.jq.policy import EvaluationPolicy

__all__ = ["WorkerPool"]

T = TypeVar("T")
_HEADER = worker._HEADER


class _AsyncProcess:
    """One worker process spoken to over asyncio pipes."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.ready = False

    @classmethod
    async def start(cls, memory_mb: int) -> _AsyncProcess:
        argv, env = worker.worker_command(memory_mb)
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
        return cls(proc)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    async def _reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        try:
            header = await self.proc.stdout.readexactly(_HEADER.size)
            (size,) = _HEADER.unpack(header)
            body = await self.proc.stdout.readexactly(size)
        except (asyncio.IncompleteReadError, OSError, ValueError):
            code = await self.proc.wait()
            memory = code == -signal.SIGABRT if hasattr(signal, "SIGABRT") else False
            raise worker._WorkerGoneError(memory, f"exit status {code}") from None
        reply: dict[str, Any] = msgspec.json.decode(body)
        return reply

    async def wait_ready(self) -> None:
        if not self.ready:
            reply = await asyncio.wait_for(self._reply(), worker._STARTUP_TIMEOUT)
            if not reply.get("ready"):
                raise worker._WorkerGoneError(False, "no ready message")
            self.ready = True

    async def request(self, data: bytes, deadline: float) -> dict[str, Any]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError, OSError):
            raise worker._WorkerGoneError(False, "the pipe to the worker is closed") from None
        return await asyncio.wait_for(self._reply(), deadline)

    async def kill(self) -> None:
        """Kill and reap (also when the caller is being cancelled: the kill is immediate, the reap shielded)."""
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        with contextlib.suppress(Exception):
            await asyncio.shield(self.proc.wait())


class _Slots:
    """The workers of one memory cap: idle ones, how many exist, and a condition to wait for one."""

    def __init__(self, memory_mb: int, size: int) -> None:
        self.memory_mb = memory_mb
        self.size = size
        self.idle: list[_AsyncProcess] = []
        self.busy: set[_AsyncProcess] = set()
        self.count = 0
        self.changed = asyncio.Condition()

    async def acquire(self) -> _AsyncProcess | None:
        """An idle worker, or None when the caller may start one (a slot is reserved for it)."""
        async with self.changed:
            while True:
                while self.idle:
                    process = self.idle.pop()
                    if process.alive:
                        self.busy.add(process)
                        return process
                    self.count -= 1
                if self.count < self.size:
                    self.count += 1
                    return None
                await self.changed.wait()

    async def release(self, process: _AsyncProcess | None, *, keep: bool) -> None:
        async with self.changed:
            if process is not None:
                self.busy.discard(process)
            if keep and process is not None and process.alive:
                self.idle.append(process)
            else:
                self.count -= 1
            self.changed.notify()


class WorkerPool:
    """Worker processes for jq evaluation from asyncio (see the module docstring). `size`: workers per memory cap
    (default: the number of CPUs, at least 2). Use it as `async with WorkerPool() as pool:` or call `aclose()`.

    Bound to the event loop it is first used in."""

    def __init__(self, size: int | None = None) -> None:
        self.size = size if size is not None else max(2, os.cpu_count() or 2)
        if self.size < 1:
            raise ValueError(f"a worker pool needs at least one worker, got {size!r}")
        self._slots: dict[int, _Slots] = {}
        self._closed = False

    async def __aenter__(self) -> WorkerPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- evaluation ---------------------------------------------------------------------------------------------

    async def evaluate(
        self,
        expr: str,
        obj: Any,
        *,
        policy: EvaluationPolicy | None = None,
        field_path: str | None = None,
        max_results: int = MAX_RESULTS,
    ) -> list[Any]:
        """Every output of `expr` on `obj` (as `workload_map.jq.evaluate`); raises the `JqError`."""
        result = (
            await self.evaluate_many([expr], obj, policy=policy, field_paths=[field_path], max_results=max_results)
        )[0]
        if isinstance(result, JqError):
            raise result
        return result

    async def evaluate_many(
        self,
        exprs: Sequence[str],
        obj: Any,
        *,
        policy: EvaluationPolicy | None = None,
        field_paths: Sequence[str | None] | None = None,
        max_results: int = MAX_RESULTS,
    ) -> list[list[Any] | JqError]:
        """Each expression's outputs or its `JqError` (as `Document.evaluate_many`). `obj` may be a `Document`."""
        document = obj if isinstance(obj, Document) else Document(obj, policy=policy)
        return await self.run(document, document.evaluate_many_steps(exprs, field_paths, max_results=max_results))

    async def paths(
        self, expr: str, obj: Any, *, policy: EvaluationPolicy | None = None, field_path: str | None = None
    ) -> list[list[Any]]:
        """Every path `expr` selects (as `workload_map.jq.paths`)."""
        document = obj if isinstance(obj, Document) else Document(obj, policy=policy)
        return await self.run(document, document.paths_steps(expr, field_path))

    async def run(self, document: Document, steps: Steps[T]) -> T:
        """Drive a Document's steps, each libjq batch run under the Document's policy (in the pool for "worker")."""
        outcome: list[list[Any] | JqError] | None = None
        while True:
            try:
                batch = steps.send(outcome)  # type: ignore[arg-type]
            except StopIteration as stop:
                result: T = stop.value
                return result
            outcome = await self.run_batch(document.policy, batch.exprs, batch.text, batch.max_results, batch.kind)

    async def run_batch(
        self, policy: EvaluationPolicy, exprs: Sequence[str], text: str, max_results: int, kind: Kind
    ) -> list[list[Any] | JqError]:
        """`worker.run_batch` awaitable: in the pool, whatever the policy's mode (libjq never runs in process)."""
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        slots = self._slots.get(policy.memory_mb)
        if slots is None:
            slots = self._slots[policy.memory_mb] = _Slots(policy.memory_mb, self.size)
        plan = worker.request_plan(list(exprs), policy)
        outcome: worker.Outcome | None = None
        while True:
            try:
                attempt = plan.send(outcome)  # type: ignore[arg-type]
            except StopIteration as stop:
                results: list[list[Any] | JqError] = stop.value
                return results
            started = time.monotonic()
            outcome = await self._attempt(slots, attempt, text, max_results, kind, policy)
            policy.spent(time.monotonic() - started)

    async def _attempt(  # noqa: PLR0917 - one request's parts
        self, slots: _Slots, exprs: list[str], text: str, max_results: int, kind: Kind, policy: EvaluationPolicy
    ) -> worker.Outcome:
        """One request on a worker of the pool: its results, or the failure `worker.request_plan` interprets."""
        process: _AsyncProcess | JqError | None = await slots.acquire()
        keep = False
        try:
            if process is None:
                process = await self._start(slots, exprs[0])
            if isinstance(process, JqError):
                return process
            data = worker.encode_request(exprs, text, max_results, kind)
            try:
                reply = await process.request(data, policy.deadline)
            except TimeoutError as timeout:
                return timeout
            except worker._WorkerGoneError as gone:
                return gone
            if reply.get("memory"):
                return worker._WorkerGoneError(True, "out of memory")
            keep = True
            return worker.decode_results(exprs, reply)
        finally:
            # cancelled or failed mid-request: the worker is killed (it may still be running libjq)
            if not keep and isinstance(process, _AsyncProcess):
                await process.kill()
            await slots.release(process if isinstance(process, _AsyncProcess) else None, keep=keep)

    async def _start(self, slots: _Slots, expr: str) -> _AsyncProcess | JqError:
        detail = ""
        for _ in range(2):
            try:
                process = await _AsyncProcess.start(slots.memory_mb)
            except OSError as exc:
                detail = str(exc)
                continue
            slots.busy.add(process)
            try:
                await process.wait_ready()
            except (TimeoutError, worker._WorkerGoneError) as exc:
                slots.busy.discard(process)
                await process.kill()
                detail = exc.detail if isinstance(exc, worker._WorkerGoneError) else "no answer within a minute"
                continue
            except BaseException:
                slots.busy.discard(process)
                await process.kill()
                raise
            return process
        return worker.cannot_start(expr, detail)

    # --- lifecycle and diagnostics ------------------------------------------------------------------------------

    async def start(self, count: int | None = None, *, memory_mb: int | None = None) -> None:
        """Start `count` workers (default: `size`) of a memory cap ahead of use (default: the default policy's)."""
        from workload_map.jq.policy import DEFAULT_MEMORY_MB

        cap = DEFAULT_MEMORY_MB if memory_mb is None else memory_mb
        slots = self._slots.get(cap)
        if slots is None:
            slots = self._slots[cap] = _Slots(cap, self.size)
        wanted = min(self.size, self.size if count is None else count)

        held: list[_AsyncProcess] = []
        reserved = 0
        for _ in range(max(0, wanted - len(slots.busy))):  # hold the idle ones, so each take reserves a new slot
            process = await slots.acquire()
            if process is None:
                reserved += 1
            else:
                held.append(process)
        started = await asyncio.gather(*(self._start(slots, ".") for _ in range(reserved)), return_exceptions=True)
        failure: BaseException | None = None
        for item in started:
            if isinstance(item, _AsyncProcess):
                held.append(item)
            else:
                failure = failure or item
                await slots.release(None, keep=False)
        for process in held:
            await slots.release(process, keep=True)
        if failure is not None:
            raise failure

    def pids(self) -> dict[str, list[int]]:
        """Process ids of the pool's workers: `{"idle": [...], "busy": [...]}` (tests, diagnostics)."""
        idle = [p.pid for slots in self._slots.values() for p in slots.idle if p.alive]
        busy = [p.pid for slots in self._slots.values() for p in slots.busy if p.alive]
        return {"idle": sorted(idle), "busy": sorted(busy)}

    async def aclose(self) -> None:
        """Kill every worker; evaluations still running fail."""
        self._closed = True
        processes = [p for slots in self._slots.values() for p in (*slots.idle, *slots.busy)]
        for slots in self._slots.values():
            slots.idle.clear()
        await asyncio.gather(*(p.kill() for p in processes), return_exceptions=True)
