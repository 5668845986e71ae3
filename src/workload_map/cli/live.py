"""The CLI's cluster seam: what every live command (`get`, `describe TYPE/NAME`, `suspend`, `resume`,
`gang TYPE/NAME`) shares: TYPE/NAME arguments, the connection flags parsed into the cluster layer's
`ConnectionSettings`, opening a cluster session (connection, discovery, definitions), and the mapping of cluster
errors to exit codes.

This module and the live command modules (`commands.get`, `commands.suspend`, `commands.live_describe`,
`commands.live_gang`) are the only CLI modules that import `workload_map.cluster` (an import-linter contract); a
command that also works offline (`describe -f`, `gang -f`, `definitions`) imports its live half only when it goes
to the cluster, so the offline path never loads the cluster layer.

    with live_session(connection, cache_dir=..., definition_paths=...) as session:
        rtype = session.resolve(token)
        ...

Exit codes (kli-cli §1.4): an unreachable server, a refused request and any other API error are 1; an ambiguous
TYPE is 2; a missing workload or an uninstalled type asked for by name is 3; a TYPE no definition covers is 4.
`--debug` prints each HTTP request (method, path, status, time, size) on stderr as it happens.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cli.context import state
from workload_map.cli.definitions_source import build_registry
from workload_map.cli.errors import EXIT_WORKLOAD_NOT_FOUND, CLIError, NoDefinition, UsageError
from workload_map.cli.jqmode import definition_policy
from workload_map.cli.options import ConnectionOptions
from workload_map.cli.safe import safe_text
from workload_map.cluster import (
    DEFAULT_REQUEST_TIMEOUT,
    AmbiguousType,
    Cluster,
    ClusterError,
    ConnectionSettings,
    KubeconfigError,
    LiveWorkload,
    NotServed,
    ResolvedType,
    TypeNotCovered,
    WorkloadNotFound,
    parse_duration,
)
from workload_map.cluster.kubeconfig import DEFAULT_KUBECONFIG, SERVICE_ACCOUNT_DIR
from workload_map.cluster.references import ReferenceFetcher
from workload_map.resolve.references import needs_references, references_of, without_reference

if TYPE_CHECKING:
    from workload_map.catalog import DefinitionRegistry
    from workload_map.model import Karta

NO_DEFINITION_HINT = (
    '"wmap definitions" lists the types Karta definitions cover; add a definition for this one with --definitions '
    "FILE, or apply a Karta definition to the cluster"
)


# --- TYPE/NAME ------------------------------------------------------------------------------------------------


def parse_target(args: tuple[str, ...], *, name_required: bool, command: str) -> tuple[str, str | None]:
    """`TYPE`, `TYPE/NAME` or `TYPE NAME` -> (type, name); the argument checks of kli-cli §3 (all exit 2)."""
    if len(args) > 2:
        raise UsageError(
            f"too many arguments: {' '.join(args)}",
            hint=f"give TYPE/NAME or TYPE NAME, e.g. wmap {command} jobset/train",
        )
    if not args:
        raise UsageError("a TYPE is required", hint=f"e.g. wmap {command} pytorchjob/NAME")
    first = args[0]
    name: str | None = None
    token = first
    if "/" in first:
        token, _, name = first.partition("/")
        if not token:
            raise UsageError(f'TYPE is empty in "{first}"')
        if not name:
            raise UsageError(f'NAME is empty in "{first}"', hint="is a shell variable unset?")
        if "/" in name:
            raise UsageError(f'NAME must not contain "/": "{name}"')
        if len(args) == 2:
            raise UsageError(f'NAME given twice: as "{first}" and as "{args[1]}"')
    elif len(args) == 2:
        name = args[1]
        if not name:
            raise UsageError("NAME is empty", hint="is a shell variable unset?")
        if "/" in name:
            raise UsageError(f'NAME must not contain "/": "{name}"')
    if not token.strip():
        raise UsageError("TYPE is empty")
    if name_required and name is None:
        raise UsageError(
            "a NAME is required: give it as TYPE/NAME or as TYPE NAME", hint=f"e.g. wmap {command} {token}/NAME"
        )
    return token, name


# --- errors -----------------------------------------------------------------------------------------------------


def cli_error(exc: BaseException) -> CLIError:
    """The CLI error (message, hint, exit code) for a cluster-layer error."""
    if isinstance(exc, (NotServed, WorkloadNotFound)):
        return CLIError(exc.message, hint=exc.hint, exit_code=EXIT_WORKLOAD_NOT_FOUND)
    if isinstance(exc, TypeNotCovered):
        return NoDefinition(exc.message, hint=NO_DEFINITION_HINT)
    if isinstance(exc, AmbiguousType):
        return UsageError(exc.message, hint=exc.hint)
    if isinstance(exc, ClusterError):
        return CLIError(exc.message, hint=exc.hint)
    raise TypeError(f"not a cluster error: {exc!r}")  # pragma: no cover


@contextmanager
def translate_errors() -> Iterator[None]:
    """Cluster errors raised inside become CLI errors with the right exit code."""
    try:
        yield
    except ClusterError as exc:
        raise cli_error(exc) from None


# --- the session ------------------------------------------------------------------------------------------------


def _debug_log(line: str) -> None:
    state().stderr.write(f"debug: {safe_text(line, None)}\n")
    state().stderr.flush()


debug_log = _debug_log  # the `--debug` line of a request, for the watch loop's async client


class LiveSession(msgspec.Struct):
    """An open cluster (`cluster`) and the definitions in force (`registry`: local > cluster > catalog)."""

    cluster: Cluster
    registry: DefinitionRegistry

    @property
    def namespace(self) -> str:
        return self.cluster.namespace

    def resolve(self, token: str) -> ResolvedType:
        with translate_errors():
            return self.cluster.resolve_type(token, self.registry)


def connection_settings(
    connection: ConnectionOptions, *, request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT
) -> ConnectionSettings:
    """The cluster layer's `ConnectionSettings` from the CLI flags; `request_timeout` (seconds, None: no limit) is
    used when `--request-timeout` is not given. A bad `--request-timeout` is exit 2."""
    timeout = request_timeout
    if connection.request_timeout is not None:
        try:
            timeout = parse_duration(connection.request_timeout)
        except KubeconfigError as exc:
            raise UsageError(exc.message, hint=exc.hint) from None
    return ConnectionSettings(
        kubeconfig=connection.kubeconfig,
        context=connection.context,
        cluster=connection.cluster,
        user=connection.user,
        namespace=connection.namespace,
        server=connection.server,
        token=connection.token,
        insecure_skip_tls_verify=connection.insecure_skip_tls_verify,
        request_timeout=timeout,
        impersonate=connection.impersonate,
        impersonate_groups=tuple(connection.impersonate_groups),
        impersonate_uid=connection.impersonate_uid,
        certificate_authority=connection.certificate_authority,
        client_certificate=connection.client_certificate,
        client_key=connection.client_key,
        tls_server_name=connection.tls_server_name,
        disable_compression=connection.disable_compression,
    )


@contextmanager
def live_session(
    connection: ConnectionOptions,
    *,
    cache_dir: str | None = None,
    definition_paths: tuple[str, ...] = (),
    chunk_size: int = 500,
) -> Iterator[LiveSession]:
    """Connect (kubeconfig and flags), read discovery (an unreachable server fails here, once), load the definitions
    (local files, the cluster's Kartas, the catalog) and yield the session; cluster errors become CLI errors."""
    settings = connection_settings(connection)
    debug = state().debug
    with translate_errors():
        kwargs: dict[str, Any] = {"log": _debug_log if debug else None}
        if cache_dir is not None:
            kwargs["cache_dir"] = Path(cache_dir).expanduser()
        cluster = Cluster(settings, chunk_size=chunk_size, **kwargs)
        try:
            # Local files are read (and checked) first, then the cluster's Kartas: the first request, so an
            # unreachable server or refused credentials fail here, once.
            registry = build_registry(definition_paths, report=state(), cluster=_RequiredClusterSource(cluster, debug))
            if len(registry) == 0:
                raise NoDefinition("no Karta definitions available (catalog empty and no cluster definitions)")
            cluster.discovery_document()
            yield LiveSession(cluster, registry)
        finally:
            if debug:
                count = cluster.requests
                _debug_log(f"{count} request{'s' * (count != 1)} to {cluster.client.server}")
            cluster.close()


class _RequiredClusterSource:
    """The cluster's Karta definitions for a command that needs the cluster anyway: a missing CRD is a debug note, a
    refused list a warning (the built-in definitions still work), an unreachable server or rejected credentials an
    error (every later request would fail the same way)."""

    def __init__(self, cluster: Cluster, debug: bool) -> None:
        self.cluster = cluster
        self.debug = debug

    def load(self) -> tuple[list[Karta], list[str]]:
        result = self.cluster.definitions()
        if result.state in ("unreachable", "error") and result.error is not None:
            raise result.error
        if self.debug:
            for note in result.notes:
                _debug_log(note)
        return result.definitions, result.warnings


# --- best effort: the cluster's definitions for a command that works without a cluster ---------------------------

OPTIONAL_REQUEST_TIMEOUT = 10.0
"""Seconds per request when reading the cluster's definitions is optional and `--request-timeout` is not given:
the built-in definitions should not wait 30 s on a cluster that does not answer."""


def kubeconfig_configured(connection: ConnectionOptions) -> bool:
    """Whether there is a cluster to try: a connection flag, `$KUBECONFIG`, `~/.kube/config` or the in-cluster
    service account. False only when there is none of them (then the cluster is left out silently)."""
    flags = (connection.kubeconfig, connection.context, connection.cluster, connection.user, connection.server)
    if any(flags) or connection.token:
        return True
    if os.environ.get("KUBECONFIG", "").strip():
        return True
    if Path(DEFAULT_KUBECONFIG).expanduser().is_file():
        return True
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and Path(SERVICE_ACCOUNT_DIR).is_dir()


class OptionalClusterSource:
    """The cluster's Karta definitions for a command that works without a cluster (`wmap definitions`): never
    raises. A kubeconfig that cannot be used, an unreachable server, refused credentials or a refused list are one
    warning each (`could not read Karta definitions from the cluster: ...; showing built-in definitions only`), a
    missing CRD a `--debug` note. Build it with `optional_cluster_source`."""

    def __init__(self, connection: ConnectionOptions, debug: bool) -> None:
        self.connection = connection
        self.debug = debug

    def load(self) -> tuple[list[Karta], list[str]]:
        settings = connection_settings(self.connection, request_timeout=OPTIONAL_REQUEST_TIMEOUT)
        try:
            cluster = Cluster(settings, cache_dir=None, log=_debug_log if self.debug else None)
        except ClusterError as exc:
            message = f"could not read Karta definitions from the cluster: {exc.message}"
            return [], [f"{message}; showing built-in definitions only"]
        try:
            result = cluster.definitions()  # never raises a ClusterError
            if self.debug:
                for note in result.notes:
                    _debug_log(note)
        finally:
            if self.debug:
                count = cluster.requests
                _debug_log(f"{count} request{'s' * (count != 1)} to {cluster.client.server}")
            cluster.close()
        return result.definitions, result.warnings


def optional_cluster_source(connection: ConnectionOptions) -> OptionalClusterSource | None:
    """A best-effort source of the cluster's definitions, or None when no kubeconfig is configured at all. A bad
    `--request-timeout` is exit 2, as for the live commands."""
    connection_settings(connection)  # checks the flags now
    if not kubeconfig_configured(connection):
        return None
    return OptionalClusterSource(connection, state().debug)


def no_definition_payload(token: str) -> dict[str, Any]:
    """The machine-readable error of kli-cli §4.10 for a live TYPE no definition covers."""
    return {
        "error": "no_definition_for_type",
        "type": token,
        "message": "no Karta definition covers this workload type",
        "hint": NO_DEFINITION_HINT,
    }


def referenced_objects(
    cluster: Cluster,
    live: LiveWorkload,
    given: Sequence[Mapping[str, Any]] = (),
    fetcher: ReferenceFetcher | None = None,
) -> list[Mapping[str, Any]]:
    """The objects a live workload's definition refers to (`workloadmap.io/references`: a TrainJob's runtime):
    those `given` (`--with`), then one GET for each other (through `fetcher`, which keeps its answers for the
    command); each one not read is a warning naming it, and the workload is then shown from what it says alone."""
    definition = live.type.definition
    if not needs_references(definition.karta):
        return list(given)
    label = f"{live.type.kind}/{(live.object.get('metadata') or {}).get('name', '')}"
    policy = definition_policy(definition.karta.name, definition.origin)
    wanted, problems = references_of(definition.karta, live.object, policy=policy)
    for problem in problems:
        state().warn(f"{label}: {problem}")
    missing = [reference for reference in wanted if not any(reference.matches(obj) for obj in given)]
    fetcher = fetcher or ReferenceFetcher(cluster)
    fetched: list[dict[str, Any]] = []
    for reference in missing:  # one at a time: each warning says what that reference gives
        found, reasons = fetcher.fetch([reference])
        fetched.extend(found)
        for reason in reasons:
            state().warn(f"{label}: {reason}: {without_reference(definition.karta, reference)}")
    return [*given, *fetched]
