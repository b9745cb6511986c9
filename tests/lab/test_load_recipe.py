"""The one lab load recipe (``lab/load.py``, ``runner.browse`` and ``runner.record``) that a
campaign's loads and each browser side of a fairness repetition share. Fairness loads once
differed in three ways: never flagged when the shaper ran late, the recorder's 2 s quiet instead
of the lab's 500 ms, and no policies stored. These tests pin the shared behaviour: the options a
fairness side runs with, what the recipe hands the browser and the host, and what it stores
(real SQLite, records ingested by the host's own ``ingest``)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from protolens.arms import Arm, parse_lab_arm
from protolens.browser.launch import LoadResult
from protolens.lab import fairness_run
from protolens.lab.campaign import CampaignSpec, Settings
from protolens.lab.fairness import parse_pairs
from protolens.lab.load import LoadSpec, flag_reason, load_row
from protolens.lab.network import DirectNetwork, Lateness
from protolens.lab.runner import (
    LAB_QUIET_MS,
    LATENESS_FLAG_NS,
    Browsed,
    RunOptions,
    Target,
    browse,
    record,
)
from protolens.store import lab as labstore
from protolens.store import open_ro, open_rw
from protolens.store import policy as policystore
from protolens.store.tx import transaction
from scripts.devkit.store_builder import NOW_MS, ingest_all, lab_record

TARGET = Target(url="https://a.test/p/", origins=("a.test:443",))


def options(tmp: Path, **kw: object) -> RunOptions:
    """Options of a run of campaign ``f``, stored as a run stores it before its first load."""
    db = tmp / "lab.db"
    with closing(open_rw(db, NOW_MS)) as conn, transaction(conn):
        labstore.ensure_campaign(conn, "f", seed=1, spec={}, version="t", now_ms=NOW_MS)
    return RunOptions(chromium="/bin/true", extension_dir=tmp / "ext", db=db,
                      scratch=tmp / "scratch", **kw)  # type: ignore[arg-type]


def test_a_fairness_side_runs_with_a_campaign_loads_options(tmp_path: Path) -> None:
    settings = Settings(db=tmp_path / "lab.db", chromium="/usr/bin/chromium",
                        extension=tmp_path / "ext", timeout_s=120.0)
    opts = fairness_run.load_options(settings, tmp_path / "s")
    campaign = CampaignSpec(name="c", pages=("cell-10x435k",))
    assert opts.quiet_ms == campaign.quiet_ms == LAB_QUIET_MS == 200
    assert opts.lateness_flag_ns == LATENESS_FLAG_NS
    assert not opts.keep_profiles and opts.timeout_s == 120.0 and opts.db == settings.db
    spec = fairness_run.FairnessSpec(campaign="f", pairs=tuple(parse_pairs("h2:h3")),
                                     page="cell-10x435k", condition="wifi", reps=1,
                                     server_cc="cubic", testbed="plf", seed=1)
    assert spec.stored()["quiet_ms"] == LAB_QUIET_MS  # the campaign says what its loads ran with


def test_a_late_shaper_flags_the_load_whoever_runs_it() -> None:
    load = LoadSpec(load_id="l", campaign="f", page="p", arm=Arm("h2"), condition="wifi",
                    repetition=3, tags=(("fairness_pair", "h2:h3"),))
    late, fine = Lateness(max_ns=2_500_000, p99_ns=10), Lateness(max_ns=2_000_000, p99_ns=10)
    assert flag_reason(late, LATENESS_FLAG_NS) == \
        "shaper late by up to 2.5 ms (threshold 2.0 ms)"
    assert flag_reason(fine, LATENESS_FLAG_NS) is None  # at the threshold is not over it
    assert flag_reason(None, LATENESS_FLAG_NS) is None  # no shaper, nothing to judge
    row = load_row(load, ok=True, reason=None, started_ms=1.0, wall_ms=2.0, server_cc="cubic",
                   command_line="chromium", lateness=late,
                   flagged=flag_reason(late, LATENESS_FLAG_NS))
    assert (row["flagged"], row["lateness_max_ns"], row["warm"]) == (1, 2_500_000, 0)
    assert load.context("cubic")["fairness_pair"] == "h2:h3"


def test_the_recipe_hands_browser_and_host_the_lab_quiet_tags_and_names(tmp_path: Path) -> None:
    """The browser here is /bin/true, which exits at once: what the recipe gives the browser
    and the host is written before the browser starts, and a browser that ends without a record
    is a failed attempt, stored with its reason, its profile kept for the post-mortem."""
    opts = options(tmp_path, quiet_ms=LAB_QUIET_MS)
    load = LoadSpec(load_id="side-b", campaign="f", page="p", arm=Arm("h3"), condition="wifi",
                    repetition=2, warm=True, tags=(("fairness_pair", "h2:h3"),))
    ran = browse(load, TARGET, DirectNetwork(), opts, host_rules="MAP *.test 198.18.2.4")
    assert not ran.result.ok and "browser exited with code 0" in str(ran.result.reason)
    ctx = json.loads((ran.scratch / "lab-context.json").read_text())
    assert ctx["quiet_ms"] == 200
    assert ctx["navigate"] == [TARGET.url, TARGET.url]  # warm: the page twice
    assert ctx["context"]["fairness_pair"] == "h2:h3" and ctx["context"]["load_id"] == "side-b"
    assert "--host-resolver-rules=MAP *.test 198.18.2.4" in ran.result.argv
    row = record(ran, [], None, None, None, opts)
    assert row["status"] == "failed" and "(attempt 1; browser log: " in str(row["reason"])
    assert ran.scratch.exists()
    with closing(open_ro(opts.db)) as conn:
        stored = conn.execute("SELECT status, flagged FROM loads WHERE load_id = 'side-b'")
        assert [tuple(r) for r in stored] == [("failed", 0)]


def _stored_load(tmp_path: Path, seed: int, arm: str) -> tuple[RunOptions, LoadSpec, Path]:
    """A load whose record the host has stored, and the profile it ran in."""
    opts = options(tmp_path)
    ingest_all(opts.db, [lab_record(seed, "f", "p", "wifi", arm, 1, 900.0)])
    load = LoadSpec(load_id=f"load-{seed}", campaign="f", page="p", arm=parse_lab_arm(arm),
                    condition="wifi", repetition=1)
    scratch = opts.scratch / load.load_id
    scratch.mkdir(parents=True)
    return opts, load, scratch


def _result(ok: bool = True) -> LoadResult:
    return LoadResult(ok=ok, reason=None, wall_s=1.5, argv=["chromium"], log=Path("log"))


def test_a_stored_load_keeps_its_flag_policies_and_upstream_connections(tmp_path: Path) -> None:
    opts, load, scratch = _stored_load(tmp_path, 1, "h2-parallel:2")
    rules = [{"domain": "a.test", "arm": "h2"}]
    report = {"connections": [
        {"id": 1, "host": "a.test", "family": "h2", "local_port": 40001, "remote_ip": "1.2.3.4",
         "remote_port": 443, "requests": 4, "bytes": 3000, "first_epoch_ms": 0.0,
         "last_epoch_ms": 10.0},
        {"id": 2, "host": "a.test", "family": "h2", "local_port": 40002, "remote_ip": "1.2.3.4",
         "remote_port": 443, "requests": 2, "bytes": 1000, "first_epoch_ms": 0.0,
         "last_epoch_ms": 10.0}]}
    flow = {"proto": "tcp", "client_port": 40001, "server_ip": "198.18.0.2", "server_port": 443,
            "bytes_down": 3000, "bytes_up": 100, "packets_down": 3, "packets_up": 2,
            "first_ns": 1, "last_ns": 2}
    # one client port towards two servers (Linux reuses ephemeral ports per destination), and
    # ICMP, which has no ports, to two: each its own flow
    icmp = {**flow, "proto": "icmp", "client_port": 0, "server_port": 0}
    flows = [flow, {**flow, "server_ip": "198.18.0.3"}, icmp, {**icmp, "server_ip": "198.18.0.4"}]
    ran = Browsed(load, _result(), 1.0, rules, scratch)
    row = record(ran, flows, Lateness(max_ns=5_000_000, p99_ns=1), report, "cubic", opts)
    assert row["flagged"] == 1
    with closing(sqlite3.connect(opts.db)) as conn:
        conn.row_factory = sqlite3.Row
        (stored,) = conn.execute("SELECT * FROM loads WHERE load_id = ?", (load.load_id,))
        assert (stored["flagged"], stored["status"], stored["server_cc"]) == (1, "ok", "cubic")
        assert stored["flag_reason"] == "shaper late by up to 5.0 ms (threshold 2.0 ms)"
        assert conn.execute("SELECT count(*) FROM flows WHERE load_id = ?",
                            (load.load_id,)).fetchone()[0] == 4
        (nav,) = [r[0] for r in conn.execute("SELECT id FROM navigations WHERE load_id = ?",
                                             (load.load_id,))]
        policies = policystore.navigation_policy_rows(conn, nav)
        upstream = policystore.upstream_rows(conn, nav)
    assert policies and all(p["arm"] == "h2" for p in policies if p["host"] == "a.test")
    assert [(u["connection_id"], u["share"]) for u in upstream] == [(40001, 0.75), (40002, 0.25)]
    assert not scratch.exists()  # a stored load's profile is removed


def test_a_whole_browser_arm_stores_its_mechanism_and_no_upstream(tmp_path: Path) -> None:
    """The non-proxied side of a fairness pair: the policy per host is the arm's Chromium flags,
    and the proxy's report (the other side's connections) is not put on it."""
    opts, load, scratch = _stored_load(tmp_path, 2, "h3")
    ran = Browsed(load, _result(), 1.0, [], scratch)
    other_side = {"connections": [{"id": 9, "host": "a.test", "family": "h2", "requests": 1,
                                   "bytes": 10, "first_epoch_ms": 0.0}]}
    row = record(ran, [], Lateness(max_ns=1, p99_ns=1), other_side, "cubic", opts)
    assert row["flagged"] == 0
    with closing(sqlite3.connect(opts.db)) as conn:
        conn.row_factory = sqlite3.Row
        (nav,) = [r[0] for r in conn.execute("SELECT id FROM navigations WHERE load_id = ?",
                                             (load.load_id,))]
        policies = policystore.navigation_policy_rows(conn, nav)
        assert policystore.upstream_rows(conn, nav) == []
    assert policies and {p["mechanism"] for p in policies} == {"chromium-flags"}
    assert {p["arm"] for p in policies} == {"h3"}


def test_a_standby_browser_waits_for_the_last_loads_packets_to_drain() -> None:
    """``drain_s``: 1.5 of the profile's largest RTT plus 20 ms, at most 1 s; no profile, 20 ms."""
    from protolens.lab.path_rtt import ProfileRtt
    from protolens.lab.runner import drain_s

    class Shaped(DirectNetwork):
        def profile_rtt(self, condition: str) -> ProfileRtt:
            return {"wifi": ProfileRtt(50.0, 50.0, 50.0),
                    "slow": ProfileRtt(900.0, 600.0, 1200.0)}[condition]

    assert abs(drain_s(Shaped(), "wifi") - 0.095) < 1e-9
    assert drain_s(Shaped(), "slow") == 1.0
    assert abs(drain_s(DirectNetwork(), "none") - 0.02) < 1e-9

