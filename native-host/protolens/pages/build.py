"""Materializes pages under a root directory: ``root/<name>/`` holds index.html, the objects and
``manifest.json``. The disk adapter around the pure catalog and renderer; one caddy serving
``root`` for every host name in ``HOSTS`` serves the whole corpus.

Cached: a page whose manifest matches its spec (hash) and whose files have the listed sizes is
left alone. A page is written to a temporary directory and swapped in, so a reader never sees a
half-written page.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from protolens.pages.catalog import catalog, custom_page
from protolens.pages.model import PageManifest, PageSpec
from protolens.pages.render import manifest, render

MANIFEST = "manifest.json"


class UnknownPage(ValueError):
    """A page name that is neither in the catalog nor a custom page under the root."""


def read_manifest(page_dir: Path) -> PageManifest | None:
    """The page's manifest, or None if it is missing or unreadable."""
    try:
        return PageManifest.from_json(json.loads((page_dir / MANIFEST).read_text()))
    except (OSError, ValueError):
        return None


def is_current(page_dir: Path, spec: PageSpec) -> PageManifest | None:
    """The manifest on disk if it matches ``spec`` and every file has its listed size."""
    found = read_manifest(page_dir)
    if found is None or found.spec_hash != spec.spec_hash():
        return None
    for obj in found.objects:
        try:
            if (page_dir / obj.path).stat().st_size != obj.bytes:
                return None
        except OSError:
            return None
    return found


def write_page(root: Path, spec: PageSpec) -> PageManifest:
    """Write every file of ``spec`` and its manifest, replacing ``root/<name>`` atomically."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / spec.name
    tmp = root / f".tmp-{spec.name}-{os.getpid()}"
    old = root / f".old-{spec.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    for obj, data in render(spec):
        (tmp / obj.path).write_bytes(data)
    doc = manifest(spec)
    (tmp / MANIFEST).write_text(json.dumps(doc.to_json(), indent=2) + "\n")
    with contextlib.suppress(FileNotFoundError):  # no earlier copy
        final.rename(old)
    try:
        tmp.rename(final)
    except OSError:
        # another process swapped the same page in meanwhile: keep its copy if it is current
        shutil.rmtree(tmp, ignore_errors=True)
        if is_current(final, spec) is None:
            raise
    shutil.rmtree(old, ignore_errors=True)
    return doc


def ensure_page(root: Path, spec: PageSpec) -> tuple[PageManifest, bool]:
    """(manifest, True if it was (re)built, False if the cached copy was current)."""
    cached = is_current(root / spec.name, spec)
    if cached is not None:
        return cached, False
    return write_page(root, spec), True


def custom_specs(root: Path) -> list[PageSpec]:
    """Custom pages found under ``root`` (their manifests carry the arguments that made them)."""
    specs: list[PageSpec] = []
    if not root.is_dir():
        return specs
    for page_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        found = read_manifest(page_dir)
        if found is None or not found.params:
            continue
        p = dict(found.params)
        try:
            specs.append(custom_page(p["objects"], p["size"], p["hosts"], found.name, found.seed))
        except (KeyError, ValueError):
            continue
    return specs


def resolve(root: Path, names: Iterable[str] | None = None) -> list[PageSpec]:
    """Specs for ``names`` (all catalog and custom pages when None); unknown names raise."""
    known = {s.name: s for s in [*catalog(), *custom_specs(root)]}
    if names is None:
        return list(known.values())
    wanted = list(dict.fromkeys(names))
    missing = [n for n in wanted if n not in known]
    if missing:
        raise UnknownPage(f"unknown page(s): {', '.join(missing)} "
                          "(see `protolens testbed pages --list`)")
    return [known[n] for n in wanted]


def ensure_pages(root: Path, names: Iterable[str] | None = None
                 ) -> list[tuple[PageManifest, bool]]:
    return [ensure_page(root, spec) for spec in resolve(root, names)]


def ensure_corpus(root: Path, names: Iterable[str] | None = None) -> list[PageManifest]:
    """Build (or reuse) the named pages, or every page, under ``root``; return their manifests."""
    return [m for m, _ in ensure_pages(root, names)]


def add_custom_page(root: Path, objects: int, size: int, hosts: int = 1,
                    name: str | None = None, seed: int = 0) -> PageManifest:
    """Build a custom page of ``objects`` images totalling ``size`` bytes over ``hosts`` hosts."""
    return ensure_page(root, custom_page(objects, size, hosts, name, seed))[0]
