"""The admission webhooks over HTTPS (`--enable-webhook`): the Karta decisions of `admission.py`, served on
`--webhook-port` with the certificates of `certs.py`, and, in `--webhook-cert-mode auto`, the webhook
configurations that tell the API server to call them (with the CA as their caBundle), kept by this process.

Every replica serves (admission is not leader work); the configurations are written by whichever replica starts,
each write the same. Both webhooks use `failurePolicy: Ignore` and a 5 s timeout: a controller that is down never
blocks an apply (the operator's conditions still report an invalid Karta).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.core import Operation
from workload_map.cluster.errors import ClusterError, NotFound
from workload_map.controller.admission import mutate_karta, review_response, validate_karta
from workload_map.controller.certs import CertificateError, Rotated, ServingCertificate, merge_bundles
from workload_map.controller.health import Metrics
from workload_map.controller.pod_admission import PodAdmission

__all__ = [
    "ROUTES",
    "Registration",
    "ServiceReference",
    "configurations",
    "keep_certificates",
    "load",
    "register_configurations",
    "serve_webhooks",
    "serving_context",
]

log = logging.getLogger("workload_map.controller")

Handler = Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]]


async def _validate_karta(review: Mapping[str, Any]) -> dict[str, Any]:
    return validate_karta(review)


async def _mutate_karta(review: Mapping[str, Any]) -> dict[str, Any]:
    return mutate_karta(review)


ROUTES: dict[str, Handler] = {"/validate-karta": _validate_karta, "/mutate-karta": _mutate_karta}
_MAX_BODY = 8 * 1024 * 1024
_FIRST_REQUEST = 10.0  # seconds a new connection may take to send its first request
_IDLE = 60.0  # seconds a kept-alive connection may wait for its next one (the API server closes idle ones sooner)
_JSON = "application/json"


def _answer(status: int, body: bytes, *, keep: bool) -> bytes:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large"}.get(status, "Error")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {_JSON}\r\nContent-Length: {len(body)}\r\n"
        f"Connection: {'keep-alive' if keep else 'close'}\r\n\r\n"
    )
    return head.encode() + body


def serving_context(certificate: ServingCertificate) -> ssl.SSLContext:
    """The server's TLS context; `load(context, certificate)` swaps its certificate for the next handshakes."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    load(context, certificate)
    return context


def load(context: ssl.SSLContext, certificate: ServingCertificate) -> None:
    try:
        context.load_cert_chain(str(certificate.cert_file), str(certificate.key_file))
    except (OSError, ssl.SSLError) as exc:
        raise CertificateError(f"cannot load {certificate.cert_file} and {certificate.key_file}: {exc}") from None


async def serve_webhooks(
    host: str, port: int, context: ssl.SSLContext, metrics: Metrics, *, pods: PodAdmission | None = None
) -> asyncio.Server:
    routes = dict(ROUTES)
    if pods is not None:
        routes["/mutate-pod"] = pods.review

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # HTTP/1.1 keep-alive: the API server sends its next admissions over the same TLS connection, so a burst
        # of pods costs one handshake per connection, not one per pod
        try:
            timeout = _FIRST_REQUEST
            while True:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=timeout)
                timeout = _IDLE
                lines = head.decode("latin-1").split("\r\n")
                method, _, rest = lines[0].partition(" ")
                target, _, protocol = rest.partition(" ")
                path = target.partition("?")[0]
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
                }
                length = int(headers.get("content-length") or 0)
                keep = protocol == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
                route = routes.get(path)
                if length > _MAX_BODY:
                    writer.write(_answer(413, b'{"message":"too large"}', keep=False))
                    keep = False
                else:
                    body = await asyncio.wait_for(reader.readexactly(length), timeout=10) if length else b""
                    if method != "POST" or route is None:
                        writer.write(_answer(404, b'{"message":"not found"}', keep=keep))
                    else:
                        answer = json.dumps(await _review(route, path, body, metrics)).encode()
                        writer.write(_answer(200, answer, keep=keep))
                await writer.drain()
                if not keep:
                    break
        except (
            TimeoutError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ConnectionError,
            ValueError,
            ssl.SSLError,
        ):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, host, port, ssl=context)


async def _review(route: Handler, path: str, body: bytes, metrics: Metrics) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        review = json.loads(body)
        if not isinstance(review, dict):
            raise ValueError("not an object")
    except ValueError:
        return review_response(
            {}, allowed=False, message="the webhook was sent something that is not an AdmissionReview"
        )
    try:
        return await route(review)
    finally:
        metrics.reconciled(f"webhook{path}", "served", time.perf_counter() - start)


@dataclass(frozen=True)
class ServiceReference:
    """An in-cluster Service the API server calls the webhooks through (`--webhook-service-name`)."""

    namespace: str
    name: str
    port: int = 443

    def hosts(self) -> list[str]:
        """The names the API server checks the serving certificate for (it dials `NAME.NAMESPACE.svc`)."""
        return [f"{self.name}.{self.namespace}.svc", f"{self.name}.{self.namespace}.svc.cluster.local"]


@dataclass(frozen=True)
class Registration:
    """The webhook configurations this process writes in auto mode: `name`, called at `url` (out of the cluster)
    or through `service` (in it); with `pods_excluded`, the pod webhook too (never acting in those namespaces)."""

    name: str
    url: str | None = None
    service: ServiceReference | None = None
    pods_excluded: tuple[str, ...] | None = None
    namespaces: tuple[str, ...] = ()

    def client_config(self, path: str, ca: bytes) -> dict[str, Any]:
        bundle = {"caBundle": base64.b64encode(ca).decode()} if ca else {}
        if self.service is not None:
            service = self.service
            target: dict[str, Any] = {
                "service": {"namespace": service.namespace, "name": service.name, "path": path, "port": service.port}
            }
        else:
            target = {"url": f"{(self.url or '').rstrip('/')}{path}"}
        return {**target, **bundle}

    def where(self) -> str:
        if self.service is not None:
            return f"Service {self.service.namespace}/{self.service.name}:{self.service.port}"
        return str(self.url)


def _webhook(name: str, registration: Registration, path: str, ca: bytes) -> dict[str, Any]:
    return {
        "name": name,
        "clientConfig": registration.client_config(path, ca),
        "rules": [
            {
                "apiGroups": ["run.ai"],
                "apiVersions": ["v1alpha1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["kartas"],
                "scope": "Cluster",
            }
        ],
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Ignore",
        "timeoutSeconds": 5,
    }


def _pod_webhook(registration: Registration, ca: bytes) -> dict[str, Any]:
    hook = _webhook("pods.mutate.workloadmap.io", registration, "/mutate-pod", ca)
    hook["rules"] = [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["pods"],
            "scope": "Namespaced",
        }
    ]
    excluded = sorted(set(registration.pods_excluded or ()))
    expressions = [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": excluded}]
    if registration.namespaces:
        expressions.append(
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(registration.namespaces)}
        )
    hook["namespaceSelector"] = {"matchExpressions": expressions}
    return hook


def configurations(registration: Registration, ca: bytes) -> list[dict[str, Any]]:
    """The ValidatingWebhookConfiguration and the MutatingWebhookConfiguration, as written (sans I/O)."""
    name = registration.name
    metadata = {"name": name, "labels": {"app.kubernetes.io/managed-by": "workload-map"}}
    validating = _webhook("kartas.validate.workloadmap.io", registration, "/validate-karta", ca)
    mutating = [_webhook("kartas.mutate.workloadmap.io", registration, "/mutate-karta", ca)]
    if registration.pods_excluded is not None:
        mutating.append(_pod_webhook(registration, ca))
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": dict(metadata),
            "webhooks": [validating],
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": dict(metadata),
            "webhooks": mutating,
        },
    ]


def _bundle_of(configuration: dict[str, Any]) -> bytes:
    for hook in configuration.get("webhooks") or ():
        encoded = (hook.get("clientConfig") or {}).get("caBundle")
        if isinstance(encoded, str):
            try:
                return base64.b64decode(encoded)
            except ValueError:
                return b""
    return b""


async def register_configurations(client: AsyncApiClient, registration: Registration, ca: bytes) -> None:
    """Create or replace the two webhook configurations (`configurations`) with `ca` as their caBundle."""
    name = registration.name
    for body in configurations(registration, ca):
        kind = body["kind"]
        plural = f"{kind.lower()}s"
        collection = f"/apis/admissionregistration.k8s.io/v1/{plural}"
        op = Operation("update", f"{plural}.admissionregistration.k8s.io", None, name)
        try:
            existing = await client.get(f"{collection}/{name}", op=op)
        except NotFound:
            await client.request("POST", collection, op=op, body=json.dumps(body).encode(), content_type=_JSON)
        else:
            body["metadata"]["resourceVersion"] = (existing.get("metadata") or {}).get("resourceVersion")
            if ca:  # keep the other replicas' CAs (each has its own in auto mode), ours first
                merged = merge_bundles(ca, _bundle_of(existing))
                for hook in body["webhooks"]:
                    hook["clientConfig"]["caBundle"] = base64.b64encode(merged).decode()
            await client.request(
                "PUT", f"{collection}/{name}", op=op, body=json.dumps(body).encode(), content_type=_JSON
            )
        log.info("webhook: %s %s calls %s", kind, name, registration.where())


async def keep_certificates(
    context: ssl.SSLContext,
    *,
    check: Callable[[], Awaitable[Rotated | None]],
    registration: Registration | None,
    client: AsyncApiClient,
    interval: float,
) -> None:
    """Every `interval`: `check()` the certificates (auto: renew or rotate; manual: read again when the files
    changed; None when nothing changed); a new caBundle is written into the configurations (before any
    certificate of a new CA is served: certs.py), a new serving certificate loaded for the next handshakes. A
    check that fails is logged and tried again at the next interval (the certificate in use stays)."""
    while True:
        await asyncio.sleep(interval)
        try:
            rotated = await check()
            if rotated is None:
                continue
            if rotated.bundle_changed and registration is not None:
                await register_configurations(client, registration, rotated.certificate.ca_pem)
            if rotated.serving_changed:
                load(context, rotated.certificate)
                log.info("webhook: serving certificate %s loaded", rotated.certificate.cert_file)
        except (CertificateError, ClusterError) as exc:
            log.warning("webhook: certificates not renewed (tried again in %g s): %s", interval, exc)
