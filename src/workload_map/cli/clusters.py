"""Asking several clusters at once (`wmap capacity`, `wmap place`, `wmap get --context A --context B`): which
contexts (`--context`, repeatable, or `--all-contexts`), and one answer per cluster, the clusters asked
concurrently, each with its own deadline.

    for answer in each_cluster(connection, lambda cluster, name: read_snapshot(cluster, name)):
        answer.context, answer.value, answer.error       # error: one line (unreachable, forbidden, timed out)

A cluster that fails is an answer with `error` set, never the end of the run: the caller shows it as a warning row
and the others as usual. Every warning given while a cluster is asked names it (`cluster prod-a: ...`,
`State.scope`). The threads only wait on the network; the answers come back in the order the contexts
were given.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import msgspec

from workload_map.cli.context import state
from workload_map.cli.errors import CLIError, UsageError
from workload_map.cli.live import cli_error, connection_settings
from workload_map.cli.options import ConnectionOptions
from workload_map.cluster import Cluster, ClusterError
from workload_map.cluster.kubeconfig import kubeconfig_files, merge_kubeconfigs

__all__ = ["CURRENT", "ClusterAnswer", "cluster_deadline", "context_names", "each_cluster", "each_context"]

T = TypeVar("T")

MAX_PARALLEL = 8
"""Clusters asked at the same time."""

CURRENT = "(current context)"
"""How messages name the cluster of the current context (the context `""`)."""


class ClusterAnswer(msgspec.Struct, Generic[T], frozen=True):
    """One cluster's answer: `value`, or `error` (one line) when it could not be asked."""

    context: str
    value: T | None = None
    error: str | None = None


def context_names(connection: ConnectionOptions) -> list[str]:
    """The contexts to ask: every `--context` given (duplicates once), or every context of the kubeconfig with
    `--all-contexts`, or `[""]`: the current context only. A kubeconfig that cannot be read is exit 1."""
    if connection.all_contexts:
        if connection.contexts:
            raise UsageError("--all-contexts cannot be combined with --context")
        try:
            merged = merge_kubeconfigs(kubeconfig_files(connection.kubeconfig))
        except ClusterError as exc:
            raise cli_error(exc) from None
        names = [str(entry["name"]) for entry in merged["contexts"]]
        if not names:
            raise CLIError("--all-contexts: the kubeconfig has no contexts")
        return names
    return list(dict.fromkeys(connection.contexts)) or [""]


def each_context(contexts: Sequence[str], ask: Callable[[str], T], *, deadline: float | None) -> list[ClusterAnswer[T]]:
    """`ask(context)` for each context, concurrently; a `CLIError` or `ClusterError` it raises, or running past
    `deadline` seconds (None: no limit), is that context's `error`."""

    def one(context: str) -> ClusterAnswer[T]:
        try:
            # what the cluster's reading warns about (a type not installed, a definition of its own) names it
            with state().scope(f"cluster {context or CURRENT}"):
                return ClusterAnswer(context, ask(context))
        except ClusterError as exc:
            return ClusterAnswer(context, error=cli_error(exc).message)
        except CLIError as exc:
            return ClusterAnswer(context, error=exc.message)

    # the thread pool only when several clusters are asked: `get` of one cluster imports this module too (issue 19)
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import TimeoutError as FutureTimeout

    report = state()
    before = len(report.warnings)
    pool = ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(contexts)) or 1, thread_name_prefix="wmap-cluster")
    try:
        futures = [pool.submit(one, context) for context in contexts]
        # one end for all, counted from the start: waiting `deadline` per future, in turn, let a cluster behind a
        # hung one answer long after its own deadline (and the command wait a deadline per hung cluster)
        end = None if deadline is None else time.monotonic() + deadline
        answers: list[ClusterAnswer[T]] = []
        for context, future in zip(contexts, futures, strict=True):
            try:
                answers.append(future.result(timeout=None if end is None else max(0.0, end - time.monotonic())))
            except FutureTimeout:
                answers.append(ClusterAnswer(context, error=f"no answer within {deadline:g}s"))
        if all(future.done() for future in futures):  # else a cluster's thread may still add one: leave them
            _in_context_order(report.warnings, before, contexts)
        return answers
    finally:
        # a cluster past its deadline is not waited for: its requests end at their own timeout
        pool.shutdown(wait=False, cancel_futures=True)


def _in_context_order(warnings: list[str], start: int, contexts: Sequence[str]) -> None:
    """The warnings the clusters gave (from `start` on, each `cluster NAME: ...`) in the order of `contexts`, each
    cluster's in the order it gave them: the threads finish in any order, the output is the same every run."""
    if len(warnings) <= start + 1:
        return
    prefixes = sorted(((f"cluster {c or CURRENT}: ", i) for i, c in enumerate(contexts)), key=lambda p: -len(p[0]))

    def rank(message: str) -> int:
        return next((index for prefix, index in prefixes if message.startswith(prefix)), len(contexts))

    warnings[start:] = sorted(warnings[start:], key=rank)


def each_cluster(
    connection: ConnectionOptions,
    ask: Callable[[Cluster, str], T],
    *,
    contexts: Sequence[str] | None = None,
    chunk_size: int = 500,
) -> list[ClusterAnswer[T]]:
    """`ask(cluster, name)` on each context's cluster (`context_names` unless `contexts` is given), concurrently.
    `name` is the context ("" for the current one: then the context's own name); each cluster has
    `cluster_deadline`."""
    names = context_names(connection) if contexts is None else list(contexts)

    def one(context: str) -> T:
        chosen = connection_settings(msgspec.structs.replace(connection, context=context or connection.context))
        cluster = Cluster(chosen, cache_dir=None, chunk_size=chunk_size)
        try:
            return ask(cluster, context or cluster.context.context_name)
        finally:
            cluster.close()

    return each_context(names, one, deadline=cluster_deadline(connection))


def cluster_deadline(connection: ConnectionOptions) -> float | None:
    """How long one cluster may take: three of its request timeouts (`--request-timeout`, else the default; None:
    no limit). Checks the connection flags (a bad `--request-timeout` is exit 2)."""
    timeout = connection_settings(connection).request_timeout
    return None if timeout is None else 3 * timeout
