"""The ECMP flow hash of IFIP'18 Sec. III-C, H = SA xor DA xor SP xor DP xor PT, path = H mod 2.

Pure. The shaper applies the same hash in C (``sh_ecmp_path`` in native-host/shaper/counters.c);
both are bound to the shared vectors in native-host/shaper/testdata/ecmp_vectors.json, read by
test_inputs.c and by tests/shaper/test_shaper_ecmp.py.
"""

from __future__ import annotations


def ip_int(ip: str) -> int:
    """Dotted IPv4 text to the 32-bit integer the C model uses (host byte order)."""
    a, b, c, d = (int(x) for x in ip.split("."))
    return a << 24 | b << 16 | c << 8 | d


def ecmp_path(cli_ip: str, cli_port: int, srv_ip: str, srv_port: int, proto: int = 6) -> int:
    """The path (0 or 1) a flow takes."""
    return (ip_int(cli_ip) ^ ip_int(srv_ip) ^ cli_port ^ srv_port ^ proto) % 2
