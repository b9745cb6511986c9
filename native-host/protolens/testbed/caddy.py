"""caddy in the server namespace: the Caddyfile (pure) and the static test files served under
/_testbed/ next to the page corpus. caddy 2.6 serves h1, h2 and h3 on 443 (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

STATIC_SIZES = {"100k.bin": 100_000, "333k.bin": 333_000, "1m.bin": 1_000_000,
                "2m.bin": 2_000_000, "5m.bin": 5_000_000, "20k.bin": 20_000, "40k.bin": 40_000,
                "60k.bin": 60_000, "80k.bin": 80_000, "120k.bin": 120_000, "160k.bin": 160_000,
                "320k.bin": 320_000}
"""Files under https://<host>/_testbed/ for transfers in tests and benchmarks (the 20k..320k ones
for the CC fingerprint's grid, CoNEXT'20 Table 1)."""

PLACEHOLDER = """<!doctype html>
<html><head><meta charset="utf-8"><title>ProtoLens testbed</title></head>
<body><h1>ProtoLens testbed</h1><img src="https://{h1}/_testbed/100k.bin" alt="">
<p>served by caddy in the server namespace</p></body></html>
"""


def global_options(protocols: Sequence[str] = ("h1", "h2", "h3")) -> str:
    """caddy's global options block for a local test server: no admin endpoint, TLS from the
    given files only (no ACME, no redirects to https), nothing added to the system's trust
    store, and the protocols served (docs/ARCHITECTURE.md "caddy serving all three
    protocols"). Every caddy ProtoLens or its tests start uses this block."""
    return ("{\n\tadmin off\n\tauto_https disable_redirects\n\tskip_install_trust\n"
            f"\tservers {{\n\t\tprotocols {' '.join(protocols)}\n\t}}\n}}\n")


def caddyfile(hosts: Sequence[str], cert: Path, key: Path, site: Path, static: Path,
              access_log: Path) -> str:
    names = ", ".join(f"{h}:443" for h in hosts)
    return global_options() + f"""
{names} {{
	tls {cert} {key}
	log {{
		output file {access_log} {{
			roll_disabled
		}}
		format json
	}}
	header Cache-Control "no-store"
	handle_path /_testbed/* {{
		root * {static}
		file_server
	}}
	handle {{
		root * {site}
		file_server
	}}
}}
"""


def ensure_static(directory: Path, hosts: Sequence[str]) -> None:
    """Write the placeholder page and incompressible files of exact sizes (once)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "index.html").write_text(PLACEHOLDER.format(h1=hosts[0]), encoding="utf-8")
    rng = random.Random(0)
    for name, size in STATIC_SIZES.items():
        p = directory / name
        if not p.exists() or p.stat().st_size != size:
            p.write_bytes(rng.randbytes(size))
