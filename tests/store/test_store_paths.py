"""``store/paths.py`` on a real SQLite store: a campaign's runs with their network, and each
navigation's per-host round trips (stored as the runner stores them, read back per campaign)."""

from __future__ import annotations

import time
import uuid
from contextlib import closing
from dataclasses import asdict
from pathlib import Path

from protolens.lab.path_rtt import ProfileRtt, host_rtts
from protolens.record.validate import parse_record
from protolens.store import ingest, open_rw
from protolens.store import lab as labstore
from protolens.store import paths as pathstore
from scripts.devkit.navrecord_builder import make_record


def test_runs_and_host_rtts_round_trip(tmp_path: Path) -> None:
    with closing(open_rw(tmp_path / "s.db", time.time() * 1000)) as conn:
        labstore.ensure_campaign(conn, "c", seed=1, spec={}, version="t", now_ms=0.0)
        pathstore.record_run(conn, "c", 2.0, {"path": "wan", "uplink": "eth9"})
        pathstore.record_run(conn, "c", 1.0, {"path": "wan", "uplink": "eth0"})
        assert [r["network"]["uplink"] for r in pathstore.campaign_runs(conn, "c")] == \
            ["eth0", "eth9"]
        load_id = str(uuid.uuid4())
        rec = make_record(n_requests=4, seed=3, family="h2", source="lab")
        for i, c in enumerate(rec["connections"]):  # set-ups as on a wan path's servers
            c.update(remote_ip=f"198.18.6.{2 + i}", connect_ms=90.0 + i, tls_ms=30.0,
                     setup_ms=90.0 + i, dns_ms=None)
        ingest(conn, parse_record(rec), {"campaign": "c", "arm": "h2", "condition": "wifi",
                                         "repetition": 1, "page": "p", "load_id": load_id},
               now_ms=0.0)
        (nav, conns), = pathstore.load_connections(conn, load_id).items()
        rows = [asdict(h) for h in host_rtts(conns, ProfileRtt(50.0, 50.0, 50.0))]
        assert [(r["host"], r["path_rtt_ms"]) for r in rows] == [("a.test", 10.0),
                                                                 ("b.test", 11.0)]
        pathstore.record_rtts(conn, nav, rows)
        pathstore.record_rtts(conn, nav, rows)  # a retry replaces, never doubles
        stored = pathstore.campaign_rtts(conn, "c")
        assert [(r["host"], r["observed_rtt_ms"], r["path_rtt_ms"]) for r in stored] == \
            [(r["host"], r["observed_rtt_ms"], r["path_rtt_ms"]) for r in rows]
        assert all(r["condition"] == "wifi" and r["arm"] == "h2" for r in stored)
        assert pathstore.campaign_rtts(conn, "other") == []


def test_report_shows_the_profiles_rtt_and_each_hosts_path(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from protolens.cli import main

    db = tmp_path / "s.db"
    with closing(open_rw(db, time.time() * 1000)) as conn:
        labstore.ensure_campaign(conn, "c", seed=1, spec={}, version="t", now_ms=0.0)
        for rep, connect in enumerate((130.0, 120.0), 1):
            load_id = str(uuid.uuid4())
            rec = make_record(n_requests=4, seed=40 + rep, family="h2", source="lab")
            for c in rec["connections"]:
                c.update(remote_ip="198.18.6.2", connect_ms=connect, tls_ms=30.0,
                         setup_ms=connect, dns_ms=None)
            ingest(conn, parse_record(rec), {"campaign": "c", "arm": "h2", "condition": "wifi",
                                             "repetition": rep, "page": "p",
                                             "load_id": load_id}, now_ms=0.0)
            for nav, conns in pathstore.load_connections(conn, load_id).items():
                pathstore.record_rtts(conn, nav, [asdict(h) for h in host_rtts(
                    conns, ProfileRtt(50.0, 50.0, 50.0))])
    out = CliRunner().invoke(main, ["report", "--campaign", "c", "--db", str(db), "--json"])
    assert out.exit_code == 0, out.output
    (row,) = json.loads(out.stdout)
    # the smaller of the two loads' set-ups (120 - 30 = 90 ms): 40 ms over the profile's 50
    assert row["profile_rtt_ms"] == 50.0 and row["path_rtt_ms"] == {"a.test": 40.0,
                                                                    "b.test": 40.0}
    table = CliRunner().invoke(main, ["report", "--campaign", "c", "--db", str(db)])
    assert "profile slower than path (50 > 40 ms)" in table.stdout
