"""The controller process: one asyncio loop running the probe and metrics servers, leader election, and, while
this process leads, the Karta operator and the pod grouper. SIGTERM and SIGINT shut it down gracefully: the
controllers stop, the Lease is released, the servers close.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import Awaitable
from pathlib import Path
from urllib.parse import urlsplit

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.kubeconfig import ConnectionSettings, load_context
from workload_map.controller.certs import ensure_certificates, read_certificates
from workload_map.controller.dashboard import run_dashboard, start_dashboard
from workload_map.controller.grouper import PodGrouper
from workload_map.controller.health import Metrics, Probes, parse_bind_address, serve
from workload_map.controller.karta_operator import KartaOperator
from workload_map.controller.leader import LeaderElector
from workload_map.controller.options import ControllerOptions
from workload_map.controller.pod_admission import PodAdmission
from workload_map.controller.webhook import register_configurations, serve_webhooks
from workload_map.controller.writer import Writer

__all__ = ["run"]

log = logging.getLogger("workload_map.controller")
COMPONENT = "workload-map-controller"


def _identity(options: ControllerOptions) -> str:
    return options.identity or f"{socket.gethostname()}_{os.getpid()}"


async def run(options: ControllerOptions, *, stop: asyncio.Event | None = None) -> int:
    """Run until `stop` is set (or a signal arrives); 0 on a clean stop, 1 when leadership was lost."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stop.set)
    context = load_context(
        ConnectionSettings(
            kubeconfig=options.kubeconfig,
            context=options.context,
            impersonate=options.impersonate,
            impersonate_groups=options.impersonate_groups,
        )
    )
    metrics, probes = Metrics(), Probes()
    servers: list[asyncio.Server] = []
    async with AsyncApiClient(context, user_agent=COMPONENT) as client:
        probe_address = parse_bind_address(options.health_probe_bind_address)
        if probe_address is not None:

            def readyz() -> tuple[int, str, str]:
                waiting = probes.not_ready()
                if waiting:
                    return 503, "text/plain", "not ready: " + ", ".join(waiting) + "\n"
                return 200, "text/plain", "ok\n"

            servers.append(
                await serve(*probe_address, {"/healthz": lambda: (200, "text/plain", "ok\n"), "/readyz": readyz})
            )
            log.info("health probes on %s", options.health_probe_bind_address)
        metrics_address = parse_bind_address(options.metrics_bind_address)
        if metrics_address is not None:
            servers.append(
                await serve(*metrics_address, {"/metrics": lambda: (200, "text/plain; version=0.0.4", metrics.text())})
            )
            log.info("metrics on %s", options.metrics_bind_address)
        if options.enable_webhook:
            servers.append(await _start_webhooks(client, options, metrics))
        dashboard = await start_dashboard(client, options)
        writer = Writer(client, metrics, dry_run=options.dry_run, component=COMPONENT)
        elector: LeaderElector | None = None
        tasks: list[asyncio.Task[None]] = []
        # every replica serves the dashboard (read-only); it ends with the process, not with leadership
        serving = asyncio.create_task(run_dashboard(dashboard, stop)) if dashboard is not None else None
        if options.leader_elect:
            elector = LeaderElector(
                client,
                namespace=options.leader_election_namespace,
                name=options.leader_election_id,
                identity=_identity(options),
                lease_duration=options.lease_duration,
                renew_deadline=options.renew_deadline,
                retry_period=options.retry_period,
            )
            tasks.append(asyncio.create_task(elector.run()))
        code = 0
        try:
            if elector is not None:
                log.info(
                    "leader election: %s campaigns for Lease %s/%s", elector.identity, elector.namespace, elector.name
                )
                await _first(stop.wait(), elector.leading.wait())
            if not stop.is_set():
                metrics.leader = True
                # readiness waits for the controllers' informers (they register with `probes`); a standby is ready
                if options.karta_operator:
                    tasks.append(asyncio.create_task(KartaOperator(client, writer, metrics, probes).run()))
                if options.pod_grouper:
                    tasks.append(asyncio.create_task(PodGrouper(client, writer, metrics, probes, options).run()))
            waits = [stop.wait()] + ([elector.lost.wait()] if elector is not None else [])
            await _first(*waits, *tasks)
            if elector is not None and elector.lost.is_set():
                code = 1
            for task in tasks:
                if task.done() and not task.cancelled() and task.exception() is not None:
                    log.error("controller stopped: %s", task.exception())
                    code = 1
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if serving is not None:
                serving.cancel()
                await asyncio.gather(serving, return_exceptions=True)
            if elector is not None:
                await elector.release()
            metrics.leader = False
            for server in servers:
                server.close()
                await server.wait_closed()
    log.info("stopped")
    return code


async def _start_webhooks(client: AsyncApiClient, options: ControllerOptions, metrics: Metrics) -> asyncio.Server:
    directory = Path(options.webhook_cert_dir)
    if options.webhook_cert_mode == "manual":
        certificate = read_certificates(directory)
    else:
        host = urlsplit(options.webhook_url).hostname if options.webhook_url else None
        hosts = [host] if host else [socket.gethostname()]
        certificate = await asyncio.to_thread(ensure_certificates, directory, hosts)
    pods = PodAdmission(client, options.scheduler, queue=options.queue) if options.pod_grouper else None
    server = await serve_webhooks("0.0.0.0", options.webhook_port, certificate, metrics, pods=pods)
    log.info("webhooks on :%d (certificates in %s, %s)", options.webhook_port, directory, options.webhook_cert_mode)
    if options.webhook_cert_mode == "auto" and options.webhook_url and not options.dry_run:
        await register_configurations(
            client,
            options.webhook_configuration_name,
            options.webhook_url,
            certificate.ca_pem,
            pods_excluded=["kube-system", options.leader_election_namespace] if pods is not None else None,
            namespaces=options.namespaces,
        )
    return server


async def _first(*awaitables: Awaitable[object]) -> None:
    """Wait until the first of `awaitables` (coroutines or tasks) finishes; cancel the coroutines left."""
    futures = [asyncio.ensure_future(a) for a in awaitables]
    try:
        await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future, original in zip(futures, awaitables, strict=True):
            if future is not original:
                future.cancel()
