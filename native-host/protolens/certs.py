"""The lab's TLS certificates, made with ``cryptography`` in one place (adapter: files; the
builders take ``now`` and return certificates).

- The testbed (``testbed/adapter.py``): a private CA and one leaf naming every test host, which
  caddy serves (``ensure_cert``). Other clients can trust its ``ca.pem``.
- The protocol-translating lab proxy (``proxy/``): a per-install CA and one leaf per intercepted
  host, naming only that host (no cross-host coalescing), all on one shared leaf key
  (``ensure_ca``, ``issue_leaf``), kept under ``$XDG_DATA_HOME/protolens/proxy/`` (directory 0700).

Keys are EC P-256; private keys are written mode 0600. Neither CA is ever added to a system or
browser trust store: lab browsers pin the leaf key's SPKI with
``--ignore-certificate-errors-spki-list`` (docs/ARCHITECTURE.md: pinning the leaf key's SPKI worked
with Chromium 156, for TCP and QUIC).
"""

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
from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

TESTBED_CA_NAME = "ProtoLens testbed CA"
PROXY_CA_NAME = "ProtoLens lab proxy CA (lab profiles only)"
CA_DAYS = 3650
TESTBED_LEAF_DAYS = 397
"""The longest validity the CA/Browser Forum's Baseline Requirements, 6.3.2, recommend."""
PROXY_LEAF_DAYS = 30
RENEW_DAYS = 30
"""Stored certificates are made anew once they have fewer days left than this."""

Key = ec.EllipticCurvePrivateKey


def spki_hash(public_key: PublicKeyTypes) -> str:
    """base64(sha256(DER SubjectPublicKeyInfo)): what ``--ignore-certificate-errors-spki-list``
    takes."""
    der = public_key.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def new_key() -> Key:
    return ec.generate_private_key(ec.SECP256R1())


def make_ca(common_name: str, key: Key, now: datetime.datetime) -> x509.Certificate:
    """A self-signed CA that signs leaves only (path length 0), valid from a day before ``now``."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    start = now - datetime.timedelta(days=1)
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False,
                                         False), critical=True)
            .sign(key, hashes.SHA256()))


def make_leaf(hosts: Sequence[str], key: Key, ca: x509.Certificate, ca_key: Key,
              now: datetime.datetime, days: int) -> x509.Certificate:
    """A server certificate naming exactly ``hosts`` (the first is its common name). Explicit
    names only: a ``*.test`` wildcard is refused by strict clients (service_identity: too few
    labels), and Chromium pins the SPKI anyway."""
    start = now - datetime.timedelta(days=1)
    sans = [x509.DNSName(h) for h in dict.fromkeys(hosts)]
    return (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
            .issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=days))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))


def _pem(*certs: x509.Certificate) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def _write_key(path: Path, key: Key) -> None:
    data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, 0o600)


def _read_key(path: Path) -> Key:
    key = serialization.load_pem_private_key(path.read_bytes(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return key


def _fresh(cert: x509.Certificate, now: datetime.datetime) -> bool:
    return cert.not_valid_after_utc > now + datetime.timedelta(days=RENEW_DAYS)


# ---- the testbed ---------------------------------------------------------------------------

@dataclass(frozen=True)
class CertFiles:
    cert: Path
    """Leaf followed by the CA (the chain caddy serves)."""
    key: Path
    ca: Path
    spki: str
    """``spki_hash`` of the leaf."""


def ensure_cert(directory: Path, hosts: Sequence[str], now: datetime.datetime) -> CertFiles:
    """Reuse the stored certificate if it names exactly ``hosts`` and is still fresh; else make a
    new CA (its key is not kept) and leaf."""
    directory.mkdir(parents=True, exist_ok=True)
    cert_p, key_p, ca_p = directory / "cert.pem", directory / "key.pem", directory / "ca.pem"
    if cert_p.exists() and key_p.exists() and ca_p.exists():
        leaf = x509.load_pem_x509_certificates(cert_p.read_bytes())[0]
        names = set(leaf.extensions.get_extension_for_class(
            x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName))
        if set(hosts) == names and _fresh(leaf, now):
            return CertFiles(cert_p, key_p, ca_p, spki_hash(leaf.public_key()))
    ca_key, key = new_key(), new_key()
    ca = make_ca(TESTBED_CA_NAME, ca_key, now)
    leaf = make_leaf(hosts, key, ca, ca_key, now, TESTBED_LEAF_DAYS)
    _write_key(key_p, key)
    cert_p.write_bytes(_pem(leaf, ca))
    ca_p.write_bytes(_pem(ca))
    return CertFiles(cert_p, key_p, ca_p, spki_hash(key.public_key()))


# ---- the lab proxy -------------------------------------------------------------------------

@dataclass(frozen=True)
class ProxyCA:
    directory: Path
    ca_cert: Path
    ca_key: Path
    leaf_key: Path
    spki: str
    """``spki_hash`` of the shared leaf key: what lab profiles pin."""


def ensure_ca(directory: Path, now: datetime.datetime) -> ProxyCA:
    """Make the CA and the shared leaf key once; reuse them while the CA is fresh."""
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    ca_p, ca_key_p, leaf_key_p = (directory / "ca.pem", directory / "ca-key.pem",
                                  directory / "leaf-key.pem")
    if (ca_p.exists() and ca_key_p.exists() and leaf_key_p.exists()
            and _fresh(x509.load_pem_x509_certificate(ca_p.read_bytes()), now)):
        spki = spki_hash(_read_key(leaf_key_p).public_key())
        return ProxyCA(directory, ca_p, ca_key_p, leaf_key_p, spki)
    ca_key, leaf_key = new_key(), new_key()
    _write_key(ca_key_p, ca_key)
    _write_key(leaf_key_p, leaf_key)
    ca_p.write_bytes(_pem(make_ca(PROXY_CA_NAME, ca_key, now)))
    return ProxyCA(directory, ca_p, ca_key_p, leaf_key_p, spki_hash(leaf_key.public_key()))


def issue_leaf(ca: ProxyCA, host: str, now: datetime.datetime) -> bytes:
    """PEM chain (leaf + CA) for ``host`` on the shared leaf key."""
    ca_cert = x509.load_pem_x509_certificate(ca.ca_cert.read_bytes())
    leaf = make_leaf([host], _read_key(ca.leaf_key), ca_cert, _read_key(ca.ca_key), now,
                     PROXY_LEAF_DAYS)
    return _pem(leaf, ca_cert)
