"""The flags of `workload-map-controller` (and `wmap controller`, which hands them here unparsed).

Parsed with argparse, not click: the controller is its own process and its flags follow controller-runtime's
spelling (`--leader-elect=false`, `--metrics-bind-address :8080`). Every boolean flag takes `--flag`,
`--flag=true` and `--flag=false`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

from workload_map.controller.health import parse_bind_address
from workload_map.errors import WorkloadMapError

__all__ = ["SCHEDULERS", "ControllerOptions", "OptionsError", "parse_options"]

SCHEDULERS = ("kai", "volcano", "coscheduling", "workload")

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class OptionsError(WorkloadMapError, ValueError):
    """A flag the controller cannot start with (the message names it)."""


@dataclass(frozen=True)
class ControllerOptions:
    """What the controller was started with (see docs/controller.md, "Flags")."""

    kubeconfig: str | None = None
    context: str | None = None
    impersonate: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    scheduler: str = "kai"
    namespaces: tuple[str, ...] = ()
    namespace_selector: str | None = None
    leader_elect: bool = True
    leader_election_id: str = "workload-map-controller"
    leader_election_namespace: str = "default"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    identity: str | None = None
    dry_run: bool = False
    metrics_bind_address: str = ":8080"
    health_probe_bind_address: str = ":8081"
    dashboard_bind_address: str = "0"
    queue: str | None = None
    karta_operator: bool = True
    pod_grouper: bool = True
    log_level: str = "info"
    enable_webhook: bool = True
    webhook_port: int = 9443
    webhook_cert_dir: str = "/tmp/k8s-webhook-server/serving-certs"
    webhook_cert_mode: str = "auto"
    webhook_url: str | None = None
    webhook_service_name: str | None = None
    webhook_service_namespace: str | None = None  # None: --leader-election-namespace
    webhook_service_port: int = 443
    webhook_cert_validity: float = 365 * 86400.0  # seconds
    webhook_cert_check_interval: float = 60.0
    webhook_configuration_name: str = "workload-map-controller"


def _boolean(text: str) -> bool:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _duration(text: str) -> float:
    """`8760h`, `30m`, `90s`, `365d` or a number of seconds."""
    value = text.strip().lower()
    scale = _UNITS.get(value[-1:]) if value else None
    number = value[:-1] if scale is not None else value
    try:
        seconds = float(number) * (scale or 1.0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a duration such as 8760h, 30m or 90s, got {text!r}") from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive duration, got {text!r}")
    return seconds


def _bool_flag(parser: argparse.ArgumentParser, name: str, default: bool, help: str) -> None:
    # nargs="?" with const=True: `--flag` alone is true, `--flag=false` (or `--flag false`) sets it.
    parser.add_argument(
        name, type=_boolean, nargs="?", const=True, default=default, metavar="true|false", help=f"{help} ({default})"
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise OptionsError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="workload-map-controller",
        description="The Karta operator and pod grouper of Workload Map (docs/controller.md).",
    )
    parser.add_argument("--kubeconfig", metavar="PATH", help="kubeconfig file (default: in-cluster, then ~/.kube)")
    parser.add_argument("--context", help="kubeconfig context")
    parser.add_argument("--as", dest="impersonate", metavar="USER", help="act as this user (impersonation)")
    parser.add_argument("--as-group", dest="impersonate_groups", action="append", default=[], metavar="GROUP")
    parser.add_argument("--scheduler", choices=SCHEDULERS, default="kai", help="whose PodGroups to write (kai)")
    parser.add_argument(
        "--namespaces", default="", metavar="NS[,NS...]", help="group workloads in these namespaces only (all)"
    )
    parser.add_argument(
        "--namespace-selector", metavar="SELECTOR", help="group workloads in namespaces with these labels only"
    )
    _bool_flag(parser, "--leader-elect", True, "run only while holding the leader Lease")
    parser.add_argument("--leader-election-id", default="workload-map-controller", help="the Lease's name")
    parser.add_argument("--leader-election-namespace", default="default", help="the Lease's namespace (default)")
    parser.add_argument("--lease-duration", type=_positive, default=15.0, metavar="SECONDS", help="(15)")
    parser.add_argument("--renew-deadline", type=_positive, default=10.0, metavar="SECONDS", help="(10)")
    parser.add_argument("--retry-period", type=_positive, default=2.0, metavar="SECONDS", help="(2)")
    parser.add_argument("--identity", help="this process's name in the Lease (default: host name and pid)")
    _bool_flag(parser, "--dry-run", False, "log every write instead of sending it")
    parser.add_argument("--metrics-bind-address", default=":8080", metavar="[HOST]:PORT", help="'0' turns it off")
    parser.add_argument("--health-probe-bind-address", default=":8081", metavar="[HOST]:PORT", help="'0' turns it off")
    parser.add_argument(
        "--dashboard-bind-address",
        default="0",
        metavar="[HOST]:PORT",
        help="serve the workloads' metrics, JSON API and dashboard, behind each user's token ('0': off, the default)",
    )
    parser.add_argument("--queue", help="the scheduler queue written on PodGroups (KAI, Volcano)")
    _bool_flag(parser, "--karta-operator", True, "validate Kartas and write their status and labels")
    _bool_flag(parser, "--pod-grouper", True, "keep the scheduler's PodGroups in step with each workload")
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")
    _bool_flag(parser, "--enable-webhook", True, "serve the admission webhooks over HTTPS")
    parser.add_argument("--webhook-port", type=int, default=9443, help="(9443)")
    parser.add_argument("--webhook-cert-dir", default="/tmp/k8s-webhook-server/serving-certs", metavar="DIR")
    parser.add_argument(
        "--webhook-cert-mode", choices=("auto", "manual"), default="auto", help="make the certificates, or read them"
    )
    parser.add_argument(
        "--webhook-url", metavar="URL", help="how the API server reaches the webhooks (auto mode registers them there)"
    )
    parser.add_argument(
        "--webhook-service-name",
        metavar="NAME",
        help="in the cluster: the Service the API server calls the webhooks through (auto mode registers it)",
    )
    parser.add_argument(
        "--webhook-service-namespace", metavar="NS", help="the Service's namespace (--leader-election-namespace)"
    )
    parser.add_argument("--webhook-service-port", type=int, default=443, help="the Service's port (443)")
    parser.add_argument(
        "--webhook-cert-validity",
        type=_duration,
        default=365 * 86400.0,
        metavar="DURATION",
        help="auto mode: how long a serving certificate is valid (8760h); renewed with a third (at most 30 days) left",
    )
    parser.add_argument(
        "--webhook-cert-check-interval",
        type=_duration,
        default=60.0,
        metavar="DURATION",
        help="how often the certificates are checked: renewed in auto mode, read again when changed in manual (60s)",
    )
    parser.add_argument("--webhook-configuration-name", default="workload-map-controller", metavar="NAME")
    return parser


def parse_options(argv: Sequence[str]) -> ControllerOptions:
    """The options of a command line; raises `OptionsError` naming the flag that is wrong."""
    args = build_parser().parse_args(list(argv))
    if args.renew_deadline >= args.lease_duration:
        raise OptionsError("--renew-deadline must be shorter than --lease-duration")
    if args.retry_period >= args.renew_deadline:
        raise OptionsError("--retry-period must be shorter than --renew-deadline")
    if args.webhook_url and not args.webhook_url.startswith("https://"):
        raise OptionsError("--webhook-url must be an https:// URL")
    if args.webhook_url and args.webhook_service_name:
        raise OptionsError("--webhook-url and --webhook-service-name: give one (out of the cluster, or in it)")
    if not 0 < args.webhook_service_port < 65536:
        raise OptionsError(f"--webhook-service-port {args.webhook_service_port}: expected a port number (1-65535)")
    if args.webhook_cert_check_interval * 2 >= min(30 * 86400.0, args.webhook_cert_validity / 3):
        raise OptionsError(
            "--webhook-cert-check-interval must be well under a third of --webhook-cert-validity "
            "(the renewal window: at least two checks fall in it)"
        )
    if not 0 < args.webhook_port < 65536:
        raise OptionsError(f"--webhook-port {args.webhook_port}: expected a port number (1-65535)")
    for flag, address in (
        ("--metrics-bind-address", args.metrics_bind_address),
        ("--health-probe-bind-address", args.health_probe_bind_address),
        ("--dashboard-bind-address", args.dashboard_bind_address),
    ):
        try:
            parse_bind_address(address)
        except ValueError as exc:
            raise OptionsError(f"{flag}: {exc}") from None
    if args.impersonate_groups and not args.impersonate:
        raise OptionsError("--as-group needs --as")
    namespaces = tuple(sorted({part.strip() for part in args.namespaces.split(",") if part.strip()}))
    return ControllerOptions(
        kubeconfig=args.kubeconfig,
        context=args.context,
        impersonate=args.impersonate,
        impersonate_groups=tuple(args.impersonate_groups),
        scheduler=args.scheduler,
        namespaces=namespaces,
        namespace_selector=args.namespace_selector or None,
        leader_elect=args.leader_elect,
        leader_election_id=args.leader_election_id,
        leader_election_namespace=args.leader_election_namespace,
        lease_duration=args.lease_duration,
        renew_deadline=args.renew_deadline,
        retry_period=args.retry_period,
        identity=args.identity,
        dry_run=args.dry_run,
        metrics_bind_address=args.metrics_bind_address,
        health_probe_bind_address=args.health_probe_bind_address,
        dashboard_bind_address=args.dashboard_bind_address,
        queue=args.queue,
        karta_operator=args.karta_operator,
        pod_grouper=args.pod_grouper,
        log_level=args.log_level,
        enable_webhook=args.enable_webhook,
        webhook_port=args.webhook_port,
        webhook_cert_dir=args.webhook_cert_dir,
        webhook_cert_mode=args.webhook_cert_mode,
        webhook_url=args.webhook_url or None,
        webhook_service_name=args.webhook_service_name or None,
        webhook_service_namespace=args.webhook_service_namespace or None,
        webhook_service_port=args.webhook_service_port,
        webhook_cert_validity=args.webhook_cert_validity,
        webhook_cert_check_interval=args.webhook_cert_check_interval,
        webhook_configuration_name=args.webhook_configuration_name,
    )
