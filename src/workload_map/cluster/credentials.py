"""How a connection proves who it talks to and who it is: the TLS context and the `Authorization` header of a
`KubeContext`, for every transport (the sync client, the async shell's httpx client).

* `tls_context(context)`: the cluster's CA (a file, or base64 data loaded from memory), or none checked with
  `insecure-skip-tls-verify`, else `$SSL_CERT_FILE` / `$SSL_CERT_DIR`, else the system's store; the user's client
  certificate and key (files, or data) loaded into it.
* `credentials(context)`: the user's `Authorization` header: a token file (read again after a 401: the kubelet
  rotates service-account tokens), a bearer token, an exec credential plugin (`client.run_exec_plugin_with_expiry`;
  cached until it expires, run again after a 401), or basic auth; None for none (a client certificate alone).
  An `auth-provider` is refused with a hint: kubectl dropped those plugins for exec plugins.

Every failure is a `KubeconfigError` naming the context (a CA or key that does not parse, a missing file).
"""

from __future__ import annotations

import base64
import os
import ssl
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from workload_map.cluster.errors import KubeconfigError

if TYPE_CHECKING:
    from workload_map.cluster.kubeconfig import KubeContext, UserExec

_RENEW_BEFORE = 10.0  # seconds before an exec plugin's token expires that it is run again


def _decoded(data: str, what: str, where: str) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except ValueError:
        raise KubeconfigError(f"{where} cannot be used: {what} is not base64") from None


def tls_context(context: KubeContext) -> ssl.SSLContext:
    """The TLS context of `context` (see the module docstring)."""
    cluster, user = context.config.cluster, context.config.user
    where = context.where
    try:
        if cluster.certificate_auth:
            ctx = ssl.create_default_context(cafile=cluster.certificate_auth)
        elif cluster.certificate_auth_data:
            pem = _decoded(cluster.certificate_auth_data, "certificate-authority-data", where)
            ctx = ssl.create_default_context(cadata=pem.decode("ascii", "replace"))
        elif cluster.insecure:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif cafile := os.environ.get("SSL_CERT_FILE"):
            ctx = ssl.create_default_context(cafile=cafile)
        elif capath := os.environ.get("SSL_CERT_DIR"):
            ctx = ssl.create_default_context(capath=capath)
        else:
            ctx = ssl.create_default_context()
        if user.client_cert or user.client_cert_data:
            _load_client_certificate(ctx, context)
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise KubeconfigError(f"{where} cannot be used: {' '.join(str(exc).split())}") from None
    return ctx


def _load_client_certificate(ctx: ssl.SSLContext, context: KubeContext) -> None:
    """The user's certificate and key into `ctx`: files as they are; data through a private temporary file each,
    removed at once (the ssl module loads a chain from files only)."""
    user, where = context.config.user, context.where
    if user.client_cert_data is None and user.client_key_data is None:
        if not user.client_key:
            raise KubeconfigError(f"{where} cannot be used: client-certificate without client-key")
        ctx.load_cert_chain(str(user.client_cert), user.client_key)
        return
    import tempfile

    parts: list[str] = []
    try:
        for data, path, what in (
            (user.client_cert_data, user.client_cert, "client-certificate-data"),
            (user.client_key_data, user.client_key, "client-key-data"),
        ):
            if data is None:
                if not path:
                    raise KubeconfigError(f"{where} cannot be used: {what} is missing")
                parts.append(path)
                continue
            handle, name = tempfile.mkstemp(prefix="wmap-", suffix=".pem")  # 0600
            with os.fdopen(handle, "wb") as out:
                out.write(_decoded(data, what, where))
            parts.append(name)
        ctx.load_cert_chain(parts[0], parts[1])
    finally:
        for name, data in zip(parts, (user.client_cert_data, user.client_key_data), strict=False):
            if data is not None:
                os.unlink(name)


class Credentials:
    """The `Authorization` header of one user, thread-safe. `renewable`: a 401 may be cured by asking again
    (`authorization(renew=True)`: the token file read again, the exec plugin run again)."""

    def __init__(self, read: Callable[[bool], str], *, renewable: bool, runs_plugin: bool = False) -> None:
        self._read = read
        self._lock = threading.Lock()
        self.renewable = renewable
        self.runs_plugin = runs_plugin
        """Whether reading may run a subprocess (the async shell then reads in a thread)."""

    def authorization(self, *, renew: bool = False) -> str:
        with self._lock:
            return self._read(renew)


def _static(value: str) -> Credentials:
    return Credentials(lambda _renew: value, renewable=False)


def _token_file(path: str, where: str) -> Credentials:
    cached: list[str] = []

    def read(renew: bool) -> str:
        if renew or not cached:
            try:
                with open(path, encoding="utf-8") as handle:
                    token = handle.read().strip()
            except OSError as exc:
                raise KubeconfigError(f"{where}: the token file {path} cannot be read: {exc.strerror}") from None
            cached[:] = [f"Bearer {token}"]
        return cached[0]

    return Credentials(read, renewable=True)


def _exec_plugin(spec: UserExec) -> Credentials:
    state: dict[str, object] = {}

    def read(renew: bool) -> str:
        from workload_map.cluster.client import run_exec_plugin_with_expiry

        expires = state.get("expires")
        fresh = expires is None or time.time() < float(expires) - _RENEW_BEFORE  # type: ignore[arg-type]
        if renew or "token" not in state or not fresh:
            state["token"], state["expires"] = run_exec_plugin_with_expiry(spec)
        return f"Bearer {state['token']}"

    return Credentials(read, renewable=True, runs_plugin=True)


def credentials(context: KubeContext) -> Credentials | None:
    """The user's `Authorization` header (see the module docstring); None when the user sends none."""
    user, where = context.config.user, context.where
    if user.token_file:
        return _token_file(user.token_file, where)
    if user.token:
        return _static(f"Bearer {user.token}")
    if user.exec is not None:
        return _exec_plugin(user.exec)
    if user.username and user.password:
        pair = f"{user.username}:{user.password}".encode()
        return _static("Basic " + base64.b64encode(pair).decode("ascii"))
    if user.auth_provider:
        raise KubeconfigError(
            f"{where} cannot be used: auth-provider is not supported",
            hint="use an exec credential plugin (users[].user.exec), as kubectl does since 1.26",
        )
    return None
