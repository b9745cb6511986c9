"""The real-web site's backend (scripts/devkit/realweb_backend.py): its WebSocket handshake and
frames by RFC 6455, its never-finished object a PNG that decodes."""

from __future__ import annotations

import io

from PIL import Image

from scripts.devkit.realweb_backend import NEVER, png, ws_accept, ws_text_frame


def test_websocket_accept_is_rfc_6455s_example() -> None:
    # RFC 6455 1.3: this key must be answered with this Sec-WebSocket-Accept
    assert ws_accept("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


def test_text_frame_is_final_unmasked_and_sized() -> None:
    assert ws_text_frame("tick 1") == b"\x81\x06tick 1"  # FIN + text opcode, no mask bit


def test_the_never_finished_object_is_a_png_that_decodes() -> None:
    assert Image.open(io.BytesIO(NEVER)).size == (128, 128)
    assert len(png(8, 2)) < len(NEVER) and len(NEVER) > 4096  # only its start is ever sent
