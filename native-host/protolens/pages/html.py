"""A page's ``index.html``: references every object exactly once, all loaded before ``load``.

Pure. How each type is referenced, and why each one delays the load event:
- css: ``<link rel="stylesheet">`` in the head (render-blocking, delays load);
- js: classic ``<script src>`` in the head, neither async nor defer (parser-blocking);
- image: ``<img>`` without ``loading="lazy"`` (eager: delays load);
- html (beyond the page itself): ``<iframe>``; a frame's load delays its parent's (HTML spec,
  "delay the load event");
- other: a TrueType font in an ``@font-face`` rule of an inline style, used by a paragraph of the
  body. Verified with Chromium 156 on this machine: a font used by the page delays the load event
  (load fired at 1542 ms with the font answered after 1500 ms), while
  ``<link rel=preload as=fetch crossorigin>`` does NOT (load fired at 25 ms, the preload was
  answered 1.5 s later) and a plain ``fetch()`` does not either, so neither is used. Fonts are
  fetched in CORS mode, so they stay on the page's own host (``a.test``).
Objects are referenced by absolute ``https://<host>/<name>/<file>`` URLs without a port.
"""

from __future__ import annotations

from collections.abc import Sequence

from protolens.pages.content import text_noise
from protolens.pages.model import ObjectSpec, object_url


def _family(path: str) -> str:
    return "pl-" + path.rsplit(".", 1)[0]


def _parts(name: str, objects: Sequence[ObjectSpec]) -> tuple[str, str]:
    """(everything before the padding slot, everything after it)."""
    url = {o.path: object_url(o.host, name, o.path) for o in objects}
    fonts = [o for o in objects if o.type == "other"]
    head = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>ProtoLens page {name}</title>",
        '<link rel="icon" href="data:,">',  # no favicon request: it is not one of the objects
    ]
    if fonts:
        head.append("<style>")
        for o in fonts:
            fam = _family(o.path)
            head.append(f'@font-face {{ font-family: "{fam}"; src: url("{url[o.path]}") '
                        'format("truetype"); }')
            head.append(f'.{fam} {{ font-family: "{fam}", sans-serif; }}')
        head.append("</style>")
    head += [f'<link rel="stylesheet" href="{url[o.path]}">' for o in objects if o.type == "css"]
    head += [f'<script src="{url[o.path]}"></script>' for o in objects if o.type == "js"]
    body = ["</head><body>", f"<h1>ProtoLens page {name}</h1>"]
    body += [f'<p class="{_family(o.path)}">A</p>' for o in fonts]
    body += [f'<img src="{url[o.path]}" alt="">' for o in objects if o.type == "image"]
    body += [f'<iframe src="{url[o.path]}" width="1" height="1" title="{o.path}"></iframe>'
             for o in objects if o.type == "html"]
    return "\n".join(head + body) + "\n", "</body></html>\n"


def index_min_size(name: str, objects: Sequence[ObjectSpec]) -> int:
    """Length of the page's HTML with no padding (``objects``: all but index.html)."""
    before, after = _parts(name, objects)
    return len(before) + len(after)


def index_html(name: str, objects: Sequence[ObjectSpec], size: int, key: str) -> bytes:
    """The page's HTML, padded to exactly ``size`` bytes with a comment before ``</body>``."""
    before, after = _parts(name, objects)
    pad = size - len(before) - len(after)
    if pad < 0:
        raise ValueError(f"page {name} needs at least {len(before) + len(after)} bytes of HTML")
    filler = " " * pad if pad < 10 else "<!-- " + text_noise(key, pad - 10) + " -->\n"
    return (before + filler + after).encode("ascii")
