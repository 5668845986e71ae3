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
from typing import Any

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.core import Operation
from workload_map.cluster.errors import NotFound
from workload_map.controller.admission import mutate_karta, review_response, validate_karta
from workload_map.controller.certs import ServingCertificate
from workload_map.controller.health import Metrics
from workload_map.controller.pod_admission import PodAdmission

__all__ = ["ROUTES", "register_configurations", "serve_webhooks"]

log = logging.getLogger("workload_map.controller")

Handler = Callable[[Mapping[str, Any]], Awaitable[dict[str, Any]]]


async def _validate_karta(review: Mapping[str, Any]) -> dict[str, Any]:
    return validate_karta(review)


async def _mutate_karta(review: Mapping[str, Any]) -> dict[str, Any]:
    return mutate_karta(review)


ROUTES: dict[str, Handler] = {"/validate-karta": _validate_karta, "/mutate-karta": _mutate_karta}
_MAX_BODY = 8 * 1024 * 1024
_JSON = "application/json"


def _answer(status: int, body: bytes) -> bytes:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large"}.get(status, "Error")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {_JSON}\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode() + body


async def serve_webhooks(
    host: str, port: int, certificate: ServingCertificate, metrics: Metrics, *, pods: PodAdmission | None = None
) -> asyncio.Server:
    routes = dict(ROUTES)
    if pods is not None:
        routes["/mutate-pod"] = pods.review
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(certificate.cert_file), str(certificate.key_file))

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
            lines = head.decode("latin-1").split("\r\n")
            method, _, rest = lines[0].partition(" ")
            path = rest.partition(" ")[0].partition("?")[0]
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
            length = int(headers.get("content-length") or 0)
            route = routes.get(path)
            if method != "POST" or route is None:
                writer.write(_answer(404, b'{"message":"not found"}'))
            elif length > _MAX_BODY:
                writer.write(_answer(413, b'{"message":"too large"}'))
            else:
                body = await asyncio.wait_for(reader.readexactly(length), timeout=10)
                writer.write(_answer(200, json.dumps(await _review(route, path, body, metrics)).encode()))
            await writer.drain()
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


def _webhook(name: str, url: str, path: str, ca: bytes) -> dict[str, Any]:
    return {
        "name": name,
        "clientConfig": {
            "url": f"{url.rstrip('/')}{path}",
            **({"caBundle": base64.b64encode(ca).decode()} if ca else {}),
        },
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


def _pod_webhook(url: str, ca: bytes, *, excluded: list[str], namespaces: tuple[str, ...]) -> dict[str, Any]:
    hook = _webhook("pods.mutate.workloadmap.io", url, "/mutate-pod", ca)
    hook["rules"] = [
        {
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["pods"],
            "scope": "Namespaced",
        }
    ]
    expressions = [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": sorted(set(excluded))}]
    if namespaces:
        expressions.append({"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(namespaces)})
    hook["namespaceSelector"] = {"matchExpressions": expressions}
    return hook


async def register_configurations(
    client: AsyncApiClient,
    name: str,
    url: str,
    ca: bytes,
    *,
    pods_excluded: list[str] | None = None,
    namespaces: tuple[str, ...] = (),
) -> None:
    """Create or replace the ValidatingWebhookConfiguration and MutatingWebhookConfiguration `name` (with the pod
    webhook when `pods_excluded` is given: the namespaces it never acts in)."""
    for kind, plural, hook, path in (
        (
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            "kartas.validate.workloadmap.io",
            "/validate-karta",
        ),
        (
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            "kartas.mutate.workloadmap.io",
            "/mutate-karta",
        ),
    ):
        collection = f"/apis/admissionregistration.k8s.io/v1/{plural}"
        op = Operation("update", f"{plural}.admissionregistration.k8s.io", None, name)
        body: dict[str, Any] = {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "workload-map"}},
            "webhooks": [_webhook(hook, url, path, ca)],
        }
        if kind == "MutatingWebhookConfiguration" and pods_excluded is not None:
            body["webhooks"].append(_pod_webhook(url, ca, excluded=pods_excluded, namespaces=namespaces))
        try:
            existing = await client.get(f"{collection}/{name}", op=op)
        except NotFound:
            await client.request("POST", collection, op=op, body=json.dumps(body).encode(), content_type=_JSON)
        else:
            body["metadata"]["resourceVersion"] = (existing.get("metadata") or {}).get("resourceVersion")
            await client.request(
                "PUT", f"{collection}/{name}", op=op, body=json.dumps(body).encode(), content_type=_JSON
            )
        log.info("webhook: %s %s calls %s", kind, name, url)
