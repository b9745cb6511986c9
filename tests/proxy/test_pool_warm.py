"""``Pool.warm`` (proxy/upstream.py): the upstream connection opens when the browser's CONNECT is
accepted, before any request, and only the one the next stream will use. The upstream classes
are replaced by a fake that records ``open``/``close``: no sockets, only the pool's scheduling
is under test here (tests/proxy/test_proxy_testbed.py covers real connections)."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import pytest

from protolens.proxy import upstream
from protolens.proxy.core import ConnStats
from protolens.proxy.upstream import Pool, Target


class FakeUpstream:
    events: list[tuple[str, int]] = []
    gate: asyncio.Event | None = None

    def __init__(self, target: Target, stats: ConnStats) -> None:
        self.stats = stats

    async def open(self) -> None:
        self.events.append(("open", self.stats.id))
        if self.gate is not None:
            await self.gate.wait()
        self.events.append(("ready", self.stats.id))

    def close(self) -> None:
        self.events.append(("close", self.stats.id))


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Pool:
    FakeUpstream.events, FakeUpstream.gate = [], None
    monkeypatch.setattr(upstream, "H2Upstream", FakeUpstream)
    ids = iter(range(1, 100))
    target = Target("a.test", "198.18.2.2", 443, ssl.create_default_context())
    return Pool(target, "h2", 2, lambda host, fam: ConnStats(next(ids), host, fam))


def test_warm_opens_the_next_connection_once_before_any_request(pool: Pool) -> None:
    async def main() -> list[Any]:
        pool.warm()
        pool.warm()  # a second CONNECT before the first open finished: still one connection
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        seen = list(FakeUpstream.events)
        first = await pool._slot(pool.rr.assign())  # the first request takes the warm one
        pool.warm()  # h2-parallel:2's second connection: opened for the next stream
        await asyncio.sleep(0)
        second = await pool._slot(pool.rr.assign())
        return [seen, first.stats.id, second.stats.id, list(FakeUpstream.events)]

    seen, first, second, events = asyncio.run(main())
    assert seen == [("open", 1), ("ready", 1)]
    assert (first, second) == (1, 2)
    assert events == [("open", 1), ("ready", 1), ("open", 2), ("ready", 2)]


def test_close_abandons_a_connection_still_opening(pool: Pool) -> None:
    async def main() -> None:
        FakeUpstream.gate = asyncio.Event()  # open never finishes
        pool.warm()
        await asyncio.sleep(0)
        pool.close()
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert FakeUpstream.events == [("open", 1)]
    assert pool.slots == [None, None] and all(t.done() for t in pool.warming)
