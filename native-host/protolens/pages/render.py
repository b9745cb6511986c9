"""Turns a ``PageSpec`` into file bytes and its manifest. Pure: no disk, no clock."""

from __future__ import annotations

from collections.abc import Iterator

from protolens.pages.content import font, html_leaf, image, javascript, stylesheet
from protolens.pages.html import index_html
from protolens.pages.model import (
    INDEX,
    ManifestObject,
    ObjectSpec,
    PageManifest,
    PageSpec,
    object_url,
    page_url,
)

_FORMAT_BY_EXT = {"html": "html", "css": "css", "js": "js", "jpg": "jpeg", "png": "png",
                  "gif": "gif", "ttf": "ttf"}


def object_format(obj: ObjectSpec) -> str:
    """Concrete format from the file extension (html, css, js, jpeg, png, gif, ttf)."""
    ext = obj.path.rsplit(".", 1)[-1]
    if ext not in _FORMAT_BY_EXT:
        raise ValueError(f"no format for {obj.path!r}")
    return _FORMAT_BY_EXT[ext]


def render(spec: PageSpec) -> Iterator[tuple[ObjectSpec, bytes]]:
    """Every file of the page, ``index.html`` first, each exactly ``ObjectSpec.bytes`` long."""
    others = [o for o in spec.objects if o.path != INDEX]
    for obj in spec.objects:
        key = f"{spec.seed}/{spec.name}/{obj.path}"
        fmt = object_format(obj)
        if obj.path == INDEX:
            data = index_html(spec.name, others, obj.bytes, key)
        elif obj.type == "image":
            data = image(fmt, obj.bytes, key)
        elif obj.type == "css":
            data = stylesheet(obj.bytes, key, obj.path)
        elif obj.type == "js":
            data = javascript(obj.bytes, key, obj.path)
        elif obj.type == "html":
            data = html_leaf(obj.bytes, key, obj.path)
        else:
            data = font(obj.bytes, key)
        if len(data) != obj.bytes:  # pragma: no cover - every generator is exact
            raise ValueError(f"{spec.name}/{obj.path}: made {len(data)} bytes, not {obj.bytes}")
        yield obj, data


def manifest(spec: PageSpec) -> PageManifest:
    return PageManifest(
        name=spec.name,
        source=spec.source,
        url=page_url(spec.name),
        hosts=spec.hosts,
        objects=tuple(
            ManifestObject(
                path=o.path, host=o.host, type=o.type, bytes=o.bytes,
                url=(page_url(spec.name) if o.path == INDEX
                     else object_url(o.host, spec.name, o.path)),
                format=object_format(o),
            )
            for o in spec.objects
        ),
        total_bytes=spec.total_bytes,
        seed=spec.seed,
        spec_hash=spec.spec_hash(),
        params=spec.params,
    )
