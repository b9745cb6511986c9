"""``compare --baseline-dataset``: a collector's pooled Parquet dataset as the baseline side
(DuckDB through ``store/dataset.py``), and the cell key both sides share when one is a dataset.

A dataset holds contributions anonymized at export (``share/anonymize.py``, ``share/tags.py``):

- ``page``: a page of the built-in corpus or a default custom-page name stays in clear; any other
  page tag (a real site's URL, ``lab run --urls``) becomes a pseudonym of its bundle, which
  matches nothing outside it;
- ``origin``: scheme and host only; the host in clear when its registrable domain was on the
  contributor's allowlist (``export --allow-domains``), else a token of its bundle;
- ``condition``, ``arm``: in clear when they are ProtoLens's own names (a built-in profile, the
  arm grammar), else pseudonyms;
- ``campaign``: in clear for ``lab reproduce``'s names and those kept with ``export
  --keep-campaign``.

So with a dataset on one side, both sides' loads are keyed on what a bundle keeps in clear
(``shared_cell``): the page tag when it is one of ProtoLens's own names, else the host of the
load's origin (two URLs of one host share a cell). A cell the dataset holds only under a
pseudonym is named "only in the baseline" and not compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from protolens.analysis.observe import domain_of
from protolens.research.compare import CompareError
from protolens.share import tags

ANONYMIZED = (" (a dataset keeps a page, condition or arm in clear only when it is one of "
              "ProtoLens's own names, a host only when the contributor allow-listed it)")
"""Appended to "no cell in common" when one side is a dataset."""


def shared_cell(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with its page tag as a bundle keeps it in clear: the tag itself when it is one of
    ProtoLens's own page names, else the host of the load's origin."""
    page = row.get("page")
    if page is None or tags.builtin("page", str(page)):
        return dict(row)
    return {**row, "page": domain_of(str(row.get("origin") or "")) or None}


def dataset_rows(data: Path, campaign: str | None, source: str | None,
                 role: str) -> list[dict[str, Any]]:
    """The dataset's navigations of ``campaign`` (else of ``source``: ``lab`` for every lab
    load), as ``store.compare.compare_rows`` gives a store's; a path that is no dataset, or a
    campaign it does not carry in clear, is a one-line ``CompareError``."""
    from protolens.store.dataset import DatasetError, clear_campaigns, store_rows

    if not data.is_dir():
        why = "not a directory" if data.exists() else "no such directory"
        raise CompareError(f"{role} dataset {data}: {why} (give a collector's data directory)")
    try:
        rows = store_rows(data, campaign=campaign, source=source)
        if rows:
            return rows
        if campaign is None:
            raise CompareError(f"{role}: no {source} loads in dataset {data}")
        names = clear_campaigns(data)
    except DatasetError as exc:
        raise CompareError(f"{role} dataset {exc}") from None
    raise CompareError(f"{role}: no navigations of campaign {campaign!r} in dataset {data} "
                       f"(campaigns in clear: {', '.join(names[:5]) or 'none'}; others are "
                       "pseudonyms unless the contributor kept the name: export --keep-campaign)")
