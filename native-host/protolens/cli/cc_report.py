"""``protolens report --by-cc``: per page, the share of bytes served over delay-based servers
(CoNEXT'20 Fig. 2(c)), from the stored navigations and the stored CC labels."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from protolens.cc.share import page_shares
from protolens.cli.db import connect_ro, store_failure
from protolens.cli.errors import UserError
from protolens.cli.output import emit
from protolens.store import DatabaseError
from protolens.store import cc as ccstore
from protolens.store.compare import known_campaigns


def report_by_cc(campaign: str | None, fmt: str, db: Path | None) -> None:
    conn = connect_ro(db)
    try:
        with closing(conn):
            if not ccstore.has_cc_table(conn):
                raise UserError("no CC labels in this store yet (protolens cc probe URL)")
            if campaign is not None and campaign not in known_campaigns(conn):
                raise UserError(f"no navigations in campaign {campaign!r} (see: protolens lab "
                                "campaigns)")
            rows = page_shares(ccstore.navigation_cc_bytes(conn, campaign=campaign))
    except DatabaseError as exc:
        raise store_failure(db, exc) from None
    emit(rows, fmt, title="Bytes served over delay-based congestion control"
         + (f" (campaign {campaign})" if campaign else ""))
