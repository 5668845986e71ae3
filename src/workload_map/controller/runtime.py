"""The controller process: one asyncio loop running the probe and metrics servers, leader election, and, while
this process leads, the Karta operator and the pod grouper. SIGTERM and SIGINT shut it down gracefully: the
controllers stop, the Lease is released, the servers close.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
import signal
import socket
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from workload_map.cluster.aio import AsyncApiClient
from workload_map.cluster.kubeconfig import ConnectionSettings, load_context
from workload_map.controller.certs import Rotated, ensure_certificates, read_certificates, signature
from workload_map.controller.grouper import PodGrouper
from workload_map.controller.health import Metrics, Probes, parse_bind_address, serve
from workload_map.controller.karta_feed import KartaFeed
from workload_map.controller.karta_operator import KartaOperator
from workload_map.controller.leader import LeaderElector
from workload_map.controller.options import ControllerOptions, OptionsError
from workload_map.controller.pod_admission import PodAdmission
from workload_map.controller.webhook import (
    Registration,
    ServiceReference,
    keep_certificates,
    register_configurations,
    serve_webhooks,
    serving_context,
)
from workload_map.controller.writer import Writer

if TYPE_CHECKING:
    from workload_map.serve.run import Server

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
    background: list[asyncio.Task[None]] = []  # every replica's, for the process's life: not leader work
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
        kartas = KartaFeed(client)  # one Karta watch for the webhook, the operator, the grouper and the dashboard
        if options.enable_webhook:
            webhooks, keeper = await _start_webhooks(client, options, metrics, kartas)
            servers.append(webhooks)
            background.append(asyncio.create_task(keeper))
        dashboard = await _start_dashboard(client, options)
        writer = Writer(client, metrics, dry_run=options.dry_run, component=COMPONENT)
        elector: LeaderElector | None = None
        tasks: list[asyncio.Task[None]] = []
        # every replica serves the dashboard (read-only); it ends with the process, not with leadership
        if dashboard is not None:
            from workload_map.controller.dashboard import run_dashboard

            background.append(asyncio.create_task(run_dashboard(dashboard, stop, kartas)))
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
                    tasks.append(
                        asyncio.create_task(KartaOperator(client, writer, metrics, probes, kartas=kartas).run())
                    )
                if options.pod_grouper:
                    tasks.append(
                        asyncio.create_task(PodGrouper(client, writer, metrics, probes, options, kartas=kartas).run())
                    )
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
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            await kartas.aclose()
            if elector is not None:
                await elector.release()
            metrics.leader = False
            for server in servers:
                server.close()
                await server.wait_closed()
    log.info("stopped")
    return code


async def _start_dashboard(client: AsyncApiClient, options: ControllerOptions) -> Server | None:
    # imported only when asked for: the serve extra (aiohttp, prometheus-client) is not the controller's
    if parse_bind_address(options.dashboard_bind_address) is None:
        return None
    try:
        from workload_map.controller.dashboard import start_dashboard
    except ImportError as exc:
        raise OptionsError(
            f"--dashboard-bind-address needs the serve extra ({exc.name} is not installed): "
            "pip install 'workload-map[controller,serve]'"
        ) from None
    return await start_dashboard(client, options)


def _registration(options: ControllerOptions, pods: bool) -> Registration | None:
    """What auto mode writes: the configurations for `--webhook-url` or the in-cluster Service (None: neither)."""
    if options.dry_run or options.webhook_cert_mode != "auto":
        return None
    service = None
    if options.webhook_service_name:
        namespace = options.webhook_service_namespace or options.leader_election_namespace
        service = ServiceReference(namespace, options.webhook_service_name, options.webhook_service_port)
    elif not options.webhook_url:
        return None
    return Registration(
        options.webhook_configuration_name,
        url=options.webhook_url,
        service=service,
        pods_excluded=("kube-system", options.leader_election_namespace) if pods else None,
        namespaces=options.namespaces,
    )


def _hosts(options: ControllerOptions) -> list[str]:
    """The names the serving certificate is made for: the Service's, the URL's host, else this host's name."""
    if options.webhook_service_name:
        namespace = options.webhook_service_namespace or options.leader_election_namespace
        return ServiceReference(namespace, options.webhook_service_name).hosts()
    host = urlsplit(options.webhook_url).hostname if options.webhook_url else None
    return [host] if host else [socket.gethostname()]


async def _start_webhooks(
    client: AsyncApiClient, options: ControllerOptions, metrics: Metrics, kartas: KartaFeed
) -> tuple[asyncio.Server, Coroutine[Any, Any, None]]:
    """The HTTPS server, listening, and the coroutine that keeps its certificates (and caBundle) current."""
    directory = Path(options.webhook_cert_dir)
    validity = datetime.timedelta(seconds=options.webhook_cert_validity)
    hosts = _hosts(options)
    check: Callable[[], Awaitable[Rotated | None]]
    if options.webhook_cert_mode == "manual":
        certificate = read_certificates(directory)
        seen = signature(directory)

        async def check() -> Rotated | None:
            nonlocal seen
            now = signature(directory)
            if now == seen:
                return None
            seen = now
            return Rotated(read_certificates(directory), bundle_changed=False, serving_changed=True)

    else:
        certificate = (await asyncio.to_thread(ensure_certificates, directory, hosts, validity=validity)).certificate

        async def check() -> Rotated | None:
            return await asyncio.to_thread(ensure_certificates, directory, hosts, validity=validity)

    pods = None
    if options.pod_grouper:
        pods = PodAdmission(client, options.scheduler, queue=options.queue, kartas=kartas)
    context = serving_context(certificate)
    server = await serve_webhooks("0.0.0.0", options.webhook_port, context, metrics, pods=pods)
    log.info("webhooks on :%d (certificates in %s, %s)", options.webhook_port, directory, options.webhook_cert_mode)
    registration = _registration(options, pods is not None)
    if registration is not None:
        await register_configurations(client, registration, certificate.ca_pem)
    keeper = keep_certificates(
        context,
        check=check,
        registration=registration,
        client=client,
        interval=options.webhook_cert_check_interval,
    )
    return server, keeper


async def _first(*awaitables: Awaitable[object]) -> None:
    """Wait until the first of `awaitables` (coroutines or tasks) finishes; cancel the coroutines left."""
    futures = [asyncio.ensure_future(a) for a in awaitables]
    try:
        await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future, original in zip(futures, awaitables, strict=True):
            if future is not original:
                future.cancel()
