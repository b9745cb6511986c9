"""Server-side TCP state over time (cwnd, RTT, retransmits, delivery rate) from ``ss -tin`` in
the server namespace, for cwnd timelines like IFIP'18 Fig. 3. ``parse_ss`` is pure and tested on
captured output; ``sample`` runs one shell loop inside the namespace (no process per sample from
Python) and writes JSON lines."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from protolens.testbed.adapter import Testbed

_RATE = re.compile(r"^([\d.]+)([KMG]?)bps$")
_UNITS = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}
_INT_KEYS = ("cwnd", "ssthresh", "mss", "bytes_sent", "bytes_acked", "bytes_retrans",
             "bytes_received", "segs_out", "segs_in", "data_segs_out", "lost", "delivered",
             "unacked", "retrans_total", "notsent", "reordering")
MARK = "@ts "


def _rate(text: str) -> float | None:
    m = _RATE.match(text)
    return float(m.group(1)) * _UNITS[m.group(2)] if m else None


def parse_ss(text: str) -> list[dict[str, Any]]:
    """Parse ``ss -tin`` (with or without header and state column) into one dict per socket."""
    out: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for line in text.splitlines():
        if not line.strip() or line.startswith(("State", "Recv-Q")):
            continue
        if not line[0].isspace():
            parts = line.split()
            if len(parts) < 4:
                continue
            local, peer = parts[-2], parts[-1]
            cur = {"local": local, "peer": peer,
                   "local_port": int(local.rsplit(":", 1)[1]),
                   "peer_port": int(peer.rsplit(":", 1)[1])}
            out.append(cur)
            continue
        if cur is None:
            continue
        toks = line.split()
        i = 0
        while i < len(toks):
            tok = toks[i]
            if tok in ("send", "pacing_rate", "delivery_rate") and i + 1 < len(toks):
                cur[f"{tok}_bps" if tok != "send" else "send_bps"] = _rate(toks[i + 1])
                i += 2
                continue
            if ":" in tok:
                key, val = tok.split(":", 1)
                if key == "rtt" and re.fullmatch(r"[\d.]+/[\d.]+", val):
                    avg, var = val.split("/", 1)
                    cur["rtt_ms"], cur["rttvar_ms"] = float(avg), float(var)
                elif key == "retrans" and re.fullmatch(r"\d+/\d+", val):
                    now_, total = val.split("/", 1)
                    cur["retrans"], cur["retrans_total"] = int(now_), int(total)
                elif key in ("minrtt", "rto") and re.fullmatch(r"[\d.]+", val):
                    cur[f"{key}_ms"] = float(val)
                elif key in _INT_KEYS and val.isdigit():
                    cur[key] = int(val)
            elif i == 0 and tok.isalpha():
                cur["cc"] = tok
            i += 1
    return out


def parse_stream(text: str, server_port: int = 443) -> list[dict[str, Any]]:
    """Split the sampler's output at ``@ts <ns>`` markers; one record per socket and sample."""
    rows: list[dict[str, Any]] = []
    for block in text.split(MARK)[1:]:
        head, _, body = block.partition("\n")
        t_ns = int(head.strip())
        for sock in parse_ss(body):
            if sock["local_port"] == server_port:
                rows.append({"t_ns": t_ns, **sock})
    return rows


def sample(tb: Testbed, duration: float, out: Path, interval: float = 0.01,
           server_port: int = 443) -> int:
    """Sample every ``interval`` s for ``duration`` s; write JSON lines; return the row count."""
    loop = (f'end=$(( $(date +%s%N) + {int(duration * 1e9)} )); '
            f'while [ "$(date +%s%N)" -lt "$end" ]; do echo "{MARK}$(date +%s%N)"; '
            f'ss -tinH state established "( sport = :{server_port} )"; sleep {interval}; done')
    proc = subprocess.run(tb.server_argv(["sh", "-c", loop]), capture_output=True, text=True,
                          timeout=duration + 30)
    rows = parse_stream(proc.stdout, server_port)
    with open(out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return len(rows)

