"""``protolens testbed pages`` and ``protolens testbed page``: the page corpus caddy serves.

Thin adapter over ``protolens.pages``: resolves the root directory, turns library errors into
one-line ``UserError``s and prints rows with the shared output options.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.pages import (
    PageManifest,
    UnknownPage,
    add_custom_page,
    custom_page,
    ensure_pages,
    parse_size,
)
from protolens.pages.build import is_current, resolve
from protolens.pages.model import INDEX, PageSpec, page_url
from protolens.paths import data_home

COLUMNS = ["name", "objects", "html", "css", "js", "image", "other", "total_bytes", "hosts",
           "status", "url"]
TABLE_COLUMNS = ["name", "objects", "total_bytes", "hosts", "status"]

_root_option = click.option(
    "--root", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Corpus directory (default: <data home>/pages, e.g. ~/.local/share/protolens/pages).")


def _root(root: Path | None) -> Path:
    return root if root is not None else data_home(os.environ) / "pages"


def _row(root: Path, m: PageManifest | PageSpec, status: str) -> dict[str, Any]:
    return {
        "name": m.name,
        "objects": sum(1 for o in m.objects if o.path != INDEX),
        **m.counts(),
        "total_bytes": m.total_bytes,
        "hosts": list(m.hosts),
        "status": status,
        "url": page_url(m.name),
        "dir": str(root / m.name),
        "source": m.source,
    }


def _columns(fmt: str) -> list[str]:
    return TABLE_COLUMNS if fmt == "table" else COLUMNS


def _flat(rows: list[dict[str, Any]], fmt: str) -> list[dict[str, Any]]:
    """Host lists as "a.test b.test" in tables and CSV; JSON keeps the list."""
    if fmt == "json":
        return rows
    return [{**r, "hosts": " ".join(r["hosts"])} for r in rows]


@click.command("pages")
@_root_option
@click.option("--name", "names", multiple=True, metavar="NAME",
              help="Only this page (repeatable); default: every page.")
@click.option("--list", "list_only", is_flag=True,
              help="List the catalog and what is on disk; build nothing.")
@output_options
def pages_cmd(root: Path | None, names: tuple[str, ...], list_only: bool, fmt: str) -> None:
    """Build (if needed) and list the test pages served on a.test, b.test, c.test.

    Pages mirror the papers: IFIP'18 Table I (ifip18-*), the cellular poster (cell-*), the
    student study (student-*), the CoNEXT'20 grid (conext-*), the Mininet study (mininet-*),
    plus custom pages. Deterministic (seeded) and cached: an up-to-date page is not rewritten.
    `objects` excludes the page's own index.html; html..other count it. Each page has a
    manifest.json with every object's path, host, type and size, and the source of its numbers.

    Example: protolens testbed pages --name ifip18-wikipedia --name cell-10x435k --json
    """
    where = _root(root)
    try:
        if list_only:
            specs = resolve(where, names or None)
            rows = [_row(where, s, "cached" if is_current(where / s.name, s) else "missing")
                    for s in specs]
        else:
            built = ensure_pages(where, names or None)
            rows = [_row(where, m, "built" if fresh else "cached") for m, fresh in built]
    except UnknownPage as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write pages under {where}: {exc.strerror or exc}") from None
    emit(_flat(rows, fmt), fmt, title=f"pages in {where}", columns=_columns(fmt))


@click.command("page")
@_root_option
@click.option("--objects", type=int, required=True, help="Number of objects (images).")
@click.option("--size", "size_text", required=True, metavar="SIZE",
              help="Total size of the objects, split equally: 435k, 2.3MB, 9m, 64KiB, 12345.")
@click.option("--hosts", type=int, default=1, show_default=True,
              help="Spread the objects round-robin over this many hosts (a.test, b.test, c.test).")
@click.option("--name", default=None,
              help="Page name (kebab-case); default custom-<objects>x<size>[-h<hosts>].")
@output_options
def page_cmd(root: Path | None, objects: int, size_text: str, hosts: int, name: str | None,
             fmt: str) -> None:
    """Add a custom page of equal-size images and print it.

    The page is built under the corpus root next to the papers' pages, listed by
    `protolens testbed pages`, and served at https://a.test/<name>/.

    Example: protolens testbed page --objects 50 --size 2MB --hosts 2 --name fifty-2m
    """
    where = _root(root)
    try:
        size = parse_size(size_text)
        spec = custom_page(objects, size, hosts, name)
        was_current = is_current(where / spec.name, spec) is not None
        made = add_custom_page(where, objects, size, hosts, spec.name)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write pages under {where}: {exc.strerror or exc}") from None
    row = _row(where, made, "cached" if was_current else "built")
    if fmt == "json":
        emit({**row, "manifest": made.to_json()}, fmt)
    else:
        emit(_flat([row], fmt), fmt, title=f"page in {where}", columns=_columns(fmt))
