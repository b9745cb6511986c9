"""Object bytes of an exact size: images that decode, valid JavaScript, CSS, HTML and fonts.

Pure: every function maps (size, key) to bytes. Content is noise from SHAKE-256 keyed by
``key``, so it does not compress (a compressing server or link cannot shrink a page) and the same
key always gives the same bytes. Each format has a real payload plus padding where the format
allows opaque data: a private ancillary PNG chunk (PNG spec 5.4: lower-case first letter = safe to
ignore), JPEG COM segments (ITU T.81 B.2.4.5), a GIF comment extension (GIF89a section 24), a
private ``zPAD`` table in a TrueType font (OpenType: unknown tables are ignored), comments in
CSS / HTML and a string literal in JavaScript.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import math
import struct
import zlib

from PIL import Image

IMAGE_EXT = {"jpeg": "jpg", "png": "png", "gif": "gif"}
"""All three extensions have three letters, so an index page's length does not depend on formats."""

JPEG_FROM = 2_500
"""Below this a JPEG would be mostly tables (a 1x1 JPEG from Pillow is ~630 bytes): PNG/GIF only."""

MIN_IMAGE = 100
"""Smallest image any format here can produce (a 1x1 PNG plus its padding chunk is 84 bytes)."""

_PNG_PAD = b"paDd"  # ancillary, private, reserved bit clear, safe-to-copy (PNG spec 5.4)
_MIN_PAD = 16


def noise(key: str, n: int) -> bytes:
    """``n`` pseudo-random bytes determined by ``key`` (SHAKE-256, stable across platforms)."""
    return hashlib.shake_256(key.encode()).digest(n) if n > 0 else b""


def text_noise(key: str, n: int) -> str:
    """``n`` characters of base64 noise: no ``*``, ``-``, quotes or ``<``, safe in any comment."""
    if n <= 0:
        return ""
    return base64.b64encode(noise(key, (n * 3) // 4 + 3)).decode("ascii")[:n]


def image_format(index: int, size: int) -> str:
    """Which image format object ``index`` of ``size`` bytes is written in (ProtoLens's choice).

    JPEG dominates (as on the web), PNG and GIF appear too; tiny images are PNG/GIF only, and GIF
    stays below 50 KB (large GIFs are rare and slow to encode).
    """
    if size < JPEG_FROM:
        return ("png", "gif")[index % 2]
    if size < 50_000:
        return ("jpeg", "jpeg", "png", "gif")[index % 4]
    return ("jpeg", "jpeg", "jpeg", "png")[index % 4]


# ---------------------------------------------------------------------------- images


def png(size: int, key: str) -> bytes:
    """An RGB noise PNG of exactly ``size`` bytes (stored deflate; padding chunk before IEND)."""
    if size < MIN_IMAGE:
        raise ValueError(f"a PNG needs at least {MIN_IMAGE} bytes, not {size}")
    budget = size - _MIN_PAD - 12  # leave room for the padding chunk
    w = max(1, math.isqrt(max(0, int(budget * 0.9)) // 3))
    h = max(1, int(budget * 0.9) // (1 + 3 * w))
    while h > 1 and _png_len(w, h) > budget:
        h -= 1
    while w > 1 and _png_len(w, h) > budget:
        w -= 1
    pixels = noise(key + "#px", w * h * 3)
    stride = 3 * w
    raw = b"".join(b"\x00" + pixels[r * stride:(r + 1) * stride] for r in range(h))
    body = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    body += _chunk(b"IDAT", _stored_zlib(raw))
    pad = size - len(body) - 12 - 12
    return body + _chunk(_PNG_PAD, noise(key + "#pad", pad)) + _chunk(b"IEND", b"")


def _png_len(w: int, h: int) -> int:
    raw = h * (1 + 3 * w)
    return 8 + 25 + 12 + 2 + raw + 5 * max(1, math.ceil(raw / 65535)) + 4 + 12


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _stored_zlib(data: bytes) -> bytes:
    """A zlib stream of stored deflate blocks (RFC 1950/1951), independent of the zlib version."""
    out = [b"\x78\x01"]
    blocks = range(0, len(data), 65535) if data else range(1)
    for start in blocks:
        part = data[start:start + 65535]
        final = 1 if start + 65535 >= len(data) else 0
        out.append(struct.pack("<BHH", final, len(part), len(part) ^ 0xFFFF) + part)
    out.append(struct.pack(">I", zlib.adler32(data)))
    return b"".join(out)


def jpeg(size: int, key: str) -> bytes:
    """A noise JPEG (quality 85, baseline) of exactly ``size`` bytes, COM segments after SOI."""
    if size < JPEG_FROM:
        raise ValueError(f"a JPEG needs at least {JPEG_FROM} bytes, not {size}")
    target = size * 0.9
    pixels = max(1.0, (target - 650) / 0.76)  # noise at q85: ~0.76 bytes per pixel (measured)
    for _ in range(8):
        w = max(1, int(math.sqrt(pixels * 4 / 3)))
        h = max(1, int(pixels / w))
        img = Image.frombytes("RGB", (w, h), noise(key + "#px", w * h * 3))
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=85, optimize=False, progressive=False)
        data = buf.getvalue()
        if len(data) <= size - _MIN_PAD:
            return data[:2] + _jpeg_comments(size - len(data), key) + data[2:]
        pixels = max(1.0, pixels * (size - _MIN_PAD - 650) / max(1, len(data) - 650) * 0.9)
    raise ValueError(f"could not fit a JPEG into {size} bytes")


def _jpeg_comments(total: int, key: str) -> bytes:
    """COM segments (4 bytes of marker and length + up to 65533 bytes each) totalling ``total``."""
    count = math.ceil(total / 65537)
    sizes = [total // count + (1 if i < total % count else 0) for i in range(count)]
    pad = noise(key + "#pad", total)
    out, at = [], 0
    for seg in sizes:
        out.append(b"\xff\xfe" + struct.pack(">H", seg - 2) + pad[at:at + seg - 4])
        at += seg - 4
    return b"".join(out)


def gif(size: int, key: str) -> bytes:
    """A noise GIF89a of exactly ``size`` bytes, a comment extension before the trailer."""
    if size < MIN_IMAGE:
        raise ValueError(f"a GIF needs at least {MIN_IMAGE} bytes, not {size}")
    bits = min(8, max(1, int(math.log2(max(2.0, size * 0.3 / 3)))))  # palette <= 30% of size
    colours = 1 << bits
    pixels = max(1.0, (size * 0.9 - 3 * colours - 40) / 1.4)
    for _ in range(12):
        w = max(1, int(math.sqrt(pixels)))
        h = max(1, int(pixels / w))
        px = bytes(b % colours for b in noise(key + "#px", w * h)) if bits < 8 else noise(
            key + "#px", w * h)
        img = Image.frombytes("P", (w, h), px)
        img.putpalette(noise(key + "#pal", 3 * colours))
        buf = io.BytesIO()
        img.save(buf, "GIF", optimize=False)
        data = buf.getvalue()
        if len(data) <= size - _MIN_PAD:
            return data[:-1] + _gif_comment(size - len(data), key) + data[-1:]
        pixels = max(1.0, pixels * 0.7)
    raise ValueError(f"could not fit a GIF into {size} bytes")


def _gif_comment(total: int, key: str) -> bytes:
    """A comment extension of exactly ``total`` (>= 5) bytes: 21 FE, sub-blocks, terminator."""
    rest = total - 3  # data bytes plus one length byte per sub-block
    count = math.ceil(rest / 256)
    data = noise(key + "#pad", rest - count)
    lens = [len(data) // count + (1 if i < len(data) % count else 0) for i in range(count)]
    out, at = [b"\x21\xfe"], 0
    for n in lens:
        out.append(bytes([n]) + data[at:at + n])
        at += n
    out.append(b"\x00")
    return b"".join(out)


def image(fmt: str, size: int, key: str) -> bytes:
    if fmt == "jpeg":
        return jpeg(size, key)
    if fmt == "png":
        return png(size, key)
    if fmt == "gif":
        return gif(size, key)
    raise ValueError(f"unknown image format {fmt!r}")


# ---------------------------------------------------------------------------- text


def _fill(prefix: str, suffix: str, size: int, key: str, what: str) -> bytes:
    room = size - len(prefix) - len(suffix)
    if room < 0:
        raise ValueError(f"a {what} needs at least {len(prefix) + len(suffix)} bytes, not {size}")
    return (prefix + text_noise(key, room) + suffix).encode("ascii")


def _ident(path: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in path)


def javascript(size: int, key: str, label: str) -> bytes:
    """A classic script that runs (counts itself in ``window.__protolens``), padded by a string."""
    prefix = (f"/* ProtoLens {label} */\n(function () {{\n  var pad = \"")
    suffix = ("\";\n  window.__protolens = (window.__protolens || 0) + 1;\n"
              f"  window.__protolens_bytes_{_ident(label)} = pad.length;\n}})();\n")
    return _fill(prefix, suffix, size, key, "script")


def stylesheet(size: int, key: str, label: str) -> bytes:
    """A stylesheet with two plain rules, padded by a comment."""
    cls = "pl-" + "".join(c if c.isalnum() else "-" for c in label).lower()
    colour = noise(key + "#colour", 3).hex()
    prefix = (f"/* ProtoLens {label} */\n.{cls} {{ margin: 0; color: #{colour}; }}\n"
              f".{cls} p {{ padding: 1px; }}\n/* ")
    return _fill(prefix, " */\n", size, key, "stylesheet")


def html_leaf(size: int, key: str, label: str) -> bytes:
    """A subresource-free HTML document (an iframe's content), padded by a comment."""
    prefix = (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
              f"<title>{label}</title></head>\n<body><p>{label}</p>\n<!-- ")
    return _fill(prefix, " -->\n</body></html>\n", size, key, "document")


def min_text_size(kind: str, label: str) -> int:
    """Smallest size ``javascript`` / ``stylesheet`` / ``html_leaf`` can produce for ``label``."""
    maker = {"js": javascript, "css": stylesheet, "html": html_leaf}[kind]
    try:
        maker(0, "", label)
    except ValueError as exc:
        return int(str(exc).split("at least ")[1].split(" ")[0])
    return 0  # pragma: no cover - every maker has a non-empty frame


# ---------------------------------------------------------------------------- fonts


@functools.cache
def _font_parts() -> tuple[int, int]:
    """(size with no padding table, fixed cost of adding one): measured from fontTools output."""
    base = len(_font_bytes(0, ""))
    return base, len(_font_bytes(4, "")) - base - 4


def min_font_size() -> int:
    base, cost = _font_parts()
    return base + cost + 4


def font(size: int, key: str) -> bytes:
    """A TrueType font (glyph "A" = a box) of exactly ``size`` bytes; sizes are multiples of 4."""
    base, cost = _font_parts()
    pad = size - base - cost
    if size % 4 or pad < 4:
        raise ValueError(
            f"a font needs a multiple of 4 bytes, at least {base + cost + 4}, not {size}")
    data = _font_bytes(pad, key)
    assert len(data) == size, (len(data), size)
    return data


def _font_bytes(pad: int, key: str) -> bytes:
    # fontTools (a matplotlib dependency, pinned in requirements.lock) ships no type hints
    from fontTools.fontBuilder import FontBuilder  # type: ignore[import-untyped]
    from fontTools.pens.ttGlyphPen import TTGlyphPen  # type: ignore[import-untyped]
    from fontTools.ttLib import newTable  # type: ignore[import-untyped]

    fb = FontBuilder(1000, isTTF=True)
    fb.font.recalcTimestamp = False  # head.modified would be "now": not reproducible
    fb.setupGlyphOrder([".notdef", "A"])
    fb.setupCharacterMap({ord("A"): "A"})
    pen = TTGlyphPen(None)
    pen.moveTo((100, 0))
    pen.lineTo((100, 700))
    pen.lineTo((600, 700))
    pen.lineTo((600, 0))
    pen.closePath()
    fb.setupGlyf({".notdef": TTGlyphPen(None).glyph(), "A": pen.glyph()})
    fb.setupHorizontalMetrics({".notdef": (500, 0), "A": (700, 100)})
    fb.setupHorizontalHeader(ascent=800, descent=-200)
    fb.setupNameTable({"familyName": "ProtoLens", "styleName": "Regular"})
    fb.setupOS2()
    fb.setupPost()
    # FontBuilder stamps head.created/modified with "now": pin both (2018-01-01, in seconds
    # since 1904-01-01 as the OpenType head table counts) so the bytes are reproducible
    fb.font["head"].created = fb.font["head"].modified = 3_597_609_600
    if pad:
        table = newTable("zPAD")
        table.data = noise(key + "#pad", pad)
        fb.font["zPAD"] = table
    buf = io.BytesIO()
    fb.font.save(buf)
    return buf.getvalue()
