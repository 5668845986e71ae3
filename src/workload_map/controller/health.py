"""The controller's own HTTP endpoints: `/healthz` and `/readyz` (the probe address) and `/metrics` (Prometheus
text format, the metrics address), on a small asyncio server: plain HTTP/1.1 GETs, one answer per connection.

`Metrics` holds the figures the controller keeps about itself: reconciles per controller and outcome, their
latency, the work queue's depth, leadership and the writes sent (or logged, with `--dry-run`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Metrics", "Probes", "parse_bind_address", "serve"]

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def parse_bind_address(address: str) -> tuple[str, int] | None:
    """`:8080` -> ("0.0.0.0", 8080), `127.0.0.1:0` -> ("127.0.0.1", 0), `0` -> None (turned off)."""
    if address.strip() in ("0", ""):
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bind address {address!r}: expected [HOST]:PORT")
    return (host.strip("[]") or "0.0.0.0", int(port))


@dataclass
class Metrics:
    """Counters, gauges and one histogram, written out in Prometheus' text format."""

    reconciles: dict[tuple[str, str], int] = field(default_factory=dict)
    latency_counts: dict[str, list[int]] = field(default_factory=dict)
    latency_sums: dict[str, float] = field(default_factory=dict)
    writes: dict[tuple[str, str], int] = field(default_factory=dict)
    queue_depth: dict[str, Callable[[], int]] = field(default_factory=dict)
    leader: bool = False

    def reconciled(self, controller: str, outcome: str, seconds: float) -> None:
        key = (controller, outcome)
        self.reconciles[key] = self.reconciles.get(key, 0) + 1
        counts = self.latency_counts.setdefault(controller, [0] * (len(_BUCKETS) + 1))
        for i, bound in enumerate(_BUCKETS):
            if seconds <= bound:
                counts[i] += 1
        counts[-1] += 1
        self.latency_sums[controller] = self.latency_sums.get(controller, 0.0) + seconds

    def wrote(self, verb: str, kind: str) -> None:
        key = (verb, kind)
        self.writes[key] = self.writes.get(key, 0) + 1

    def text(self) -> str:
        lines = [
            "# HELP workloadmap_controller_reconciles_total Reconciles by controller and outcome.",
            "# TYPE workloadmap_controller_reconciles_total counter",
        ]
        for (controller, outcome), count in sorted(self.reconciles.items()):
            labels = f'controller="{controller}",result="{outcome}"'
            lines.append(f"workloadmap_controller_reconciles_total{{{labels}}} {count}")
        lines += [
            "# HELP workloadmap_controller_reconcile_seconds Time per reconcile.",
            "# TYPE workloadmap_controller_reconcile_seconds histogram",
        ]
        for controller, counts in sorted(self.latency_counts.items()):
            for bound, count in zip(_BUCKETS, counts, strict=False):
                lines.append(
                    f'workloadmap_controller_reconcile_seconds_bucket{{controller="{controller}",le="{bound}"}} {count}'
                )
            name = "workloadmap_controller_reconcile_seconds"
            lines.append(f'{name}_bucket{{controller="{controller}",le="+Inf"}} {counts[-1]}')
            lines.append(f'{name}_sum{{controller="{controller}"}} {self.latency_sums[controller]:.6f}')
            lines.append(f'{name}_count{{controller="{controller}"}} {counts[-1]}')
        lines += [
            "# HELP workloadmap_controller_queue_depth Keys waiting to be reconciled.",
            "# TYPE workloadmap_controller_queue_depth gauge",
        ]
        for controller, depth in sorted(self.queue_depth.items()):
            lines.append(f'workloadmap_controller_queue_depth{{controller="{controller}"}} {depth()}')
        lines += [
            "# HELP workloadmap_controller_writes_total Writes sent (or logged with --dry-run) by verb and kind.",
            "# TYPE workloadmap_controller_writes_total counter",
        ]
        for (verb, kind), count in sorted(self.writes.items()):
            lines.append(f'workloadmap_controller_writes_total{{verb="{verb}",kind="{kind}"}} {count}')
        lines += [
            "# HELP workloadmap_controller_leader Whether this process holds the leader Lease.",
            "# TYPE workloadmap_controller_leader gauge",
            f"workloadmap_controller_leader {int(self.leader)}",
        ]
        return "\n".join(lines) + "\n"


@dataclass
class Probes:
    """What `/readyz` reports: ready once each named part says so (the informers have listed)."""

    parts: dict[str, bool] = field(default_factory=dict)

    def expect(self, name: str) -> None:
        self.parts.setdefault(name, False)

    def ready(self, name: str) -> None:
        self.parts[name] = True

    def not_ready(self) -> list[str]:
        return sorted(name for name, ok in self.parts.items() if not ok)


Route = Callable[[], tuple[int, str, str]]


async def serve(host: str, port: int, routes: dict[str, Route]) -> asyncio.Server:
    """Start answering GETs of `routes` (path -> (status, content type, body)); 404 for any other path."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
            method, _, rest = request.decode("latin-1").partition(" ")
            path = rest.partition(" ")[0].partition("?")[0]
            route = routes.get(path)
            if method not in ("GET", "HEAD"):
                status, ctype, body = 405, "text/plain", "method not allowed\n"
            elif route is None:
                status, ctype, body = 404, "text/plain", "not found\n"
            else:
                status, ctype, body = route()
            data = body.encode()
            reason = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}.get(
                status, "Service Unavailable"
            )
            head = (
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len(data)}\r\n"
                "Connection: close\r\n\r\n"
            )
            writer.write(head.encode() + (b"" if method == "HEAD" else data))
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(answer, host, port)
