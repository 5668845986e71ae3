"""`wmap gang TYPE/NAME`: the gang plan (or a scheduler's objects) of a live workload, with its pods.

The workload and its pods are read as `describe TYPE/NAME` reads them (`Cluster.fetch_workload`: one GET, one pod
LIST, one metadata LIST per owner kind); the pods whose owner chain reaches the workload are planned with it
(`LiveWorkload.owned_pods()`), through the same pipeline as `gang -f` (`cli.pipeline.from_live`, then
`cli.plans.gang_documents` / `write_documents`). Called from `gang` when no `-f` is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.cli.context import state
from workload_map.cli.errors import CLIError, UsageError
from workload_map.cli.jqmode import definition_policy
from workload_map.cli.live import live_session, parse_target, referenced_objects, translate_errors
from workload_map.cli.options import ConnectionOptions
from workload_map.cli.pipeline import from_live
from workload_map.cli.plans import GangOptions, gang_documents, write_documents
from workload_map.resolve import ResolveError


def gang_live(
    args: tuple[str, ...],
    *,
    options: GangOptions,
    output_format: str,
    connection: ConnectionOptions,
    cache_dir: str | None,
    definition_paths: tuple[str, ...],
    pod_files: tuple[str, ...] = (),
    related: Sequence[Mapping[str, Any]] = (),
) -> None:
    if pod_files:
        raise UsageError("--pods is for -f: a live workload's pods are read from the cluster")
    token, name = parse_target(args, name_required=True, command="gang")
    assert name is not None
    with live_session(connection, cache_dir=cache_dir, definition_paths=definition_paths) as session:
        rtype = session.resolve(token)
        with translate_errors():
            live = session.cluster.fetch_workload(rtype, name, namespace=session.namespace)
        for message in live.warnings:
            state().warn(message)
        try:
            found = referenced_objects(session.cluster, live, related)  # what its definition refers to
            workload = from_live(live, f"{rtype.kind}/{name}", definition_policy, related=found)
        except ResolveError as exc:
            raise CLIError(f"{rtype.kind}/{name}: {exc}") from None
        documents = gang_documents(workload, live.owned_pods(), options, state())
    write_documents(documents, output_format)
