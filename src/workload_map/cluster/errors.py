"""Errors of the cluster layer: one class per condition a caller (the CLI) treats differently.

Every message is one line a person can act on; the CLI maps the classes to exit codes (unreachable, forbidden and
any other API error: 1; a missing workload or an uninstalled type: 3).
"""

from __future__ import annotations

from workload_map.errors import WorkloadMapError


class ClusterError(WorkloadMapError):
    """Something went wrong talking to the API server (or finding out how to talk to it)."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class KubeconfigError(ClusterError):
    """The kubeconfig (or a connection flag) cannot be used: missing file, unknown context, bad duration."""


class Unreachable(ClusterError):  # noqa: N818 (reads as the condition it reports)
    """No answer from the server: connection refused, DNS, TLS failure, or no response within the timeout."""


class ResponseTooLarge(ClusterError):  # noqa: N818 (reads as the condition it reports)
    """The server's answer is larger than the client's limit (`MAX_RESPONSE_BYTES`); it was not read whole."""


class ApiError(ClusterError):
    """The server answered with an error status. `status` is the HTTP status, `reason` the Status reason."""

    def __init__(self, message: str, *, status: int, reason: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.reason = reason


class Unauthorized(ApiError):  # noqa: N818
    """401: the server does not accept the credentials."""


class Forbidden(ApiError):  # noqa: N818
    """403: the user may not do this (RBAC). `verb`, `resource` and `namespace` say what was refused."""

    def __init__(
        self,
        message: str,
        *,
        verb: str = "",
        resource: str = "",
        namespace: str | None = None,
        user: str = "",
        hint: str | None = None,
    ) -> None:
        super().__init__(message, status=403, reason="Forbidden", hint=hint)
        self.verb = verb
        self.resource = resource
        self.namespace = namespace
        self.user = user


class NotFound(ApiError):  # noqa: N818
    """404: the object (or the whole resource type) does not exist."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, status=404, reason="NotFound", hint=hint)


class Conflict(ApiError):  # noqa: N818
    """409: the object changed since it was read (a write with a stale resourceVersion)."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, status=409, reason="Conflict", hint=hint)


class NotServed(ClusterError):  # noqa: N818
    """The type has a definition but the cluster does not serve it (its CRD is not installed)."""

    def __init__(self, kind: str, *, group: str = "", hint: str | None = None) -> None:
        super().__init__(f"{kind} is not installed in this cluster", hint=hint)
        self.kind = kind
        self.group = group


class WorkloadNotFound(ClusterError):  # noqa: N818
    """A named workload does not exist."""


class TypeNotCovered(ClusterError):  # noqa: N818
    """No definition covers a type token (`no Karta definition covers "x"`)."""

    def __init__(self, token: str, *, hint: str | None = None) -> None:
        super().__init__(f'no Karta definition covers "{token}"', hint=hint)
        self.token = token


class AmbiguousType(ClusterError):  # noqa: N818
    """A type token names several types; `candidates` are tokens that each resolve to one of them."""

    def __init__(self, message: str, candidates: list[str], *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.candidates = candidates
