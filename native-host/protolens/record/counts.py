"""The record's counts cannot exceed its arrays (pure): a browser connection carries at most the
record's requests, and a host used at most the record's browser connections. The extension
derives both from the requests (``src/cdp/summarize.ts``, docs/RECORD.md), so a record claiming
a million requests on a connection when it holds five requests is refused, not stored as sent.
Upstream connections (the proxy's report) count the proxy's own traffic and are not checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from protolens.record.reader import RecordError


def check_counts(requests: Sequence[Any], connections: Sequence[Any],
                 hosts: Sequence[Any]) -> None:
    """Raise ``RecordError`` naming the first count that the arrays contradict."""
    browser = sum(not c.upstream for c in connections)
    for i, c in enumerate(connections):
        if not c.upstream and c.requests > len(requests):
            raise RecordError(f"connections[{i}].requests: {c.requests}, more than the "
                              f"{len(requests)} requests of the record")
    for i, h in enumerate(hosts):
        if h.connections > browser:
            raise RecordError(f"hosts[{i}].connections: {h.connections}, more than the "
                              f"{browser} browser connections of the record")
