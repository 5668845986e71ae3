"""`wmap serve`: the live engine's workloads over HTTP, as Prometheus metrics, a read-only JSON API and a dashboard
(docs/serve.md). This module only parses flags, opens the live session (kubeconfig, definitions, discovery: an
unreachable server or refused credentials fail here, exit 1, before anything listens) and hands over to
`workload_map.serve`, imported inside the command so no other command loads aiohttp or an event loop.

Scope: every namespace, or the one `-n/--namespace` names (a user who may list only their namespace gives it).
"""

from __future__ import annotations

import click

from workload_map.cli.context import state
from workload_map.cli.errors import CLIError, UsageError
from workload_map.cli.jqsettings import current_policy, evaluation_mode
from workload_map.cli.live import debug_log, live_session, translate_errors
from workload_map.cli.options import (
    ConnectionOptions,
    cache_dir_option,
    chunk_size_option,
    connection_options,
    definitions_option,
)
from workload_map.jq import EvaluationPolicy
from workload_map.jq.policy import DEFAULT_DEADLINE, DEFAULT_MEMORY_MB

DEFAULT_BIND = "127.0.0.1:8080"


def parse_bind(value: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:8080` for IPv6, `:8080` for every interface) -> (host, port); exit 2 otherwise."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(
            f"--bind must be HOST:PORT with a port from 0 to 65535, not {value!r}", hint="e.g. 0.0.0.0:8080"
        )
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host or "0.0.0.0", int(port)


def _policy(_definition: str, origin: str) -> EvaluationPolicy:
    # One policy per definition for the whole run, with no command budget: a server runs for days.
    settings = current_policy()
    return EvaluationPolicy(
        evaluation_mode(origin, settings.mode),
        deadline=DEFAULT_DEADLINE if settings.deadline is None else settings.deadline,
        memory_mb=DEFAULT_MEMORY_MB if settings.memory_mb is None else settings.memory_mb,
    )


_HELP = """\
Serve the cluster's workloads over HTTP: Prometheus metrics (GPUs per workload, the pod-to-workload join for
DCGM-exporter), a read-only JSON API and a dashboard, kept current by watching the cluster.

Every covered type the kubeconfig may list is watched, in every namespace or in the one -n names. Routes: / (the
dashboard), /metrics, /api/v1/workloads, /api/v1/workloads/NAMESPACE/KIND/NAME, /api/v1/definitions,
/api/v1/events, /healthz, /readyz. Stop with Ctrl-C or SIGTERM.

\b
Examples:
  wmap serve --kubeconfig ~/.kube/viewer --bind 0.0.0.0:9400
  wmap serve -n research --bind 127.0.0.1:8080
"""


@click.command(help=_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--bind", "bind", default=DEFAULT_BIND, show_default=True, metavar="HOST:PORT", help="Where to listen.")
@click.option(
    "--max-series",
    type=click.IntRange(min=1),
    default=100_000,
    show_default=True,
    metavar="N",
    help="At most N workload series per scrape; workloads past it are left out whole and counted.",
)
@click.option(
    "--poll-interval",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="How often to LIST a type RBAC lets us list but not watch.",
)
@click.option(
    "--user-tokens",
    is_flag=True,
    help=(
        "Check each request's bearer token with the API server (TokenReview) and show only what it may list "
        "(SubjectAccessReview, cached 60 s); /metrics needs a token that may GET it."
    ),
)
@chunk_size_option
@definitions_option
@cache_dir_option
@connection_options
def serve(
    *,
    bind: str,
    user_tokens: bool,
    max_series: int,
    poll_interval: float,
    chunk_size: int,
    definition_paths: tuple[str, ...],
    cache_dir: str | None,
    connection: ConnectionOptions,
) -> None:
    host, port = parse_bind(bind)
    try:
        from workload_map.serve import ServeError
        from workload_map.serve.engine import EngineConfig
        from workload_map.serve.run import ServeConfig
        from workload_map.serve.run import serve as run_server
    except ImportError as exc:
        raise CLIError(
            f"wmap serve needs the serve extra ({exc.name} is not installed)", hint="pip install 'workload-map[serve]'"
        ) from None
    with live_session(
        connection, cache_dir=cache_dir, definition_paths=definition_paths, chunk_size=chunk_size
    ) as session:
        cluster = session.cluster
        with translate_errors():
            # what the server serves now, not the disk cache's (up to 10 minutes old): a server plans once
            discovery = cluster.discovery.refresh() or cluster.discovery_document()
        state().flush_warnings()
        config = ServeConfig(
            context=cluster.context,
            engine=EngineConfig(
                discovery=discovery,
                registry=session.registry,
                namespace=connection.namespace,
                policy_for=_policy,
                chunk_size=chunk_size,
                poll_interval=poll_interval,
            ),
            host=host,
            port=port,
            max_series=max_series,
            user_tokens=user_tokens,
            request_log=debug_log if state().debug else None,
        )
        try:
            run_server(config)
        except ServeError as exc:
            raise CLIError(exc.message) from None
        except KeyboardInterrupt:
            pass
