"""A multi-contributor collector dataset for the analysis tests: each contributor records real
experiment loads (h2 and h3 arms, two domains, 4g and 3g) into their own store, exports an
anonymized bundle (the two domains allow-listed, as a study would), and the collector's own
``ingest.accept`` stores it. Contributors differ in speed (their baseline); under 3g, h3 is
faster by ``shift_ms`` for everyone. ``contribute`` sends one store's loads to a collector the
same way (export, then the collector's ``accept``)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from protolens.collector.ingest import accept
from protolens.collector.layout import CATALOG
from protolens.collector.limits import Limits
from protolens.share import export
from protolens.store import open_ro
from protolens.store.collector import add_token, open_catalog
from scripts.devkit.navrecord_builder import make_record
from scripts.devkit.store_builder import ingest_all

ALLOW = frozenset({"a.test", "b.test"})


def record(seed: int, domain: str, net: str, arm: str, plt: float) -> dict[str, object]:
    rec = make_record(n_requests=3, seed=seed, family=arm, source="experiment")
    rec["page"]["url"] = f"https://{domain}/x?q=1"  # type: ignore[index]
    rec["page"]["origin"] = f"https://{domain}"  # type: ignore[index]
    rec["page"]["network"]["effective_type"] = net  # type: ignore[index]
    rec["requests"][0]["host"] = domain  # type: ignore[index]
    rec["requests"][0]["url"] = f"https://{domain}/x?q=1"  # type: ignore[index]
    rec["milestones"]["load_ms"] = plt  # type: ignore[index]
    rec["context"] = {"arm": arm}
    return rec


INCOMPLETE_CELL = ("a.test", "4g", "h3")
"""Where ``make_dataset(incomplete=k)`` adds each contributor's k incomplete loads."""


def make_dataset(tmp: Path, contributors: int = 6, per_cell: int = 6, shift_ms: float = 150.0,
                 seed: int = 3, incomplete: int = 0) -> Path:
    """``incomplete``: per contributor, that many more loads in ``INCOMPLETE_CELL``, their records
    incomplete (a dialog during the load) and 3 s slower, as a user's closing of it makes them."""
    data = tmp / "collector"
    data.mkdir()
    rng = np.random.default_rng(seed)
    conn = open_catalog(data / CATALOG, time.time() * 1000)
    for c in range(contributors):
        add_token(conn, f"vol-{c}", f"{c:064x}", 0.0)
    conn.close()
    for c in range(contributors):
        base = 800.0 + 400.0 * c  # contributors differ far more than the arms do
        recs = []
        for domain in ("a.test", "b.test"):
            for net in ("4g", "3g"):
                for arm in ("h2", "h3"):
                    for _ in range(per_cell):
                        plt = base + rng.normal(0, 30)
                        if net == "3g" and arm == "h3":
                            plt -= shift_ms
                        recs.append(record(c * 10_000 + len(recs), domain, net, arm, plt))
        for _ in range(incomplete):
            rec = record(c * 10_000 + len(recs), *INCOMPLETE_CELL, base + 3000.0)
            rec["page"]["incomplete"] = True  # type: ignore[index]
            rec["page"]["incomplete_reasons"] = ["dialog"]  # type: ignore[index]
            recs.append(rec)
        db = tmp / f"vol-{c}.db"
        ingest_all(db, recs)
        ro = open_ro(db)
        built = export.build(ro, allow=ALLOW, since_ms=None, now_ms=1_763_950_000_000.0,
                             contributor_id=f"{c:032x}")
        ro.close()
        out = tmp / f"vol-{c}.tar"
        export.write(built, out, 1_763_950_000_000.0)
        accept(data, out.read_bytes(), f"vol-{c}", 1_763_950_000_000.0 + c, Limits())
    return data


def contribute(data: Path, db: Path, token: str, allow: frozenset[str] = frozenset(),
               keep_campaigns: frozenset[str] = frozenset()) -> None:
    """``db``'s loads, exported as a volunteer would (``allow``: domains in clear,
    ``keep_campaigns``: campaign names in clear), stored by the collector's own ``accept`` under
    a new token ``token`` in the data directory ``data`` (made when missing)."""
    data.mkdir(exist_ok=True)
    now = 1_763_950_000_000.0
    conn = open_catalog(data / CATALOG, time.time() * 1000)
    add_token(conn, token, token.encode().hex().ljust(64, "0")[:64], 0.0)
    conn.close()
    ro = open_ro(db)
    built = export.build(ro, allow=allow, since_ms=None, now_ms=now,
                         contributor_id=token.encode().hex().ljust(32, "0")[:32],
                         keep_campaigns=keep_campaigns)
    ro.close()
    out = db.with_suffix(".tar")
    export.write(built, out, now)
    accept(data, out.read_bytes(), token, now, Limits())
