"""Serving certificates for the admission webhooks.

`--webhook-cert-mode auto` (`ensure_certificates`, called at start and then every `--webhook-cert-check-interval`):
a self-signed CA signs a serving certificate for the host names and addresses the API server calls. The files in
the cert directory:

* `tls.crt`, `tls.key`: the serving certificate and its key (the names controller-runtime and cert-manager use);
* `ca.crt`: the CA bundle the webhook configurations carry as `caBundle`: the signing CA, and during a CA
  rotation the next one (or the previous one, until it expires);
* `signer.crt`, `signer.key`: the CA that signs serving certificates now;
* `next.crt`, `next.key`: the CA that will sign next, once it has been published in the bundle.

Rotation, with V the serving certificate's validity (`--webhook-cert-validity`, a year by default) and the renewal
window R = min(30 days, V/3): the serving certificate is signed again when less than R of it is left (or it does
not name the hosts asked for); the CA lives 3V, and when less than V + R of it is left a next CA is made and added
to the bundle. The next CA signs only from a later check on, so the API server has been given a bundle that
trusts it before any certificate it signed is served (the check interval must exceed the time the API server takes
to see a changed webhook configuration, well under a second). An expired CA leaves the bundle.

`--webhook-cert-mode manual` (`read_certificates`): `tls.crt`, `tls.key` (and `ca.crt` when present) as mounted,
read again when they change (`signature`).

Needs the `cryptography` package (`pip install 'workload-map[controller]'`) in auto mode only.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workload_map.errors import WorkloadMapError

if TYPE_CHECKING:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec

__all__ = [
    "DEFAULT_VALIDITY",
    "CertificateError",
    "Rotated",
    "ServingCertificate",
    "ensure_certificates",
    "merge_bundles",
    "read_certificates",
    "renewal_window",
    "signature",
]

DEFAULT_VALIDITY = datetime.timedelta(days=365)
_MAX_RENEW_BEFORE = datetime.timedelta(days=30)
_CA_LIFETIMES = 3  # a CA outlives this many serving certificates
_BACKDATE = datetime.timedelta(minutes=5)  # clocks of the API server and ours may differ a little


class CertificateError(WorkloadMapError):
    """The webhook's certificates cannot be made or read (the message names the file or the package)."""


@dataclass(frozen=True)
class ServingCertificate:
    cert_file: Path
    key_file: Path
    ca_pem: bytes  # what the webhook configurations carry as caBundle (empty: managed by someone else)


@dataclass(frozen=True)
class Rotated:
    """One check in auto mode: the certificate to serve, and what changed since the files were last read."""

    certificate: ServingCertificate
    bundle_changed: bool  # the webhook configurations need the new caBundle
    serving_changed: bool  # the server needs to load tls.crt and tls.key again


def renewal_window(validity: datetime.timedelta) -> datetime.timedelta:
    return min(_MAX_RENEW_BEFORE, validity / 3)


def read_certificates(directory: Path) -> ServingCertificate:
    """Manual mode: `tls.crt` and `tls.key` (and, when present, `ca.crt`) as mounted."""
    cert, key, ca = directory / "tls.crt", directory / "tls.key", directory / "ca.crt"
    for path in (cert, key):
        if not path.is_file():
            raise CertificateError(f"--webhook-cert-mode manual: {path} is missing")
    return ServingCertificate(cert, key, ca.read_bytes() if ca.is_file() else b"")


def signature(directory: Path) -> tuple[tuple[str, int, int], ...]:
    """What changes when a mounted file does (a Secret volume swaps a symlink: the target's times and sizes)."""
    found: list[tuple[str, int, int]] = []
    for name in ("tls.crt", "tls.key", "ca.crt"):
        try:
            status = (directory / name).stat()
        except OSError:
            continue
        found.append((name, status.st_mtime_ns, status.st_size))
    return tuple(found)


# --- auto mode ------------------------------------------------------------------------------------------------


def _crypto() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise CertificateError(
            "--webhook-cert-mode auto needs the cryptography package: pip install 'workload-map[controller]'"
        ) from None


@dataclass(frozen=True)
class _Pair:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey


def _load_pair(directory: Path, name: str) -> _Pair | None:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    cert_file, key_file = directory / f"{name}.crt", directory / f"{name}.key"
    try:
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    return _Pair(cert, key)


def _write_pair(directory: Path, name: str, pair: _Pair) -> None:
    from cryptography.hazmat.primitives import serialization

    key_file = directory / f"{name}.key"
    key_file.touch(mode=0o600)
    key_file.chmod(0o600)
    key_file.write_bytes(
        pair.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    (directory / f"{name}.crt").write_bytes(pair.cert.public_bytes(serialization.Encoding.PEM))


def _new_ca(now: datetime.datetime, lifetime: datetime.timedelta) -> _Pair:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    # a serial in the name: a rotated CA is told from its predecessor by subject too (key identifiers differ)
    serial = x509.random_serial_number()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"workload-map-controller webhook CA {serial:x}"[:64])])
    usage = x509.KeyUsage(
        digital_signature=True,
        key_cert_sign=True,
        crl_sign=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        encipher_only=False,
        decipher_only=False,
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + lifetime)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return _Pair(cert, key)


def _sign_serving(ca: _Pair, hosts: list[str], now: datetime.datetime, validity: datetime.timedelta) -> _Pair:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    alt: list[x509.GeneralName] = []
    for host in hosts:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alt.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, (hosts[0] if hosts else "webhook")[:64])]))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(min(now + validity, ca.cert.not_valid_after_utc))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()),
            critical=False,
        )
        .sign(ca.key, hashes.SHA256())
    )
    return _Pair(cert, key)


def _names(cert: x509.Certificate) -> set[str]:
    from cryptography import x509

    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {str(n) for n in names.get_values_for_type(x509.DNSName)} | {
        str(n) for n in names.get_values_for_type(x509.IPAddress)
    }


def _bundle(directory: Path) -> list[x509.Certificate]:
    from cryptography import x509

    try:
        return list(x509.load_pem_x509_certificates((directory / "ca.crt").read_bytes()))
    except (OSError, ValueError):
        return []


def _pem(certs: list[x509.Certificate]) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return b"".join(cert.public_bytes(serialization.Encoding.PEM) for cert in certs)


def ensure_certificates(
    directory: Path,
    hosts: list[str],
    *,
    validity: datetime.timedelta = DEFAULT_VALIDITY,
    now: datetime.datetime | None = None,
) -> Rotated:
    """Auto mode, one check: make, renew or rotate what the module docstring says is due; write the files."""
    _crypto()
    now = now or datetime.datetime.now(datetime.timezone.utc)
    window = renewal_window(validity)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        before = _pem(_bundle(directory))
        signer = _load_pair(directory, "signer")
        if signer is not None and signer.cert.not_valid_after_utc - now < window:
            signer = None  # too close to its end to sign anything useful: start again
        upcoming = _load_pair(directory, "next")
        serving = _load_pair(directory, "tls")
        serving_changed = False
        if signer is None:
            signer, upcoming, serving = _new_ca(now, validity * _CA_LIFETIMES), None, None
            _write_pair(directory, "signer", signer)
            (directory / "next.crt").unlink(missing_ok=True)
            (directory / "next.key").unlink(missing_ok=True)
        elif upcoming is None and signer.cert.not_valid_after_utc - now < validity + window:
            upcoming = _new_ca(now, validity * _CA_LIFETIMES)
            _write_pair(directory, "next", upcoming)
            upcoming = None  # published now, signs from a later check on
        due = (
            serving is None
            or serving.cert.not_valid_after_utc - now < window
            or not set(hosts) <= _names(serving.cert)
            or serving.cert.issuer != signer.cert.subject
        )
        if due:
            if upcoming is not None:  # published by an earlier check: it signs from now on
                signer = upcoming
                _write_pair(directory, "signer", signer)
                (directory / "next.crt").unlink(missing_ok=True)
                (directory / "next.key").unlink(missing_ok=True)
            serving = _sign_serving(signer, hosts, now, validity)
            _write_pair(directory, "tls", serving)
            serving_changed = True
        # the bundle: every CA still valid that signs or will sign, and the ones before them until they expire
        kept = [c for c in _bundle(directory) if c.not_valid_after_utc > now]
        wanted = [signer.cert]
        pending = _load_pair(directory, "next")
        if pending is not None:
            wanted.append(pending.cert)
        for cert in kept:
            if all(cert.subject != w.subject for w in wanted):
                wanted.append(cert)
        after = _pem(wanted)
        if after != before:
            (directory / "ca.crt").write_bytes(after)
    except OSError as exc:
        raise CertificateError(f"cannot write the webhook certificates to {directory}: {exc.strerror}") from None
    certificate = ServingCertificate(directory / "tls.crt", directory / "tls.key", after)
    return Rotated(certificate, bundle_changed=after != before, serving_changed=serving_changed)


MAX_BUNDLE = 8  # CAs kept in a configuration's caBundle: ours and the other replicas'


def merge_bundles(ours: bytes, theirs: bytes, *, now: datetime.datetime | None = None) -> bytes:
    """The caBundle to write when `theirs` is already there: every CA of `ours`, then those of `theirs` not yet
    expired (another replica's, in auto mode each replica has its own CA and the Service may send the API server
    to any of them), newest first, at most `MAX_BUNDLE`. Text that is not PEM certificates in `theirs` is
    dropped."""
    _crypto()
    from cryptography import x509

    now = now or datetime.datetime.now(datetime.timezone.utc)
    mine = list(x509.load_pem_x509_certificates(ours)) if ours else []
    try:
        found = list(x509.load_pem_x509_certificates(theirs)) if theirs else []
    except ValueError:
        found = []
    subjects = {cert.subject for cert in mine}
    others = sorted(
        (c for c in found if c.subject not in subjects and c.not_valid_after_utc > now),
        key=lambda c: c.not_valid_before_utc,
        reverse=True,
    )
    return _pem([*mine, *others][: max(MAX_BUNDLE, len(mine))])
