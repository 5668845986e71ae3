"""Which cluster, as whom, in which namespace: kubeconfig files and kubectl's connection flags.

Files: `--kubeconfig PATH` (must exist), else every file of `$KUBECONFIG` (a `:`-separated list, merged as kubectl
merges it: for each named cluster, user and context the first file that defines it wins, and so does the first
`current-context`), else `~/.kube/config`, else the in-cluster service account. Relative paths in a file are read
relative to that file.

Flags: `--context` picks the context; `--cluster` and `--user` replace the context's; `--server`, `--token` and
`--insecure-skip-tls-verify` replace those settings; `-n` wins over the context's namespace, which wins over
`default`. `--request-timeout` takes kubectl's durations (`30s`, `1m`, `1m30s`, `500ms`, a bare number of seconds;
`0` waits forever).

The models are our own small msgspec Structs (`Cluster`, `User`, `UserExec`, `Context`, `SingleConfig`), with
kubectl's field names: client certificates and keys as files or data, CA files and data, bearer tokens and token
files, basic auth, and exec credential plugins (client.authentication.k8s.io v1, v1beta1 and v1alpha1, tokens
cached until they expire); `cluster.credentials` turns them into the TLS context and the `Authorization` header.
No Kubernetes client package is imported (issue 19: lightkube's import alone was ~15 ms of every live command).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from workload_map._io import InputError, read_input_text
from workload_map._regex import LazyPattern
from workload_map.cluster.errors import KubeconfigError

DEFAULT_NAMESPACE = "default"
DEFAULT_REQUEST_TIMEOUT = 30.0
DEFAULT_KUBECONFIG = "~/.kube/config"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"

# Keys whose values are file paths, per section of a kubeconfig (made absolute against the file that holds them).
_PATH_KEYS: Mapping[str, tuple[str, ...]] = {
    "cluster": ("certificate-authority",),
    "user": ("client-certificate", "client-key", "tokenFile"),
}


# --- the kubeconfig's models (kubectl's field names) ------------------------------------------------------------


class NameValue(msgspec.Struct, frozen=True):
    """One `env` entry of an exec credential plugin."""

    name: str
    value: str


class UserExec(msgspec.Struct, frozen=True):
    """`users[].user.exec`: a credential plugin to run for a token."""

    apiVersion: str  # noqa: N815 - kubectl's field name
    command: str
    env: list[NameValue] | None = None
    args: list[str] | None = None
    installHint: str | None = None  # noqa: N815


class User(msgspec.Struct, frozen=True):
    """`users[].user`: how to authenticate (the first of token file, token, exec plugin, basic auth is used; a
    client certificate goes with any of them)."""

    exec: UserExec | None = None
    username: str | None = None
    password: str | None = None
    token: str | None = None
    token_file: str | None = msgspec.field(name="tokenFile", default=None)
    auth_provider: dict[str, Any] | None = msgspec.field(name="auth-provider", default=None)
    client_cert: str | None = msgspec.field(name="client-certificate", default=None)
    client_cert_data: str | None = msgspec.field(name="client-certificate-data", default=None)
    client_key: str | None = msgspec.field(name="client-key", default=None)
    client_key_data: str | None = msgspec.field(name="client-key-data", default=None)


class Cluster(msgspec.Struct, frozen=True):
    """`clusters[].cluster`: where the server is and how to trust it."""

    server: str = "http://localhost:8080"
    certificate_auth: str | None = msgspec.field(name="certificate-authority", default=None)
    certificate_auth_data: str | None = msgspec.field(name="certificate-authority-data", default=None)
    insecure: bool = msgspec.field(name="insecure-skip-tls-verify", default=False)
    tls_server_name: str | None = msgspec.field(name="tls-server-name", default=None)


class Context(msgspec.Struct, frozen=True):
    """`contexts[].context`."""

    cluster: str
    user: str | None = None
    namespace: str | None = None


class SingleConfig(msgspec.Struct, frozen=True):
    """The one context a run uses, with its cluster and user (flags applied)."""

    context_name: str
    context: Context
    cluster: Cluster
    user: User
    fname: str | None = None


class _Kubeconfig(msgspec.Struct):
    """A (merged) kubeconfig file, by name."""

    clusters: dict[str, Cluster]
    users: dict[str, User]
    contexts: dict[str, Context]
    current_context: str | None = None
    fname: str | None = None


def _entries(raw: Mapping[str, Any], plural: str, singular: str, model: type[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in raw.get(plural) or ():
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if not isinstance(name, str):
            raise KubeconfigError(f"every entry of {plural} needs a name")
        try:
            out[name] = msgspec.convert(entry.get(singular) or {}, model)
        except msgspec.ValidationError as exc:
            raise KubeconfigError(f"{plural} {name!r}: {exc}") from None
    return out


def _from_dict(raw: Mapping[str, Any], fname: str | None) -> _Kubeconfig:
    current = raw.get("current-context")
    return _Kubeconfig(
        clusters=_entries(raw, "clusters", "cluster", Cluster),
        users=_entries(raw, "users", "user", User),
        contexts=_entries(raw, "contexts", "context", Context),
        current_context=current if isinstance(current, str) and current else None,
        fname=fname,
    )


def _from_service_account(directory: str, environ: Mapping[str, str]) -> _Kubeconfig:
    """The in-cluster configuration: the service account's token file, CA and namespace, the API server from
    `$KUBERNETES_SERVICE_HOST` and `_PORT`."""
    account = Path(directory)
    try:
        namespace = (account / "namespace").read_text().strip()
        (account / "token").stat()
    except OSError as exc:
        raise KubeconfigError(f"the in-cluster service account cannot be read: {exc}") from None
    host = environ.get("KUBERNETES_SERVICE_HOST", "")
    port = environ.get("KUBERNETES_SERVICE_PORT", "443")
    if ":" in host:  # IPv6
        host = f"[{host}]"
    cluster = Cluster(server=f"https://{host}:{port}", certificate_auth=str(account / "ca.crt"))
    return _Kubeconfig(
        clusters={"default": cluster},
        users={"default": User(token_file=str(account / "token"))},
        contexts={"default": Context(cluster="default", user="default", namespace=namespace or None)},
        current_context="default",
    )


def _from_server(server: str) -> _Kubeconfig:
    return _Kubeconfig(
        clusters={"default": Cluster(server=server)},
        users={},
        contexts={"default": Context(cluster="default")},
        current_context="default",
    )


# --- the connection ---------------------------------------------------------------------------------------------


class ConnectionSettings(msgspec.Struct, frozen=True):
    """kubectl's connection flags (None: not given, the kubeconfig decides)."""

    kubeconfig: str | None = None
    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    server: str | None = None
    token: str | None = None
    insecure_skip_tls_verify: bool = False
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT
    """Seconds per request; None waits forever (`--request-timeout 0`)."""
    impersonate: str | None = None
    """`--as`: the user to act as (`Impersonate-User`)."""
    impersonate_groups: tuple[str, ...] = ()
    """`--as-group` (repeatable; needs `--as`)."""
    impersonate_uid: str | None = None
    """`--as-uid` (needs `--as`)."""
    certificate_authority: str | None = None
    """`--certificate-authority`: a CA file, in place of the kubeconfig cluster's."""
    client_certificate: str | None = None
    """`--client-certificate`: a client certificate file, in place of the kubeconfig user's credentials."""
    client_key: str | None = None
    """`--client-key`: the key of `--client-certificate`."""
    tls_server_name: str | None = None
    """`--tls-server-name`: the name sent (SNI) and checked in the server's certificate, in place of the URL's host."""
    disable_compression: bool = False
    """`--disable-compression`: ask for uncompressed answers (`Accept-Encoding: identity`)."""


class KubeContext(msgspec.Struct, frozen=True):
    """The connection a run uses: its `SingleConfig` plus what messages need to name."""

    config: SingleConfig
    namespace: str
    server: str
    context_name: str
    user_name: str
    files: tuple[str, ...] = ()
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT
    namespace_from_flag: bool = False
    server_from_flag: bool = False
    impersonate: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    impersonate_uid: str | None = None
    tls_server_name: str | None = None
    disable_compression: bool = False
    proxy_url: str | None = None
    """The kubeconfig cluster's `proxy-url`: every request goes through it."""

    @property
    def extra_headers(self) -> list[tuple[str, str]]:
        """The headers every request carries besides the credentials: impersonation, compression."""
        headers: list[tuple[str, str]] = []
        if self.impersonate:
            headers.append(("Impersonate-User", self.impersonate))
            headers.extend(("Impersonate-Group", group) for group in self.impersonate_groups)
            if self.impersonate_uid:
                headers.append(("Impersonate-Uid", self.impersonate_uid))
        if self.disable_compression:
            headers.append(("Accept-Encoding", "identity"))
        return headers

    @property
    def server_name(self) -> str | None:
        """The TLS server name to send and check, when not the URL's host: `--tls-server-name`, else the
        kubeconfig cluster's `tls-server-name`."""
        return self.tls_server_name or self.config.cluster.tls_server_name or None

    @property
    def request_extensions(self) -> dict[str, str]:
        """httpx request extensions: the TLS server name (SNI and the certificate check) of `--tls-server-name`."""
        name = self.server_name
        return {"sni_hostname": name} if name else {}

    @property
    def server_source(self) -> str:
        """Where the server URL came from, for hints."""
        return "--server" if self.server_from_flag else self.where

    @property
    def where(self) -> str:
        """`context "x" of ~/.kube/config`: for hints."""
        source = ", ".join(self.files) if self.files else "the in-cluster service account"
        return f'context "{self.context_name}" of {source}'


# --- durations ------------------------------------------------------------------------------------------------

_DURATION_PART = LazyPattern(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float | None:
    """kubectl's `--request-timeout`: `30s`, `1m`, `1m30s`, `500ms`, `2h`, or a bare number of seconds.

    Returns seconds, or None for `0` (no timeout). Raises `KubeconfigError` for anything else.
    """
    value = text.strip()
    if re.fullmatch(r"\d+", value):
        seconds = float(int(value))
    else:
        pos, seconds = 0, 0.0
        for match in _DURATION_PART.finditer(value):
            if match.start() != pos:
                break
            seconds += float(match.group(1)) * _UNITS[match.group(2)]
            pos = match.end()
        if not value or pos != len(value):
            raise KubeconfigError(
                f"--request-timeout {text!r} is not a duration",
                hint="use a number with a unit, e.g. 10s, 1m, 1m30s (0: no timeout)",
            )
    return None if seconds == 0 else seconds


# --- files ------------------------------------------------------------------------------------------------------


def kubeconfig_files(explicit: str | None, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The kubeconfig files to read, in precedence order (may be empty: then the in-cluster config is tried)."""
    env = os.environ if environ is None else environ
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise KubeconfigError(f"kubeconfig {explicit} does not exist", hint="check the path given to --kubeconfig")
        return [path]
    listed = env.get("KUBECONFIG", "")
    if listed.strip():
        found = [Path(p).expanduser() for p in listed.split(os.pathsep) if p.strip()]
        existing = [p for p in found if p.is_file()]
        if not existing:
            raise KubeconfigError(
                f"no kubeconfig: none of the files in $KUBECONFIG exists ({listed})",
                hint="fix $KUBECONFIG, or give --kubeconfig",
            )
        return existing
    default = Path(DEFAULT_KUBECONFIG).expanduser()
    return [default] if default.is_file() else []


def _absolute(section: str, body: Mapping[str, Any], base: Path) -> dict[str, Any]:
    fixed = dict(body)
    for key in _PATH_KEYS.get(section, ()):
        value = fixed.get(key)
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            fixed[key] = str(base / value)
    if section == "user":
        exec_spec = fixed.get("exec")
        if isinstance(exec_spec, Mapping):
            command = exec_spec.get("command")
            # kubectl: a command with a path separator is relative to the file; a bare name is looked up in PATH.
            if isinstance(command, str) and os.sep in command and not Path(command).is_absolute():
                fixed["exec"] = {**exec_spec, "command": str(base / command)}
    return fixed


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _load_yaml(text: str, path: Path) -> Any:
    """`yaml.safe_load(text)`: through the model's reader of the YAML subset kubeconfigs are written in (the same
    value, PyYAML not imported: issue 19), else PyYAML (what the subset declines, and every error message)."""
    from workload_map.model.yaml_subset import safe_load

    fast = safe_load(text)
    if fast is not None:
        return fast[0]
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KubeconfigError(f"kubeconfig {path} cannot be read: {_first_line(exc)}") from None


def merge_kubeconfigs(files: Sequence[Path]) -> dict[str, Any]:
    """One kubeconfig dict from several files, as kubectl merges `$KUBECONFIG` (first definition of a name wins)."""
    merged: dict[str, Any] = {"clusters": [], "users": [], "contexts": [], "current-context": None}
    seen: dict[str, set[str]] = {"clusters": set(), "users": set(), "contexts": set()}
    for path in files:
        try:
            loaded = _load_yaml(read_input_text(path, label=str(path))[1], path) or {}
        except InputError as exc:  # over the 64 MiB limit (/dev/zero), a FIFO without a writer, unreadable
            raise KubeconfigError(f"kubeconfig {path} cannot be read: {exc.message}") from None
        except OSError as exc:
            raise KubeconfigError(f"kubeconfig {path} cannot be read: {_first_line(exc)}") from None
        if not isinstance(loaded, Mapping):
            raise KubeconfigError(f"kubeconfig {path} is not a mapping")
        base = path.resolve().parent
        for plural, singular in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
            entries = loaded.get(plural) or []
            if not isinstance(entries, list):
                raise KubeconfigError(f"kubeconfig {path}: {plural} must be a list")
            for entry in entries:
                if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                    raise KubeconfigError(f"kubeconfig {path}: every entry of {plural} needs a name")
                name = entry["name"]
                if name in seen[plural]:
                    continue
                seen[plural].add(name)
                body = entry.get(singular) or {}
                if not isinstance(body, Mapping):
                    raise KubeconfigError(f"kubeconfig {path}: {plural} {name!r}: {singular} must be a mapping")
                merged[plural].append({"name": name, singular: _absolute(singular, body, base)})
        if merged["current-context"] is None and loaded.get("current-context"):
            merged["current-context"] = loaded["current-context"]
    return merged


# --- resolving the context --------------------------------------------------------------------------------------


def load_context(settings: ConnectionSettings, environ: Mapping[str, str] | None = None) -> KubeContext:
    """The connection `settings` select (see the module docstring). Raises `KubeconfigError`."""
    env = os.environ if environ is None else environ
    files = kubeconfig_files(settings.kubeconfig, env)
    raw: dict[str, Any] = {}
    if files:
        raw = merge_kubeconfigs(files)
        try:
            kubeconfig = _from_dict(raw, fname=str(files[0]))
        except KubeconfigError as exc:
            raise KubeconfigError(f"kubeconfig {files[0]} cannot be used: {exc.message}") from None
    elif env.get("KUBERNETES_SERVICE_HOST") and Path(SERVICE_ACCOUNT_DIR).is_dir():
        kubeconfig = _from_service_account(SERVICE_ACCOUNT_DIR, env)
    elif settings.server:
        kubeconfig = _from_server(settings.server)
    else:
        raise KubeconfigError(
            "no kubeconfig: ~/.kube/config does not exist and $KUBECONFIG is not set",
            hint="give --kubeconfig, set $KUBECONFIG, or run inside a cluster",
        )

    context_name = settings.context or kubeconfig.current_context
    if not context_name:
        if len(kubeconfig.contexts) == 1:
            context_name = next(iter(kubeconfig.contexts))
        else:
            raise KubeconfigError(
                "the kubeconfig has no current-context", hint="give --context, or run kubectl config use-context NAME"
            )
    context = kubeconfig.contexts.get(context_name)
    if context is None:
        known = ", ".join(sorted(kubeconfig.contexts)) or "none"
        raise KubeconfigError(f'context "{context_name}" is not in the kubeconfig (contexts: {known})')
    cluster_name = settings.cluster or context.cluster
    cluster = kubeconfig.clusters.get(cluster_name)
    if cluster is None:
        if settings.server:
            cluster = Cluster(server=settings.server)
        else:
            raise KubeconfigError(f'cluster "{cluster_name}" is not in the kubeconfig')
    user_name = settings.user or context.user or ""
    user: User | None = None
    if user_name:
        user = kubeconfig.users.get(user_name)
        if user is None:
            raise KubeconfigError(f'user "{user_name}" is not in the kubeconfig')
    proxy_url = _proxy_url(raw, cluster_name)
    if settings.server:
        cluster = msgspec.structs.replace(cluster, server=settings.server)
    if settings.insecure_skip_tls_verify:
        cluster = msgspec.structs.replace(cluster, insecure=True, certificate_auth=None, certificate_auth_data=None)
    if settings.certificate_authority and settings.insecure_skip_tls_verify:
        raise KubeconfigError(
            "--certificate-authority cannot be combined with --insecure-skip-tls-verify", hint="give one of them"
        )
    if settings.certificate_authority:
        cluster = msgspec.structs.replace(
            cluster,
            certificate_auth=_existing(settings.certificate_authority, "--certificate-authority"),
            certificate_auth_data=None,
            insecure=False,
        )
    if settings.token:
        user = User(token=settings.token)
    if settings.client_certificate or settings.client_key:
        if not (settings.client_certificate and settings.client_key):
            raise KubeconfigError("--client-certificate and --client-key go together", hint="give both, or neither")
        user = User(
            client_cert=_existing(settings.client_certificate, "--client-certificate"),
            client_key=_existing(settings.client_key, "--client-key"),
        )
    if (settings.impersonate_groups or settings.impersonate_uid) and not settings.impersonate:
        raise KubeconfigError(
            "--as-group and --as-uid need --as (the user to act as)", hint="e.g. --as jane --as-group devs"
        )
    namespace = settings.namespace or context.namespace or DEFAULT_NAMESPACE
    single = SingleConfig(
        context_name=context_name,
        context=Context(cluster=cluster_name, user=user_name or None, namespace=namespace),
        cluster=cluster,
        user=user or User(),
        fname=kubeconfig.fname,
    )
    return KubeContext(
        config=single,
        namespace=namespace,
        server=cluster.server.rstrip("/"),
        context_name=context_name,
        user_name=user_name,
        files=tuple(str(f) for f in files),
        request_timeout=settings.request_timeout,
        namespace_from_flag=bool(settings.namespace),
        server_from_flag=bool(settings.server),
        impersonate=settings.impersonate or None,
        impersonate_groups=tuple(settings.impersonate_groups),
        impersonate_uid=settings.impersonate_uid or None,
        tls_server_name=settings.tls_server_name or None,
        disable_compression=settings.disable_compression,
        proxy_url=proxy_url,
    )


def _proxy_url(raw: Mapping[str, Any], cluster_name: str) -> str | None:
    """The kubeconfig cluster's `proxy-url` (read from the merged file): http or https (a SOCKS proxy
    would need a package we do not install)."""
    for entry in raw.get("clusters") or ():
        if isinstance(entry, Mapping) and entry.get("name") == cluster_name:
            body = entry.get("cluster")
            value = body.get("proxy-url") if isinstance(body, Mapping) else None
            if value is None or value == "":
                return None
            if not isinstance(value, str) or not re.match(r"(?i)^https?://", value):
                raise KubeconfigError(f'cluster "{cluster_name}": proxy-url {value!r} is not an http or https URL')
            return value
    return None


def _existing(path: str, flag: str) -> str:
    """An absolute path to a file a flag names; `KubeconfigError` when there is none."""
    found = Path(path).expanduser()
    if not found.is_file():
        raise KubeconfigError(f"{flag} {path}: no such file")
    return str(found.resolve())
