"""Regenerates the static test site under scripts/devkit/www/ (committed; run only to change it).

The site is what every fixture and end-to-end test loads: a.test serves /page/ with 20+ objects
(images that decode, CSS, JS, a late fetch after the load event), b.test serves /frame/, a
cross-site iframe (so Chromium puts it in an out-of-process frame). Deterministic: fixed seeds.

    .venv/bin/python scripts/devkit/gen_assets.py
"""

from __future__ import annotations

import io
import random
from pathlib import Path

from PIL import Image

WWW = Path(__file__).resolve().parent / "www"


def _image(seed: int, w: int, h: int, fmt: str, noise: float) -> bytes:
    """A picture with a gradient plus `noise` (0..1) of random pixels, so sizes differ."""
    rng = random.Random(seed)
    img = Image.new("RGB", (w, h))
    px = img.load()
    assert px is not None
    base = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
    for y in range(h):
        for x in range(w):
            if rng.random() < noise:
                px[x, y] = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
            else:
                px[x, y] = (
                    (base[0] + x) % 256,
                    (base[1] + y) % 256,
                    (base[2] + x + y) % 256,
                )
    buf = io.BytesIO()
    if fmt == "JPEG":
        img.save(buf, fmt, quality=85)
    else:
        img.save(buf, fmt, optimize=False)
    return buf.getvalue()


def _write(rel: str, data: bytes | str) -> None:
    path = WWW / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


# (name, width, height, format, noise): 2 KB .. ~120 KB
IMAGES = [
    ("img/01.png", 40, 40, "PNG", 0.2),
    ("img/02.png", 64, 64, "PNG", 0.5),
    ("img/03.jpg", 120, 90, "JPEG", 0.3),
    ("img/04.jpg", 200, 150, "JPEG", 0.5),
    ("img/05.png", 100, 100, "PNG", 0.8),
    ("img/06.jpg", 320, 240, "JPEG", 0.6),
    ("img/07.png", 160, 120, "PNG", 0.9),
    ("img/08.jpg", 400, 300, "JPEG", 0.4),
    ("img/09.png", 48, 48, "PNG", 0.1),
    ("img/10.jpg", 240, 180, "JPEG", 0.9),
    ("img/11.png", 200, 200, "PNG", 0.7),
    ("img/12.jpg", 160, 160, "JPEG", 0.2),
]

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ProtoLens test page</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="css/base.css"><link rel="stylesheet" href="css/layout.css">
<link rel="stylesheet" href="css/theme.css">
<script src="js/app1.js"></script><script src="js/app2.js" defer></script>
</head><body><h1>ProtoLens test page</h1>
<div class="grid">
{imgs}
<img src="cache/c1.png" alt="cacheable 1"><img src="cache/c2.jpg" alt="cacheable 2">
</div>
<iframe src="https://b.test:{{PORT}}/frame/" title="cross-site frame"></iframe>
<script src="js/app3.js"></script><script src="js/app4.js" async></script>
</body></html>
"""

FRAME = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>frame on b.test</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="frame.css"></head>
<body><p>cross-site frame</p><img src="f1.png" alt="f1"><img src="f2.jpg" alt="f2">
<img src="f3.png" alt="f3"><script src="frame.js"></script></body></html>
"""

JS = {
    "js/app1.js": "window.protolensT0 = performance.now();\n",
    "js/app2.js": "document.documentElement.dataset.app2 = 'ran';\n",
    "js/app3.js": (
        "// ?fail adds an image from a closed port: a failed request "
        "(net::ERR_CONNECTION_REFUSED)\n"
        "if (location.search.includes('fail')) {\n"
        "  const img = document.createElement('img');\n"
        "  img.src = 'https://a.test:1/refused.png';\n"
        "  document.body.appendChild(img);\n"
        "}\n"
    ),
    "js/app4.js": (
        "// a request that finishes after the load event: the recorder must wait for quiet\n"
        "window.addEventListener('load', () => {\n"
        "  // its query carries the page's own loadEventEnd, so caddy's access log holds an "
        "independent\n"
        "  // ground truth for the recorder's PLT (tests/e2e)\n"
        "  setTimeout(() => {\n"
        "    const nav = performance.getEntriesByType('navigation')[0];\n"
        "    fetch('data/late.json?led=' + (nav ? nav.loadEventEnd : -1)).then((r) => r.json());\n"
        "  }, 300);\n"
        "});\n"
    ),
}


def main() -> None:
    imgs = "\n".join(f'<img src="{name}" alt="{name}">' for name, *_ in IMAGES)
    # {{PORT}} is substituted by site.py at serve time (the iframe must name b.test's port)
    _write(
        "a.test/page/index.html.tmpl",
        PAGE.replace("{imgs}", imgs).replace("{{PORT}}", "{PORT}"),
    )
    for i, (name, w, h, fmt, noise) in enumerate(IMAGES):
        _write(f"a.test/page/{name}", _image(i, w, h, fmt, noise))
    _write("a.test/page/cache/c1.png", _image(100, 80, 80, "PNG", 0.5))
    _write("a.test/page/cache/c2.jpg", _image(101, 160, 120, "JPEG", 0.5))
    _write("a.test/page/bg.png", _image(102, 32, 32, "PNG", 0.3))
    _write("a.test/page/css/base.css", "body{font-family:sans-serif;margin:1em}\n" * 20)
    _write(
        "a.test/page/css/layout.css",
        ".grid{display:flex;flex-wrap:wrap;gap:4px}\n" * 40,
    )
    _write("a.test/page/css/theme.css", "h1{color:#235;background:url(../bg.png)}\n" * 10)
    for name, text in JS.items():
        _write(f"a.test/page/{name}", text + "/* padding */\n" * 50)
    _write("a.test/page/data/late.json", '{"late": true, "pad": "' + "x" * 2000 + '"}\n')
    _write("b.test/frame/index.html", FRAME)
    _write("b.test/frame/frame.css", "p{color:#520}\n" * 30)
    _write("b.test/frame/frame.js", "document.body.dataset.frame = 'ran';\n")
    _write("b.test/frame/f1.png", _image(200, 60, 60, "PNG", 0.5))
    _write("b.test/frame/f2.jpg", _image(201, 180, 120, "JPEG", 0.5))
    _write("b.test/frame/f3.png", _image(202, 90, 90, "PNG", 0.6))


if __name__ == "__main__":
    main()
