"""Test helper: fetch one URL over HTTP/3 with aioquic (Debian's curl has no --http3).

    h3get.py HOST PATH CAFILE   -> prints {"status": "200", "bytes": N}
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from typing import Any

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import QuicEvent


class H3Client(QuicConnectionProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.done: asyncio.Future[None] | None = None
        self.status = ""
        self.body = bytearray()

    def quic_event_received(self, event: QuicEvent) -> None:
        for e in self.h3.handle_event(event):
            if isinstance(e, HeadersReceived):
                self.status = dict(e.headers).get(b":status", b"").decode()
            elif isinstance(e, DataReceived):
                self.body += e.data
            if getattr(e, "stream_ended", False) and self.done and not self.done.done():
                self.done.set_result(None)

    async def get(self, host: str, path: str) -> None:
        sid = self._quic.get_next_available_stream_id()
        self.h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"),
                                   (b":authority", host.encode()), (b":path", path.encode())],
                             end_stream=True)
        self.done = asyncio.get_running_loop().create_future()
        self.transmit()
        await asyncio.wait_for(self.done, 30)


async def main(host: str, path: str, cafile: str) -> None:
    cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name=host)
    cfg.load_verify_locations(cafile)
    ip = socket.gethostbyname(host)
    async with connect(ip, 443, configuration=cfg, create_protocol=H3Client) as client:
        assert isinstance(client, H3Client)
        await client.get(host, path)
        print(json.dumps({"status": client.status, "bytes": len(client.body)}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
