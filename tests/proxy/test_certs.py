"""The lab's certificates (protolens/certs.py): the testbed's CA and leaf, the lab proxy's CA and
per-host leaves; what is reused, what is made anew, and who signs what."""

from __future__ import annotations

import datetime
import stat
from pathlib import Path

from cryptography import x509

from protolens.certs import ensure_ca, ensure_cert, issue_leaf, spki_hash

NOW = datetime.datetime(2025, 6, 1, tzinfo=datetime.UTC)
HOSTS = ("a.test", "b.test", "a.test")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _names(cert: x509.Certificate) -> list[str]:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return san.get_values_for_type(x509.DNSName)


def test_testbed_leaf_names_every_host_and_chains_to_its_ca(tmp_path: Path) -> None:
    files = ensure_cert(tmp_path / "cert", HOSTS, NOW)
    leaf, ca = x509.load_pem_x509_certificates(files.cert.read_bytes())
    assert x509.load_pem_x509_certificate(files.ca.read_bytes()) == ca
    leaf.verify_directly_issued_by(ca)
    assert _names(leaf) == ["a.test", "b.test"]
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length == 0
    assert files.spki == spki_hash(leaf.public_key())
    assert _mode(files.key) == 0o600
    assert leaf.not_valid_after_utc - NOW == datetime.timedelta(days=396)


def test_testbed_cert_is_reused_only_for_the_same_hosts_while_fresh(tmp_path: Path) -> None:
    first = ensure_cert(tmp_path, HOSTS, NOW)
    assert ensure_cert(tmp_path, ["b.test", "a.test"], NOW + datetime.timedelta(days=300)) == first
    assert ensure_cert(tmp_path, ["a.test"], NOW).spki != first.spki
    again = ensure_cert(tmp_path, HOSTS, NOW)
    assert ensure_cert(tmp_path, HOSTS, NOW + datetime.timedelta(days=370)).spki != again.spki


def test_proxy_ca_is_private_reused_and_renewed_near_its_end(tmp_path: Path) -> None:
    d = tmp_path / "proxy"
    ca = ensure_ca(d, NOW)
    assert _mode(d) == 0o700 and _mode(ca.ca_key) == 0o600 and _mode(ca.leaf_key) == 0o600
    assert ensure_ca(d, NOW + datetime.timedelta(days=3000)) == ca
    assert ensure_ca(d, NOW + datetime.timedelta(days=3630)).spki != ca.spki


def test_proxy_leaves_name_one_host_each_on_the_pinned_key(tmp_path: Path) -> None:
    ca = ensure_ca(tmp_path, NOW)
    issuer = x509.load_pem_x509_certificate(ca.ca_cert.read_bytes())
    for host in ("a.test", "b.test"):
        leaf, chained = x509.load_pem_x509_certificates(issue_leaf(ca, host, NOW))
        assert chained == issuer
        leaf.verify_directly_issued_by(issuer)
        assert _names(leaf) == [host]
        assert spki_hash(leaf.public_key()) == ca.spki  # what lab browsers pin
        assert leaf.not_valid_after_utc - NOW == datetime.timedelta(days=29)
