"""Options shared by commands: `-o/--output` (with config and environment defaults), `--definitions`, the limits,
and the kubectl connection flags, `--cache-dir` and `--chunk-size` (for the commands that read a cluster).

The click-free half (the format lists, `resolve_output`, `ConnectionOptions`, the defaults) is
`cli.option_values`, re-exported here.

A command declares its output formats once with an `OutputSpec`, decorates itself with `output_option(spec)`, and
calls `resolve_output(spec, value)` in its body: an explicit `-o` wins, then `$WMAP_OUTPUT`, then the config file
(the command's section, then the global `output`), then the default.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click
from click.shell_completion import CompletionItem

from workload_map.cli.option_values import (
    POD_LIMIT_DEFAULT,
    ConnectionOptions,
    OutputSpec,
    resolve_output,
)

__all__ = [
    "POD_LIMIT_DEFAULT",
    "ConnectionOptions",
    "OutputChoice",
    "OutputSpec",
    "cache_dir_option",
    "chunk_size_option",
    "component_limit_option",
    "connection_options",
    "definitions_option",
    "manifest_files_option",
    "multi_cluster_options",
    "output_option",
    "pod_limit_option",
    "resolve_output",
    "with_files_option",
]

F = TypeVar("F", bound=Callable[..., Any])


# --- -o/--output --------------------------------------------------------------------------------------------


class OutputChoice(click.ParamType):  # type: ignore[type-arg]  # generic only in newer click
    name = "format"

    def __init__(self, spec: OutputSpec) -> None:
        self.spec = spec

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "|".join(self.spec.choices)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        normal = self.spec.normalise(text)
        if normal is None:
            self.fail(f"{text!r} must be one of {self.spec.describe()}", param, ctx)
        return normal

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        return [CompletionItem(choice) for choice in self.spec.choices if choice.startswith(incomplete)]


def output_option(spec: OutputSpec) -> Callable[[F], F]:
    return click.option(
        "-o",
        "--output",
        type=OutputChoice(spec),
        default=None,
        help=f"Output format: {spec.describe()} [default: {spec.default_help or spec.fallback}, or $WMAP_OUTPUT, or "
        "the config file].",
    )


# --- -f/--filename -------------------------------------------------------------------------------------------


def manifest_files_option(help_text: str) -> Callable[[F], F]:
    """`-f/--filename/--file FILE|DIR|-` (repeatable, into `files`): the manifests a command reads."""
    return click.option(
        "-f",
        "--filename",
        "--file",
        "files",
        multiple=True,
        metavar="FILE|DIR|-",
        type=click.Path(),
        help=help_text,
    )


def with_files_option(f: F) -> F:
    """`--with FILE|DIR|-` (repeatable, into `with_files`): objects the workloads refer to (a TrainJob's runtime,
    docs/definitions.md "Cross-object references"), read for their content and not described themselves."""
    return click.option(
        "--with",
        "with_files",
        multiple=True,
        metavar="FILE|DIR|-",
        type=click.Path(),
        help="Objects the workloads refer to (a TrainJob's TrainingRuntime), read for their roles and not described "
        "themselves. Repeatable.",
    )(f)


# --- --definitions ------------------------------------------------------------------------------------------


def definitions_option(f: F) -> F:
    return click.option(
        "--definitions",
        "definition_paths",
        multiple=True,
        metavar="PATH",
        type=click.Path(),
        help="Karta definitions to use (a file, a directory of *.yaml/*.yml/*.json, or - for stdin); repeatable. "
        "They take precedence over the built-in catalog for the same kind.",
    )(f)


# --- limits -------------------------------------------------------------------------------------------------


def _not_negative(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    if value is not None and value < 0:
        raise click.BadParameter("must not be negative", ctx=ctx, param=param)
    return value


def pod_limit_option(f: F) -> F:
    return click.option(
        "--pod-limit",
        type=int,
        default=POD_LIMIT_DEFAULT,
        show_default=True,
        metavar="N",
        callback=_not_negative,
        help="Show at most N pods per component, unhealthy ones first (0: all). Tree output only.",
    )(f)


def component_limit_option(default: int, what: str) -> Callable[[F], F]:
    return click.option(
        "--component-limit",
        type=int,
        default=default,
        show_default=True,
        metavar="N",
        callback=_not_negative,
        help=what,
    )


# --- cluster connection (kubectl's flags) -------------------------------------------------------------------


_CONNECTION_FLAGS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("--kubeconfig",), "kubeconfig", "Path to the kubeconfig file [default: $KUBECONFIG, else ~/.kube/config]."),
    (("--context",), "context", "The kubeconfig context to use."),
    (("--cluster",), "cluster", "The kubeconfig cluster to use."),
    (("--user",), "user", "The kubeconfig user to use."),
    (("-n", "--namespace"), "namespace", "The namespace [default: the context's, else default]."),
    (("-s", "--server"), "server", "The address of the Kubernetes API server."),
    (("--token",), "token", "Bearer token for the API server."),
    (("--request-timeout",), "request_timeout", "How long to wait for one request (e.g. 10s, 1m; 0: no limit)."),
    (("--as",), "impersonate", "The user to act as (impersonation)."),
    (("--as-uid",), "impersonate_uid", "The UID to act as (with --as)."),
    (("--certificate-authority",), "certificate_authority", "A CA file to check the server's certificate with."),
    (("--client-certificate",), "client_certificate", "A client certificate file to authenticate with."),
    (("--client-key",), "client_key", "The key file of --client-certificate."),
    (("--tls-server-name",), "tls_server_name", "The server name to send and check the certificate against."),
)


def connection_options(f: F) -> F:
    """kubectl's connection flags; the command receives them as one `connection: ConnectionOptions` argument."""
    return _connection_flags(f, many_contexts=False)


def multi_cluster_options(f: F) -> F:
    """The connection flags with `--context` repeatable and `--all-contexts`, for a command that asks several
    clusters at once: `connection.contexts` holds every `--context` (and `connection.context` the first)."""
    return _connection_flags(f, many_contexts=True)


def _connection_flags(f: F, *, many_contexts: bool) -> F:
    decorated: Any = f
    for names, dest, help_text in reversed(_CONNECTION_FLAGS):
        if many_contexts and dest == "context":
            decorated = click.option(
                "--context",
                "conn_contexts",
                multiple=True,
                metavar="TEXT",
                help="A kubeconfig context to ask (repeatable: one row per cluster).",
            )(decorated)
            decorated = click.option(
                "--all-contexts", "conn_all_contexts", is_flag=True, help="Ask every context of the kubeconfig."
            )(decorated)
            continue
        decorated = click.option(*names, f"conn_{dest}", default=None, help=help_text, metavar="TEXT")(decorated)
    decorated = click.option(
        "--as-group",
        "conn_impersonate_groups",
        multiple=True,
        metavar="TEXT",
        help="A group to act as (with --as; repeatable).",
    )(decorated)
    decorated = click.option(
        "--disable-compression",
        "conn_disable_compression",
        is_flag=True,
        help="Ask the server for uncompressed answers.",
    )(decorated)
    decorated = click.option(
        "--insecure-skip-tls-verify",
        "conn_insecure_skip_tls_verify",
        is_flag=True,
        help="Do not check the server's certificate (insecure).",
    )(decorated)
    return cast(F, _gather_connection(decorated))


def _gather_connection(f: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {key[len("conn_") :]: kwargs.pop(key) for key in list(kwargs) if key.startswith("conn_")}
        if "contexts" in values:
            values["contexts"] = tuple(values["contexts"])
            values["context"] = values["contexts"][0] if values["contexts"] else None
        kwargs["connection"] = ConnectionOptions(**values)
        return f(*args, **kwargs)

    return wrapper


# --- the live commands' discovery cache and paging ------------------------------------------------------------


def cache_dir_option(f: F) -> F:
    return click.option(
        "--cache-dir",
        "cache_dir",
        metavar="DIR",
        default=None,
        help="Where the discovery cache lives [default: $WMAP_CACHE_DIR, else ~/.cache/workload-map]; "
        "entries are kept 10 minutes.",
    )(f)


def chunk_size_option(f: F) -> F:
    def check(ctx: click.Context, param: click.Parameter, value: int) -> int:
        if value < 0:
            raise click.BadParameter("must not be negative (0: no paging)", ctx=ctx, param=param)
        return value

    return click.option(
        "--chunk-size",
        type=int,
        default=500,
        show_default=True,
        metavar="N",
        callback=check,
        help="Read lists in pages of N objects (0: one request).",
    )(f)


def poll_interval_option(f: F) -> F:
    """`--poll-interval` of the watching commands (`wmap watch`, `get -w`): here, not beside the watch loop, so a
    plain `get` declares it without importing the event loop (issue 19: start-up)."""
    return click.option(
        "--poll-interval",
        type=click.FloatRange(min=0.1),
        default=10.0,
        show_default=True,
        metavar="SECONDS",
        help="How often to LIST when RBAC allows list but not watch (the fallback, with a warning).",
    )(f)
