"""The ProtoLens page corpus: deterministic pages shaped like the papers' test pages.

``catalog()`` lists the pages (pure specs with citations), ``ensure_corpus(root)`` writes them
under ``root/<name>/`` for caddy to serve on every host in ``HOSTS``, ``add_custom_page`` adds one.
"""

from __future__ import annotations

from protolens.pages.build import (
    MANIFEST,
    UnknownPage,
    add_custom_page,
    ensure_corpus,
    ensure_pages,
    read_manifest,
)
from protolens.pages.catalog import catalog, custom_page, parse_size
from protolens.pages.model import (
    HOSTS,
    INDEX,
    TYPES,
    ManifestObject,
    ObjectSpec,
    PageManifest,
    PageSpec,
    page_url,
)

__all__ = [
    "HOSTS", "INDEX", "MANIFEST", "TYPES", "ManifestObject", "ObjectSpec", "PageManifest",
    "PageSpec", "UnknownPage", "add_custom_page", "catalog", "custom_page", "ensure_corpus",
    "ensure_pages", "page_url", "parse_size", "read_manifest",
]
