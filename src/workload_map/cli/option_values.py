"""The values of the shared options, without click: the `-o` formats a command prints (`OutputSpec`) and the
choice among `-o`, `$WMAP_OUTPUT` and the config file (`resolve_output`), the connection flags as given
(`ConnectionOptions`), and the defaults of the limits.

`cli.options` declares the click options over these; the run without click (`cli.quick`) uses them directly, so
both paths read one definition of each format list and each default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import msgspec

from workload_map.cli.config import ENV_OUTPUT
from workload_map.cli.context import state
from workload_map.cli.errors import UsageError

POD_LIMIT_DEFAULT = 0  # --pod-limit: every pod shown


# --- -o/--output --------------------------------------------------------------------------------------------


class OutputSpec(msgspec.Struct, frozen=True):
    """The formats a command prints: `choices` (the first is the default unless `default` says otherwise) and
    `aliases` accepted for compatibility (`table` for `tree` in describe)."""

    command: str
    choices: tuple[str, ...]
    default: str = ""
    aliases: Mapping[str, str] = msgspec.field(default_factory=dict)
    # formats that carry a value, as kubectl's `-o jsonpath=TEMPLATE` (the command parses the value)
    templated: tuple[str, ...] = ()
    # the default as --help states it, when the command picks it itself (gang: text on a terminal, else yaml)
    default_help: str = ""

    @property
    def fallback(self) -> str:
        return self.default or self.choices[0]

    def normalise(self, value: str) -> str | None:
        """The format `value` names (`name=VALUE` as given for a templated one), or None when this command does
        not print it."""
        if value in self.choices:
            return value
        prefix, equals, _ = value.partition("=")
        if equals and prefix in self.templated:
            return value
        return self.aliases.get(value)

    def describe(self) -> str:
        listed = ", ".join((*self.choices, *(f"{name}=..." for name in self.templated)))
        if self.aliases:
            listed += " (" + ", ".join(f"{a} = {t}" for a, t in self.aliases.items()) + ")"
        return listed


def resolve_output(spec: OutputSpec, explicit: str | None) -> str:
    """The format to print: `-o`, else `$WMAP_OUTPUT`, else the config file, else the command's default."""
    if explicit:
        return explicit
    env = os.environ.get(ENV_OUTPUT, "").strip()
    if env:
        return _configured_output(spec, env, f"${ENV_OUTPUT}")
    configured = state().config.output_for(spec.command)
    if configured is not None:
        value, where = configured
        return _configured_output(spec, value, where)
    return spec.fallback


def _configured_output(spec: OutputSpec, value: str, where: str) -> str:
    """A format set outside the command line (`where`: the variable or config key), in the command's spelling."""
    chosen = spec.normalise(value)
    if chosen is None:
        raise UsageError(
            f"{where} is {value!r}, which wmap {spec.command} does not print",
            hint=f"use one of {spec.describe()}, or give -o",
        )
    return chosen


# --- cluster connection (kubectl's flags) -------------------------------------------------------------------


class ConnectionOptions(msgspec.Struct, frozen=True):
    """The kubectl connection flags as given on the command line (None: not given, the kubeconfig decides).

    These are the flags, not the connection: `request_timeout` is the text of `--request-timeout`, and "not given"
    is kept apart from any value, because what the flags mean is decided where the cluster is opened
    (`cli.live.connection_settings` parses them into the cluster layer's `ConnectionSettings`, with the timeout
    the command uses when the flag is absent). A file-mode command that never opens a cluster never parses them.
    """

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    server: str | None = None
    token: str | None = None
    request_timeout: str | None = None
    insecure_skip_tls_verify: bool = False
    impersonate: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    impersonate_uid: str | None = None
    certificate_authority: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    tls_server_name: str | None = None
    disable_compression: bool = False
    contexts: tuple[str, ...] = ()
    """Commands over several clusters (`multi_cluster_options`): every `--context` given, in order."""
    all_contexts: bool = False
    """`--all-contexts`: every context of the kubeconfig."""
