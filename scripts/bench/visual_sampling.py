#!/usr/bin/env python3
"""What a cheaper frame histogram would cost the visual metrics: each screencast frame's progress
on the four-block page, from every pixel and from a quarter of them.

The worker's frame path (src/adapters/frame-decode.ts) spends most of its CPU on the whole frame's
pixels: drawing it, reading it back, counting it (sw_profile.py --visual). Counting one pixel in
four (nearest neighbour, no blending) or a frame scaled to half its size (bilinear, as a smaller
screencast would be) would cut that about 4x. This says what either does to the numbers: the
four-block page (scripts/devkit/visual_site.py) is loaded over plain CDP with the recorder's
screencast (src/cdp/enable-commands.ts SCREENCAST), each frame decoded here with Pillow, and each
frame's visual progress printed by the recorder's definition (src/visual/metrics.ts: red, green
and blue histograms without near-white pixels, sum of min(|frame - first|, |last - first|) over
the sum of |last - first|, floored to a percent) from:

- ``full``: every pixel (what the recorder counts);
- ``even`` / ``odd``: every other pixel in each direction, starting at 0 or at 1;
- ``half``: the frame scaled to half its size, bilinear.

With equal blocks the exact progress is 0 / 25 / 50 / 75 / 100.

    .venv/bin/python scripts/bench/visual_sampling.py [--loads 3]
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from scripts.bench.visual_clock import SCREENCAST, Session, chromium  # noqa: E402
from scripts.devkit.visual_site import serve_visual_site  # noqa: E402

WHITE_MIN = 249
"""src/visual/histogram.ts WHITE_MIN."""

Pixels = NDArray[np.int64]


def histogram(px: Pixels) -> Pixels:
    """src/visual/histogram.ts histogramOf on an H x W x 3 array."""
    kept = px[~np.all(px >= WHITE_MIN, axis=2)]
    return np.concatenate([np.bincount(kept[:, c], minlength=256) for c in range(3)])


def progress(h: Pixels, first: Pixels, last: Pixels) -> int:
    """src/visual/metrics.ts frameProgress."""
    total = int(np.abs(last - first).sum())
    match = int(np.minimum(np.abs(h - first), np.abs(last - first)).sum())
    return 100 if total == 0 else match * 100 // total


def half(px: Pixels) -> Pixels:
    img = Image.fromarray(px.astype(np.uint8))
    size = (img.width // 2, img.height // 2)
    return np.asarray(img.resize(size, Image.Resampling.BILINEAR), np.int64)


WAYS: dict[str, Callable[[Pixels], Pixels]] = {
    "full": lambda px: px, "even": lambda px: px[::2, ::2], "odd": lambda px: px[1::2, 1::2],
    "half": half,
}


def frames(site_url: str, spki: str, work: Path) -> list[Pixels]:
    """One load's screencast frames, decoded, in order."""
    proc, cdp = chromium(work, [f"--ignore-certificate-errors-spki-list={spki}"])
    try:
        s = Session(cdp)
        s.send("Page.enable", {}, page=True)
        s.send("Page.startScreencast", SCREENCAST, page=True)
        s.pump(0.3)
        s.send("Page.navigate", {"url": site_url}, page=True)
        s.pump(4)  # the last block is held back 1.6 s
        return [np.asarray(Image.open(io.BytesIO(base64.b64decode(e["params"]["data"])))
                           .convert("RGB"), np.int64)
                for e in s.events if e["method"] == "Page.screencastFrame"]
    finally:
        cdp.close()
        os.killpg(proc.pid, 15)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, serve_visual_site(Path(tmp) / "site") as site:
        for i in range(args.loads):
            work = Path(tmp) / f"load-{i}"
            work.mkdir()
            got = frames(site.url, site.spki, work)
            if len(got) < 2:
                raise SystemExit(f"load {i + 1}: {len(got)} frame(s), too few to compare")
            h, w = got[0].shape[:2]
            print(f"load {i + 1}: {len(got)} frames of {w} x {h}; progress per frame, %")
            for name, way in WAYS.items():
                hs = [histogram(way(px)) for px in got]
                print(f"  {name:>5}: " + " ".join(f"{progress(x, hs[0], hs[-1]):3d}" for x in hs))


if __name__ == "__main__":
    main()
