"""Object bytes: exact sizes, images that decode, fonts that parse, JavaScript that node accepts."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from protolens.pages import content


def _decode(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()  # full decode, not just the header
    return img


@pytest.mark.parametrize(("fmt", "pil"), [("png", "PNG"), ("gif", "GIF"), ("jpeg", "JPEG")])
@pytest.mark.parametrize("size", [100, 101, 208, 2_499, 2_500, 14_000, 49_999, 80_000, 435_000])
def test_images_decode_at_exact_size(fmt: str, pil: str, size: int) -> None:
    if fmt == "jpeg" and size < content.JPEG_FROM:
        with pytest.raises(ValueError, match="a JPEG needs at least"):
            content.image(fmt, size, "k")
        return
    data = content.image(fmt, size, f"k{size}")
    assert len(data) == size
    img = _decode(data)
    assert img.format == pil
    assert img.width >= 1 and img.height >= 1
    assert data == content.image(fmt, size, f"k{size}")  # deterministic
    assert data != content.image(fmt, size, f"other{size}")


def test_large_images_carry_real_pixels_not_just_padding() -> None:
    for fmt in ("png", "jpeg"):
        img = _decode(content.image(fmt, 1_900_000, "big"))
        assert img.width * img.height > 500_000, fmt


@settings(max_examples=60, deadline=None)
@given(st.integers(content.MIN_IMAGE, 40_000), st.sampled_from(["png", "gif"]))
def test_small_images_any_size(size: int, fmt: str) -> None:
    data = content.image(fmt, size, "h")
    assert len(data) == size
    _decode(data)


def test_noise_does_not_compress() -> None:
    import zlib

    data = content.image("png", 200_000, "z")
    assert len(zlib.compress(data, 9)) > 0.99 * len(data)


def test_image_errors() -> None:
    with pytest.raises(ValueError, match="a PNG needs at least 100 bytes"):
        content.png(99, "k")
    with pytest.raises(ValueError, match="a GIF needs at least"):
        content.gif(50, "k")
    with pytest.raises(ValueError, match="unknown image format"):
        content.image("webp", 5000, "k")


def test_image_format_choice() -> None:
    assert {content.image_format(i, 1000) for i in range(8)} == {"png", "gif"}
    assert {content.image_format(i, 14_000) for i in range(8)} == {"jpeg", "png", "gif"}
    assert {content.image_format(i, 500_000) for i in range(8)} == {"jpeg", "png"}


def test_fonts_parse_and_have_the_glyph() -> None:
    from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

    smallest = content.min_font_size()
    for size in (smallest, smallest + 4, 30_000):
        data = content.font(size, f"f{size}")
        assert len(data) == size
        font = TTFont(io.BytesIO(data))
        assert font.getBestCmap()[ord("A")] == "A"
        assert data == content.font(size, f"f{size}")


def test_fonts_carry_fixed_timestamps() -> None:
    """fontTools would stamp "now" into the head table, making fonts differ from run to run."""
    from fontTools.ttLib import TTFont

    head = TTFont(io.BytesIO(content.font(4000, "k")))["head"]
    assert head.created == head.modified == 3_597_609_600


def test_font_errors() -> None:
    with pytest.raises(ValueError, match="multiple of 4"):
        content.font(30_001, "k")
    with pytest.raises(ValueError, match="multiple of 4"):
        content.font(content.min_font_size() - 4, "k")


def test_text_noise_is_safe_in_comments_and_strings() -> None:
    text = content.text_noise("k", 100_000)
    assert len(text) == 100_000
    assert re.fullmatch(r"[A-Za-z0-9+/]*", text)


@pytest.mark.parametrize("kind", ["js", "css", "html"])
def test_text_objects_exact_size_and_minimum(kind: str) -> None:
    maker = {"js": content.javascript, "css": content.stylesheet, "html": content.html_leaf}[kind]
    smallest = content.min_text_size(kind, "x-01.txt")
    assert len(maker(smallest, "k", "x-01.txt")) == smallest
    assert len(maker(54_321, "k", "x-01.txt")) == 54_321
    with pytest.raises(ValueError, match="needs at least"):
        maker(smallest - 1, "k", "x-01.txt")


def test_css_is_plain_rules_and_one_comment() -> None:
    css = content.stylesheet(5000, "k", "css-01.css").decode()
    body = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    assert "/*" not in body and "*/" not in body
    rules = re.findall(r"([^{}]+)\{([^{}]*)\}", body)
    assert len(rules) == 2
    assert re.sub(r"[^{}]+\{[^{}]*\}", "", body).strip() == ""
    for selector, decls in rules:
        assert re.fullmatch(r"\s*\.[a-z0-9-]+( p)?\s*", selector)
        for decl in filter(str.strip, decls.split(";")):
            assert re.fullmatch(r"\s*[a-z-]+:\s*[#a-z0-9 ]+\s*", decl), decl


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    return node


def test_javascript_passes_node_check(tmp_path: Path) -> None:
    node = _node()
    paths = []
    for i, size in enumerate((content.min_text_size("js", "js-01.js"), 300, 70_000)):
        path = tmp_path / f"js-0{i + 1}.js"
        path.write_bytes(content.javascript(size, f"k{i}", path.name))
        paths.append(path)
    for path in paths:
        subprocess.run([node, "--check", str(path)], check=True, capture_output=True)
    # and it runs: each script counts itself
    runner = "globalThis.window = globalThis;" + "".join(p.read_text() for p in paths)
    runner += "console.log(window.__protolens);"
    out = subprocess.run([node, "-e", runner], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "3"


def test_node_check_catches_broken_javascript(tmp_path: Path) -> None:
    """The check above can fail: node rejects a script whose string is cut short."""
    node = _node()
    path = tmp_path / "bad.js"
    path.write_bytes(content.javascript(500, "k", "bad.js").replace(b'";', b"", 1))
    assert subprocess.run([node, "--check", str(path)], capture_output=True).returncode != 0
