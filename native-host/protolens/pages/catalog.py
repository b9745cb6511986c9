"""The page corpus: every page the papers in shared/seeds/ load, as ``PageSpec`` values.

Pure. Numbers come from the papers; where a paper is silent (how a total splits over objects,
which host serves what, file sizes the Mininet study does not state) the choice is ProtoLens's and
is written in the page's ``source`` (copied into its manifest). 1 KB = 1000 bytes, 1 MB = 10^6.
Unless a source says otherwise, every page is served from one host (a.test), the page's HTML is
extra to the objects the paper lists, and its objects are images (the poster, the student study
and the Mininet study load image-only pages; CoNEXT'20 extends the image-tile H2 demos).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from decimal import Decimal

from protolens.pages.alloc import equal_split, range_split, unit, weighted_split
from protolens.pages.content import (
    IMAGE_EXT,
    MIN_IMAGE,
    image_format,
    min_font_size,
    min_text_size,
)
from protolens.pages.html import index_min_size
from protolens.pages.model import HOSTS, INDEX, ObjectSpec, ObjectType, PageSpec

KB = 1000
MB = 1000 * KB

IFIP18 = ("Manzoor, Sadre, Drago, Cerda-Alabern: Is There a Case for Parallel Connections with "
          "Modern Web Protocols? IFIP Networking 2018 (shared/seeds/000)")
CELLULAR = ("Goel, Steiner, Wittie, Flack, Ludin: HTTP/2 Performance in Cellular Networks, poster "
            "(shared/seeds/001)")
STUDENT = ("O'Connor: Performance Comparison of HTTP/1.1, HTTP/2, and QUIC, course project "
           "(shared/seeds/003)")
CONEXT20 = ("Agarwal, Varvello, Aucinas, Bustamante, Netravali: Mind the Delay, CoNEXT 2020 "
            "(shared/seeds/002)")
MININET = ("Zheng et al.: Performance Evaluation of HTTP/2 over TLS+TCP and HTTP/2 over QUIC in a "
           "Mobile Network (shared/seeds/004)")

# Table I: website, HTML, CSS, JS, Image, Other, Total, Size (kB)
TABLE_I: tuple[tuple[str, int, int, int, int, int, int, int], ...] = (
    ("baidu", 1, 1, 1, 6, 1, 10, 50),
    ("google", 2, 1, 3, 5, 1, 12, 56),
    ("live", 2, 2, 2, 2, 0, 8, 262),
    ("twitter", 6, 1, 4, 2, 3, 16, 421),
    ("wikipedia", 1, 1, 2, 20, 1, 25, 441),
    ("reddit", 4, 2, 5, 26, 2, 39, 470),
    ("yahoo", 16, 13, 5, 48, 4, 86, 839),
    ("vk", 4, 1, 14, 3, 1, 23, 920),
    ("taobao", 2, 2, 7, 38, 4, 53, 1320),
    ("instagram", 3, 1, 7, 25, 1, 37, 1409),
    ("qq", 15, 6, 19, 115, 6, 161, 1728),
    ("sohu", 13, 11, 33, 167, 4, 228, 2056),
    ("youtube", 8, 3, 5, 113, 20, 149, 2911),
    ("facebook", 1, 1, 8, 123, 1, 134, 3560),
    ("amazon", 5, 2, 14, 41, 2, 64, 3723),
)

TABLE_II_DOMAINS = {"google": 1, "wikipedia": 2, "instagram": 3, "twitter": 2, "facebook": 2}
"""Table II's domain counts for the sites that are in both tables (live versions of the pages)."""

TYPE_WEIGHT: dict[ObjectType, float] = {"html": 1.0, "css": 1.0, "js": 2.0, "image": 1.5,
                                        "other": 1.5}
"""Relative mean object size by type: ProtoLens's choice (Table I gives only totals)."""

JITTER = 0.8
"""Each object's weight is multiplied by e^(JITTER * u), u uniform in [-1, 1) from the seed."""

IFIP18_CHOICES = (
    "ProtoLens choices (the paper gives only counts by type and the total): the page's own HTML is "
    "one of the HTML objects and the others are iframes; Other = web fonts (@font-face, used by "
    "the page); host count = Table II's domain count where the site is in Table II (google 1, "
    "wikipedia 2, instagram 3, twitter 2, facebook 2), else 1 / 2 / 3 hosts for <20 / <100 / "
    ">=100 objects; images round-robin over the hosts, HTML, CSS, JS and fonts on a.test (fonts "
    "need CORS); object sizes proportional to a type weight (html 1, css 1, js 2, image 1.5, "
    "other 1.5) times a seeded factor e^(0.8u), u in [-1, 1), rounding remainder on index.html; "
    "1 kB = 1000 bytes"
)

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def catalog(seed: int = 0) -> list[PageSpec]:
    """Every page of the corpus, in a stable order."""
    return [*ifip18_pages(seed), *cellular_pages(seed), *student_pages(seed),
            *conext_pages(seed), *mininet_pages(seed)]


def catalog_names() -> list[str]:
    return [p.name for p in catalog()]


def size_label(n: int) -> str:
    """435000 -> "435k", 9000000 -> "9m", 1234 -> "1234b" (for page names)."""
    if n % MB == 0:
        return f"{n // MB}m"
    if n % KB == 0:
        return f"{n // KB}k"
    return f"{n}b"


# ---------------------------------------------------------------------------- builders


def _index(name: str, objects: Sequence[ObjectSpec], size: int | None = None) -> ObjectSpec:
    return ObjectSpec(INDEX, "html", size if size is not None else index_min_size(name, objects),
                      HOSTS[0])


def image_page(name: str, sizes: Sequence[int], source: str, hosts: int = 1, seed: int = 0,
               params: tuple[tuple[str, int], ...] = ()) -> PageSpec:
    """A page of images (``img-001.jpg`` ...) of the given sizes, round-robin over ``hosts``."""
    width = max(3, len(str(len(sizes))))
    objs = [
        ObjectSpec(f"img-{i + 1:0{width}d}.{IMAGE_EXT[image_format(i, s)]}", "image", s,
                   HOSTS[i % hosts])
        for i, s in enumerate(sizes)
    ]
    return PageSpec(name, source, (_index(name, objs), *objs), seed, params)


def ifip18_page(row: tuple[str, int, int, int, int, int, int, int], seed: int = 0) -> PageSpec:
    """One Table I row: counts by type (the page's HTML included) and total size."""
    site, n_html, n_css, n_js, n_img, n_other, total, kb = row
    name = f"ifip18-{site}"
    hosts = TABLE_II_DOMAINS.get(site) or (1 if total < 20 else 2 if total < 100 else 3)
    plan: list[tuple[ObjectType, str]] = []
    plan += [("html", f"html-{i + 1:02d}.html") for i in range(n_html - 1)]
    plan += [("css", f"css-{i + 1:02d}.css") for i in range(n_css)]
    plan += [("js", f"js-{i + 1:02d}.js") for i in range(n_js)]
    plan += [("other", f"font-{i + 1:02d}.ttf") for i in range(n_other)]
    plan += [("image", f"img-{i + 1:03d}.xxx") for i in range(n_img)]  # ext once sized

    def host(kind: ObjectType, path: str) -> str:
        if kind != "image":
            return HOSTS[0]
        return HOSTS[(int(path[4:7]) - 1) % hosts]

    provisional = [ObjectSpec(p, k, 0, host(k, p)) for k, p in plan]
    minimums = [index_min_size(name, provisional)] + [_min_size(k, p) for k, p in plan]
    weights = [TYPE_WEIGHT["html"] * _jitter(seed, name, INDEX)]
    weights += [TYPE_WEIGHT[k] * _jitter(seed, name, p) for k, p in plan]
    aligns = [1] + [4 if k == "other" else 1 for k, _ in plan]
    sizes = weighted_split(kb * KB, weights, minimums, aligns)
    objs = []
    for (kind, path), size in zip(plan, sizes[1:], strict=True):
        if kind == "image":
            path = path[:-3] + IMAGE_EXT[image_format(int(path[4:7]) - 1, size)]
        objs.append(ObjectSpec(path, kind, size, host(kind, path)))
    source = (f"{IFIP18}, Table I, {site}: HTML {n_html}, CSS {n_css}, JS {n_js}, Image {n_img}, "
              f"Other {n_other}, total {total} objects, {kb} kB. {IFIP18_CHOICES}")
    return PageSpec(name, source, (_index(name, objs, sizes[0]), *objs), seed)


def _min_size(kind: ObjectType, path: str) -> int:
    if kind == "image":
        return MIN_IMAGE
    if kind == "other":
        return min_font_size()
    return min_text_size(kind, path)


def _jitter(seed: int, name: str, path: str) -> float:
    return math.exp(JITTER * (2 * unit(seed, name, path) - 1))


def ifip18_pages(seed: int = 0) -> list[PageSpec]:
    return [ifip18_page(row, seed) for row in TABLE_I]


def cellular_pages(seed: int = 0) -> list[PageSpec]:
    fig = f"{CELLULAR}, Sec. 'Results', Fig. 5"
    pages = [
        image_page("cell-365x2k", [2 * KB] * 365, f"{fig}a: 365 objects of 2 KB each. "
                   "ProtoLens choices: objects are images, one host, 1 KB = 1000 bytes", seed=seed),
        image_page("cell-10x435k", [435 * KB] * 10, f"{fig}b: 10 objects of 435 KB each. "
                   "ProtoLens choices: objects are images, one host, 1 KB = 1000 bytes", seed=seed),
    ]
    for mb in (2, 8, 12):
        name = f"cell-136-{mb}m"
        sizes = range_split(mb * MB, 136, 1 * KB, 620 * KB)
        order = sorted(range(136), key=functools.partial(unit, seed, name, "order"))
        pages.append(image_page(
            name, [sizes[i] for i in order],
            f"{fig}c: 136 objects of 1 KB to 620 KB, page of {mb} MB (modeled on HTTP Archive "
            "data). ProtoLens choices (the distribution is not given): sizes log-spaced from "
            "exactly 1 KB to exactly 620 KB, size_i = 1 KB * 620^((i/135)^p) with p solved so the "
            f"objects total {mb} MB, in a seeded shuffled order; images; one host", seed=seed))
    return pages


def student_pages(seed: int = 0) -> list[PageSpec]:
    shapes = (
        ("small", ((18, 14 * KB), (3, 80 * KB))),
        ("medium", ((40, 14 * KB), (7, 80 * KB))),
        ("large", ((200, 14 * KB), (17, 80 * KB))),
        ("many-small", ((200, 14 * KB),)),
        ("many-large", ((25, 1900 * KB),)),
    )
    pages = []
    for label, groups in shapes:
        sizes = [size for count, size in groups for _ in range(count)]
        desc = " + ".join(f"{count} x {size // KB} KB" for count, size in groups)
        pages.append(image_page(
            f"student-{label}", sizes,
            f"{STUDENT}, Sec. 3: the {label.replace('-', ' ')} page, {desc} images (image-only "
            "pages, as the study chose). ProtoLens choices: one host, small images first, "
            "1 KB = 1000 bytes", seed=seed))
    return pages


CONEXT_COUNTS = (6, 48, 96, 192)
CONEXT_SIZES = (40 * KB, 140 * KB, 550 * KB, 2300 * KB, 9 * MB)


def conext_pages(seed: int = 0) -> list[PageSpec]:
    pages = []
    for count in CONEXT_COUNTS:
        for total in CONEXT_SIZES:
            pages.append(image_page(
                f"conext-{count}x{size_label(total)}", equal_split(total, count),
                f"{CONEXT20}, Sec. 3 (synthetic pages): {count} objects, page size "
                f"{total / MB:g} MB (grid: 6/48/96/192 objects x 40 KB, 140 KB, 550 KB, 2.3 MB, "
                "9 MB). ProtoLens choices: the objects total the page size, equal sizes (within "
                "1 byte), images (the pages extend the Akamai and gophertiles image-tile demos), "
                "one host", seed=seed))
    for per_host in (2300 * KB, 9 * MB):
        pages.append(image_page(
            f"conext-httpx-2x{size_label(per_host)}", equal_split(2 * per_host, 12),
            f"{CONEXT20}, Sec. 5 (HTTPX: H1 only for the domains served by a delay-based TCP CC) "
            f"and Sec. 3's large pages. ProtoLens choices: two hosts with 6 equal images each "
            f"(round-robin, a.test and b.test), {per_host / MB:g} MB per host, so that the "
            "testbed can put one host behind BBR and the other behind cubic "
            "(protolens testbed up --bbr-host b.test)", hosts=2, seed=seed))
    return pages


MININET_FILE = 100 * KB
"""The Mininet study says only "all files limited in the same size": ProtoLens's choice."""


def mininet_pages(seed: int = 0) -> list[PageSpec]:
    return [
        image_page(
            f"mininet-{count}", [MININET_FILE] * count,
            f"{MININET}, Sec. 3: {count} file(s) of the same size, no CSS or JavaScript. "
            "ProtoLens choices (the paper gives no file size): 100 KB per file, images, one host",
            seed=seed)
        for count in (1, 10, 100)
    ]


MAX_CUSTOM_OBJECTS = 5000


def custom_page(objects: int, size: int, hosts: int = 1, name: str | None = None,
                seed: int = 0) -> PageSpec:
    """A user's page: ``objects`` images totalling ``size`` bytes, round-robin over ``hosts``.

    Raises ``ValueError`` with a one-line message on a bad argument.
    """
    if not 1 <= objects <= MAX_CUSTOM_OBJECTS:
        raise ValueError(f"--objects must be 1..{MAX_CUSTOM_OBJECTS}, not {objects}")
    if not 1 <= hosts <= len(HOSTS):
        raise ValueError(f"--hosts must be 1..{len(HOSTS)}, not {hosts}")
    if size < objects * MIN_IMAGE:
        raise ValueError(f"--size {size} bytes is too small for {objects} objects "
                         f"(at least {MIN_IMAGE} bytes each: {objects * MIN_IMAGE})")
    if name is None:
        name = f"custom-{objects}x{size_label(size)}" + (f"-h{hosts}" if hosts > 1 else "")
    if not NAME_RE.match(name) or len(name) > 64:
        raise ValueError(f"page name {name!r} must be kebab-case (a-z, 0-9, '-'), 64 chars at most")
    if name in catalog_names():
        raise ValueError(f"page name {name!r} is a catalog page; choose another --name")
    source = (f"custom page (protolens testbed page): {objects} images totalling {size} bytes, "
              f"equal sizes (within 1 byte), round-robin over {hosts} host(s)")
    params = (("objects", objects), ("size", size), ("hosts", hosts))
    return image_page(name, equal_split(size, objects), source, hosts, seed, params)


def parse_size(text: str) -> int:
    """``"435k"``, ``"2.3MB"``, ``"9m"``, ``"1900KB"``, ``"64KiB"``, ``"12345"`` -> bytes (SI)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?)(i?)(b?)\s*", text.lower())
    if not m or (m.group(3) and not m.group(2)):
        raise ValueError(f"cannot read size {text!r} (examples: 435k, 2.3MB, 9m, 12345)")
    base = 1024 if m.group(3) else 1000
    power = {"": 0, "k": 1, "m": 2, "g": 3}[m.group(2)]
    value = Decimal(m.group(1)) * base**power
    if value != int(value):
        raise ValueError(f"size {text!r} is not a whole number of bytes")
    return int(value)
