"""Mahimahi packet-delivery traces (Netravali et al., "Mahimahi: Accurate Record-and-Replay for
HTTP", USENIX ATC'15, LinkShell): one line per delivery opportunity, an integer number of ms
from the start, nondecreasing (repeated lines give several opportunities in the same ms); the
trace loops with its last line as the period. Each opportunity carries one 1500-byte packet.

Pure: text in, a ``Trace`` out, or a ``TraceError`` whose message is one line naming the file
and the line. native-host/shaper/trace.c plays it on the shaper's clock.
"""

from __future__ import annotations

from protolens.shaper.records import Trace

MAX_MS = 2**32 - 1
"""The C model keeps opportunities as uint32 ms (about 49 days)."""
MAX_OPPORTUNITIES = 50_000_000


class TraceError(ValueError):
    """A trace that cannot be played; the message is one line."""


def parse_mahimahi(text: str, where: str = "<trace>") -> Trace:
    out: list[int] = []
    prev = 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if not line.isascii() or not line.isdigit():
            raise TraceError(f"{where}:{lineno}: expected a whole number of ms, got "
                             f"{_show(line)}")
        ms = int(line)
        if ms > MAX_MS:
            raise TraceError(f"{where}:{lineno}: {ms} ms is beyond the longest trace "
                             f"({MAX_MS} ms)")
        if ms < prev:
            raise TraceError(f"{where}:{lineno}: {ms} ms comes before the previous line's "
                             f"{prev} ms (a trace never goes back in time)")
        if len(out) == MAX_OPPORTUNITIES:
            raise TraceError(f"{where}: more than {MAX_OPPORTUNITIES} delivery opportunities")
        out.append(ms)
        prev = ms
    if not out:
        raise TraceError(f"{where}: no delivery opportunities (one whole number of ms a line)")
    if out[-1] == 0:
        raise TraceError(f"{where}: the trace lasts 0 ms (its last line is the loop period and "
                         "must be > 0)")
    return Trace(tuple(out), where)


def _show(line: str) -> str:
    return repr(line if len(line) <= 40 else line[:37] + "...")
