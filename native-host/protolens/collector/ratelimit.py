"""Per-token upload rate limit (pure): a token bucket per key, time passed in.

A bucket holds at most ``burst`` uploads and refills at ``per_minute / 60`` per second; an upload
takes one. A refused upload gets HTTP 429 (RFC 6585 section 4) with ``Retry-After``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class RateLimiter:
    """Token buckets by key (the token's hash); not thread-safe (the server calls it from its
    event loop only)."""

    per_minute: float
    burst: int
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)
    """key -> (tokens left, time of the last update in seconds)."""

    def _tokens(self, key: str, now_s: float) -> float:
        tokens, last = self._buckets.get(key, (float(self.burst), now_s))
        return min(float(self.burst), tokens + max(0.0, now_s - last) * self.per_minute / 60.0)

    def wait(self, key: str, now_s: float) -> float:
        """Seconds until ``key`` may take one (0.0: now), without taking it."""
        rate = self.per_minute / 60.0
        tokens = self._tokens(key, now_s)
        if tokens >= 1.0:
            return 0.0
        return math.inf if rate <= 0 else (1.0 - tokens) / rate

    def prune(self, now_s: float, keep: int = 10_000) -> None:
        """Past ``keep`` keys, forget those whose bucket has refilled (they hold no state)."""
        if len(self._buckets) > keep:
            for key in [k for k in self._buckets if self._tokens(k, now_s) >= self.burst]:
                del self._buckets[key]

    def take(self, key: str, now_s: float) -> float:
        """Take one upload for ``key`` at ``now_s``: 0.0 if allowed, else the seconds to wait."""
        rate = self.per_minute / 60.0
        tokens, last = self._buckets.get(key, (float(self.burst), now_s))
        tokens = min(float(self.burst), tokens + max(0.0, now_s - last) * rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now_s)
            return 0.0
        self._buckets[key] = (tokens, now_s)
        return math.inf if rate <= 0 else (1.0 - tokens) / rate
