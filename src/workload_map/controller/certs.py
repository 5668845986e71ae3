"""Serving certificates for the admission webhooks in `--webhook-cert-mode auto`: a self-signed CA and a serving
certificate it signs, for the host names and addresses the API server calls, written to the cert directory as
`ca.crt`, `tls.crt`, `tls.key` (the names controller-runtime and cert-manager use). They are made again at start
when missing, when they do not name the hosts asked for, or within 30 days of expiry (rotation on restart).

Needs the `cryptography` package (`pip install 'workload-map[controller]'`); manual mode (cert-manager, a mounted
Secret) does not.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from workload_map.errors import WorkloadMapError

__all__ = ["CertificateError", "ServingCertificate", "ensure_certificates", "read_certificates"]

_VALIDITY = datetime.timedelta(days=365)
_RENEW_BEFORE = datetime.timedelta(days=30)


class CertificateError(WorkloadMapError):
    """The webhook's certificates cannot be made or read (the message names the file or the package)."""


@dataclass(frozen=True)
class ServingCertificate:
    cert_file: Path
    key_file: Path
    ca_pem: bytes  # what the webhook configurations carry as caBundle (empty: managed by someone else)


def read_certificates(directory: Path) -> ServingCertificate:
    """Manual mode: `tls.crt` and `tls.key` (and, when present, `ca.crt`) as mounted."""
    cert, key, ca = directory / "tls.crt", directory / "tls.key", directory / "ca.crt"
    for path in (cert, key):
        if not path.is_file():
            raise CertificateError(f"--webhook-cert-mode manual: {path} is missing")
    return ServingCertificate(cert, key, ca.read_bytes() if ca.is_file() else b"")


def _fresh(directory: Path, hosts: list[str]) -> ServingCertificate | None:
    from cryptography import x509

    cert_file, key_file, ca_file = directory / "tls.crt", directory / "tls.key", directory / "ca.crt"
    if not (cert_file.is_file() and key_file.is_file() and ca_file.is_file()):
        return None
    try:
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, x509.ExtensionNotFound):
        return None
    present = {str(n) for n in names.get_values_for_type(x509.DNSName)}
    present |= {str(n) for n in names.get_values_for_type(x509.IPAddress)}
    if not set(hosts) <= present:
        return None
    if cert.not_valid_after_utc - datetime.datetime.now(datetime.timezone.utc) < _RENEW_BEFORE:
        return None
    return ServingCertificate(cert_file, key_file, ca_file.read_bytes())


def ensure_certificates(directory: Path, hosts: list[str]) -> ServingCertificate:
    """Auto mode: the certificates in `directory`, made (again) when needed; see the module docstring."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        raise CertificateError(
            "--webhook-cert-mode auto needs the cryptography package: pip install 'workload-map[controller]'"
        ) from None
    found = _fresh(directory, hosts)
    if found is not None:
        return found
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "workload-map-controller webhook CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alt: list[x509.GeneralName] = []
    for host in hosts:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alt.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0] if hosts else "webhook")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        (directory / "tls.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file = directory / "tls.key"
        key_file.touch(mode=0o600)
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    except OSError as exc:
        raise CertificateError(f"cannot write the webhook certificates to {directory}: {exc.strerror}") from None
    return ServingCertificate(directory / "tls.crt", directory / "tls.key", ca.public_bytes(serialization.Encoding.PEM))
