"""Failed authentication is rate-limited (pure, time passed in): per source and overall, each a
token bucket (``ratelimit.py``) that only failures drain. A source over its budget, or everyone
while the overall budget is spent, is answered 429 before its token is looked up, so guessing
tokens costs the collector neither a catalog query nor a log line. One log line marks the start
of each burst of refusals and one its end, with the count (as fail2ban reports bans, not tries).

The source is the peer address, kept in memory for the bucket only: never logged, never stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protolens.collector.ratelimit import RateLimiter

EVERYONE = ""


@dataclass
class AuthGuard:
    per_source: RateLimiter = field(default_factory=lambda: RateLimiter(10.0, 20))
    overall: RateLimiter = field(default_factory=lambda: RateLimiter(600.0, 600))
    _bursts: dict[str, int] = field(default_factory=dict)
    """Key (a source, or ``EVERYONE``) -> tries refused in its current burst."""

    def check(self, source: str, now_s: float) -> tuple[float, str | None]:
        """Before a token is looked up: (seconds to wait, 0.0 to go on; a log line or None)."""
        for key, bucket in ((EVERYONE, self.overall), (source, self.per_source)):
            wait = bucket.wait(EVERYONE if key == EVERYONE else key, now_s)
            if wait > 0:
                return wait, self._refused(key)
        return 0.0, self._ended(source) or self._ended(EVERYONE)

    def failed(self, source: str, now_s: float) -> None:
        """A try whose token was missing, unknown, revoked or whose bundle tag did not verify."""
        self.per_source.take(source, now_s)
        self.overall.take(EVERYONE, now_s)
        self.per_source.prune(now_s)

    def _refused(self, key: str) -> str | None:
        first = key not in self._bursts
        if first and len(self._bursts) > 10_000:
            self._bursts.clear()
        self._bursts[key] = self._bursts.get(key, 0) + 1
        if not first:
            return None
        who = "all sources together" if key == EVERYONE else "one source"
        return f"failed authentication over the limit from {who}: refusing (429) until it refills"

    def _ended(self, key: str) -> str | None:
        count = self._bursts.pop(key, None)
        if count is None:
            return None
        who = "all sources together" if key == EVERYONE else "one source"
        return f"failed authentication burst from {who} over: {count} tries refused"
