"""The testbed's TLS identity: a private CA and one leaf naming every test host,
generated once with ``cryptography`` and kept under the data directory (keys mode 0600). Browsers
pin the leaf with --ignore-certificate-errors-spki-list=<spki>; other clients can trust ca.pem."""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class CertFiles:
    cert: Path
    """Leaf followed by the CA (the chain caddy serves)."""
    key: Path
    ca: Path
    spki: str
    """base64(sha256(DER SubjectPublicKeyInfo)) of the leaf."""


def spki_hash(cert: x509.Certificate) -> str:
    der = cert.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def ensure_cert(directory: Path, hosts: Sequence[str], now: datetime.datetime) -> CertFiles:
    """Reuse the stored certificate if it names exactly ``hosts`` and is valid 30 more days."""
    directory.mkdir(parents=True, exist_ok=True)
    cert_p, key_p, ca_p = directory / "cert.pem", directory / "key.pem", directory / "ca.pem"
    if cert_p.exists() and key_p.exists() and ca_p.exists():
        leaf = x509.load_pem_x509_certificates(cert_p.read_bytes())[0]
        names = set(leaf.extensions.get_extension_for_class(
            x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName))
        if set(hosts) == names and leaf.not_valid_after_utc > now + datetime.timedelta(days=30):
            return CertFiles(cert_p, key_p, ca_p, spki_hash(leaf))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ProtoLens testbed CA")])
    start = now - datetime.timedelta(days=1)
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=3650))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                         critical=True)
          .sign(ca_key, hashes.SHA256()))
    # Explicit names only: a "*.test" wildcard is rejected by strict clients (service_identity:
    # too few labels) and Chromium pins the SPKI anyway.
    sans = [x509.DNSName(h) for h in dict.fromkeys(hosts)]
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=397))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    _write_private(key_p, key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                            serialization.NoEncryption()))
    cert_p.write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    ca_p.write_bytes(ca.public_bytes(pem))
    return CertFiles(cert_p, key_p, ca_p, spki_hash(leaf))


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, 0o600)
