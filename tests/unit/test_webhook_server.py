"""The webhook HTTPS server (`controller/webhook.py`) on a real socket with real certificates: HTTP/1.1 keep-alive
(the API server sends a burst of admissions over one TLS connection), `Connection: close` honoured, a path it
does not serve answered 404 on the same connection."""

from __future__ import annotations

import asyncio
import json
import ssl
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cryptography")

from workload_map.controller.certs import ensure_certificates
from workload_map.controller.health import Metrics
from workload_map.controller.webhook import serve_webhooks, serving_context


def _review(uid: str) -> bytes:
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": uid, "operation": "CREATE", "object": {"apiVersion": "run.ai/v1alpha1", "kind": "Karta"}},
    }
    return json.dumps(review).encode()


def _request(path: str, body: bytes, *, close: bool = False) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    head += f"Content-Length: {len(body)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n"
    return head.encode() + body


async def _answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], dict[str, Any]]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:] if line)}
    body = await reader.readexactly(int(headers["content-length"]))
    return status, headers, json.loads(body)


def test_one_connection_serves_many_admissions(tmp_path: Path) -> None:
    certificate = ensure_certificates(tmp_path, ["localhost"]).certificate
    metrics = Metrics()

    async def run() -> None:
        server = await serve_webhooks("127.0.0.1", 0, serving_context(certificate), metrics)
        port = server.sockets[0].getsockname()[1]
        client = ssl.create_default_context(cadata=certificate.ca_pem.decode())
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client, server_hostname="localhost")
            uids = []
            for n in range(3):
                writer.write(_request("/validate-karta", _review(f"uid-{n}")))
                await writer.drain()
                status, headers, answer = await _answer(reader)
                assert status == 200 and headers["connection"] == "keep-alive"
                uids.append(answer["response"]["uid"])
            assert uids == ["uid-0", "uid-1", "uid-2"]
            writer.write(_request("/nowhere", b"{}"))
            await writer.drain()
            status, headers, _ = await _answer(reader)
            assert status == 404 and headers["connection"] == "keep-alive"
            writer.write(_request("/validate-karta", _review("last"), close=True))
            await writer.drain()
            status, headers, answer = await _answer(reader)
            assert status == 200 and headers["connection"] == "close" and answer["response"]["uid"] == "last"
            assert await reader.read() == b""  # the server closed the connection
            writer.close()
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(run())
    assert "webhook/validate-karta" in metrics.text()
