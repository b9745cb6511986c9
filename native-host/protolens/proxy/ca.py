"""The per-install ProtoLens CA for the protocol-translating proxy (adapter: files).

Kept under ``$XDG_DATA_HOME/protolens/proxy/`` (directory 0700, private keys 0600). It is never
added to any system or browser trust store: lab profiles alone trust it, by pinning the shared
leaf key's SPKI with ``--ignore-certificate-errors-spki-list`` (docs/ARCHITECTURE.md: pinning
the leaf key's SPKI worked with Chromium 156). Each intercepted host gets its own leaf naming
only that host (no cross-host coalescing), all signed by the CA and all on one leaf key.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from protolens.testbed.cert import spki_hash

CA_NAME = "ProtoLens lab proxy CA (lab profiles only)"


@dataclass(frozen=True)
class ProxyCA:
    directory: Path
    ca_cert: Path
    ca_key: Path
    leaf_key: Path
    spki: str
    """base64(sha256(SPKI)) of the shared leaf key: what lab profiles pin."""


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, 0o600)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _key_spki(key: ec.EllipticCurvePrivateKey) -> str:
    # a throwaway self-signed wrapper so the testbed's spki_hash applies to a bare key
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "spki")])
    now = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    return spki_hash(cert)


def ensure_ca(directory: Path, now: datetime.datetime) -> ProxyCA:
    """Create the CA and the shared leaf key once; reuse them while the CA is valid."""
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    ca_p, ca_key_p, leaf_key_p = directory / "ca.pem", directory / "ca-key.pem", \
        directory / "leaf-key.pem"
    if ca_p.exists() and ca_key_p.exists() and leaf_key_p.exists():
        ca = x509.load_pem_x509_certificate(ca_p.read_bytes())
        if ca.not_valid_after_utc > now + datetime.timedelta(days=30):
            key = serialization.load_pem_private_key(leaf_key_p.read_bytes(), None)
            assert isinstance(key, ec.EllipticCurvePrivateKey)
            return ProxyCA(directory, ca_p, ca_key_p, leaf_key_p, _key_spki(key))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_NAME)])
    start = now - datetime.timedelta(days=1)
    ca = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=3650))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False,
                                       False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    _write_private(ca_key_p, _pem_key(ca_key))
    _write_private(leaf_key_p, _pem_key(leaf_key))
    ca_p.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return ProxyCA(directory, ca_p, ca_key_p, leaf_key_p, _key_spki(leaf_key))


def issue_leaf(ca: ProxyCA, host: str, now: datetime.datetime) -> bytes:
    """PEM chain (leaf + CA) for ``host`` on the shared leaf key."""
    ca_cert = x509.load_pem_x509_certificate(ca.ca_cert.read_bytes())
    ca_key = serialization.load_pem_private_key(ca.ca_key.read_bytes(), None)
    leaf_key = serialization.load_pem_private_key(ca.leaf_key.read_bytes(), None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    assert isinstance(leaf_key, ec.EllipticCurvePrivateKey)
    start = now - datetime.timedelta(days=1)
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
            .issuer_name(ca_cert.subject).public_key(leaf_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    return leaf.public_bytes(pem) + ca_cert.public_bytes(pem)
