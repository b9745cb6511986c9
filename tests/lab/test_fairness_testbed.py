"""lab fairness on the real testbed (root, namespaces, caddy, shaper, Chromium): the sides'
bytes against the shaper's own per-flow counters, two identical arms sharing equally, and a bulk
download attributed to its side (its bytes against the files it fetched)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from protolens.lab import campaign as camp
from protolens.lab.fairness import START_SPREAD_MS, Pair, parse_pairs, summary_rows
from protolens.lab.fairness_run import START_TRIES_MORE
from protolens.paths import extension_dir
from protolens.store import fairness as fstore
from protolens.store import open_ro
from tests.testbed.conftest import lab_available

pytestmark = [pytest.mark.netns, pytest.mark.e2e]
NAME = "pfair"
PAGE = "cell-10x435k"
"""The identical pair's page: 4.35 MB per side, about 10 s of a shared 7 Mbit/s link."""
BULK_PAGE = "conext-6x2300k"
"""The bulk pair's: its checks (attribution, connections, storing) hold for any page, and half
the bytes take about 5 s less per repetition (cell-10x435k: 89 s for the module's set-up, this:
about 79; the identical pair's shares stay on the page RESEARCH.md measured them on)."""
BULK_REPS = 1
"""The bulk pair's checks (attribution, connections, storing) hold for each repetition. One: a
try takes about 14 s, and until its bulk side waited for the browser's navigation
(``fairness.BULK_DELAY_MS``) its browser side mostly started over 30 ms after it, each repetition
run twice more (the module's set-up took 114-115 s in two CI runs with 2, 2026-11-30)."""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    import os

    from protolens.lab import fairness_run
    from protolens.testbed import Testbed

    Testbed.down(NAME)
    tmp = tmp_path_factory.mktemp("fair")
    db = tmp / "fair.db"
    reps: list[tuple[Pair, int, list[dict[str, Any]], list[dict[str, Any]]]] = []
    settings = camp.Settings(db=db, chromium="/usr/bin/chromium",
                             extension=extension_dir(os.environ), timeout_s=90,
                             scratch=tmp / "scratch")
    outcomes = []
    # the identical pair's shares need its 4 repetitions; the bulk pair's checks hold for each
    # repetition (BULK_REPS): two runs into one campaign (the second adds its pair's rows to the
    # first's)
    for pairs, n, page in (("h2:h2", 4, PAGE), ("bulk:h1", BULK_REPS, BULK_PAGE)):
        spec = fairness_run.FairnessSpec(campaign="ft", pairs=tuple(parse_pairs(pairs)),
                                         page=page, condition="wifi", reps=n, server_cc="cubic",
                                         testbed=NAME, seed=1)
        outcomes.append(fairness_run.run(
            spec, settings, on_rep=lambda p, r, rows, flows: reps.append((p, r, rows, flows))))
    with open_ro(db) as conn:
        rows = fstore.fairness_rows(conn, "ft")
        navs = {r[0]: r[1] for r in conn.execute(
            "SELECT n.load_id, sum(q.encoded_bytes) FROM navigations n JOIN requests q "
            "ON q.navigation_id = n.id GROUP BY n.load_id")}
        conns = {r[0]: r[1] for r in conn.execute(
            "SELECT n.load_id, s.connections FROM navigations n "
            "JOIN navigation_summary s ON s.id = n.id")}
    from protolens.pages import ensure_corpus
    manifest = next(m for m in ensure_corpus(tmp / "site", [BULK_PAGE]) if m.name == BULK_PAGE)
    yield {"outcomes": outcomes, "reps": reps, "rows": rows, "navs": navs, "conns": conns,
           "manifest": manifest, "db": db, "pcaps": tmp / "scratch" / "fairness-ft"}
    Testbed.down(NAME)


def test_every_repetition_ran_and_both_sides_loaded(run: dict[str, Any]) -> None:
    for outcome, n in zip(run["outcomes"], (4, BULK_REPS), strict=True):
        assert outcome.repetitions == n and outcome.failed == 0, outcome.failures
    assert len(run["rows"]) == 2 * (4 + BULK_REPS)


def test_side_bytes_sum_to_the_shapers_own_count_within_2_percent(run: dict[str, Any]) -> None:
    for pair, rep, rows, flows in run["reps"]:
        ips = {r["server_ip"] for r in rows}
        shaper = sum(int(f["bytes_down"]) for f in flows if f.get("server_ip") in ips)
        ours = sum(int(r["bytes"]) for r in rows)
        assert shaper > 4_000_000, (pair, rep)
        assert abs(ours - shaper) / shaper < 0.02, (pair, rep, ours, shaper)
        for r in rows:  # each side against its own flows too
            side = sum(int(f["bytes_down"]) for f in flows if f.get("server_ip") == r["server_ip"])
            assert abs(int(r["bytes"]) - side) <= 0.02 * side, (pair, rep, r["side"])


def test_both_sides_start_together_on_the_wire(run: dict[str, Any]) -> None:
    """Each repetition's two sides open their first connection at the same moment (the common
    start, lab/fairness_run.py START_LEAD_MS): within 30 ms, under one round trip (50 ms), so
    neither side's window grows before the other's starts, or else the repetition was run again
    as many times as the product says (launched side by side without it,
    the sides started 6-137 ms apart and the leader took 0.64-0.69). The stored ``start_ms``
    (from the shaper's flow counters: a side's first packet as the shaper read it) against the
    router's capture (its first packet from the server, after the shaper released the SYN up and
    the SYN-ACK down), within 2 ms plus twice the lateness the shaper reported for the repetition
    (each release may be that late; a CI run on a busy machine, the shaper up to 18 ms late,
    read 14.7 ms where the wire gave 25.3)."""
    from protolens.lab.pcap import packets

    by_rep = {(r["pair"], r["repetition"]): [] for r in run["rows"]}
    for r in run["rows"]:
        by_rep[(r["pair"], r["repetition"])].append(r)
    assert len(by_rep) == 4 + BULK_REPS
    with open_ro(run["db"]) as conn:
        late_ms = {r[0]: r[1] / 1e6 for r in conn.execute(
            "SELECT load_id, lateness_max_ns FROM loads WHERE campaign = 'ft'")}
    for (pair, rep), rows in by_rep.items():
        pcap = run["pcaps"] / f"rep-{pair.replace(':', '_')}-{rep}.pcap"
        pkts = list(packets(pcap.read_bytes()))
        firsts = [min(p.ts_ns for p in pkts if r["server_ip"] in (p.src, p.dst)) for r in rows]
        # every pair here has a browser side, whose load holds the repetition's lateness
        slack = 2.0 + 2 * max(late_ms[r["load_id"]] for r in rows if r["load_id"])
        for r, first in zip(rows, firsts, strict=True):
            wire_ms = (first - min(firsts)) / 1e6
            assert r["start_ms"] is not None and abs(r["start_ms"] - wire_ms) <= slack, \
                (r, wire_ms, slack)
        assert min(r["start_ms"] for r in rows) == 0.0
        # apart by more than 30 ms, the repetition was run again as often as the product says,
        # and the last try kept (lab/fairness_run.py started_together): before the bulk side
        # waited for the browser's navigation, the bulk pair's browser side started 26-61 ms
        # after it, over 30 in 9 of 11 tries (2026-11-30, by hand), and all three tries of a CI
        # run's were apart (45.8 ms kept); since, 0 of 5 (1-21 ms)
        lead = max(r["start_ms"] for r in rows)
        if lead > START_SPREAD_MS:
            said = [why for o in run["outcomes"] for why in o.rerun
                    if why.startswith(f"{pair} rep {rep}: ")]
            assert len(said) == START_TRIES_MORE, (pair, rep, lead, said)
    # and the common start works: at least half the repetitions started together (without it
    # they started 6-137 ms apart; on the busiest CI run seen, 5 of 6 did)
    leads = [max(r["start_ms"] for r in rows) for rows in by_rep.values()]
    assert 2 * sum(lead <= START_SPREAD_MS for lead in leads) >= len(leads), leads


def test_two_identical_arms_share_equally(run: dict[str, Any]) -> None:
    """Side a's mean share over the 4 repetitions of two identical h2 sides, within 0.5 +- 0.15
    (the mean the product prints, checked against the rows). Not a 95% interval test: on this
    drop-tail link the shares of one run's repetitions are not independent draws. Started
    together, repetitions ranged 0.30-0.70, five runs of 4 averaged 0.45-0.50 and a run of 8
    0.51; three CI runs failed a 95% interval with side a at 0.41-0.45 (docs/RESEARCH.md). The
    band catches what the harness can get wrong (a side that starts a round trip late took
    0.64-0.69; the start itself is held by the test above, attribution by the shaper's bytes)."""
    summary = [s for s in summary_rows(run["rows"]) if s["pair"] == "h2:h2"]
    a = next(s for s in summary if s["side"] == "a")
    assert a["n"] == 4
    shares = [r["share"] for r in run["rows"] if r["pair"] == "h2:h2" and r["side"] == "a"]
    assert a["share_mean"] == pytest.approx(float(np.mean(shares)))
    assert 0.35 <= a["share_mean"] <= 0.65, (shares, a)


def test_a_bulk_flow_is_attributed_to_its_side(run: dict[str, Any]) -> None:
    """The bulk side's bytes are its page's files (their sizes from the corpus manifest) plus
    HTTP, TLS, TCP and IP overhead; the browser side's are its record's wire bytes plus TLS, TCP
    and IP overhead."""
    body = sum(o.bytes for o in run["manifest"].objects)
    seen = 0
    for r in run["rows"]:
        if r["pair"] != "bulk:h1":
            continue
        seen += 1
        if r["arm"] == "bulk":
            assert r["load_id"] is None
            assert body <= r["bytes"] <= body * 1.08, (body, r["bytes"])
        else:
            encoded = run["navs"][r["load_id"]]
            assert encoded <= r["bytes"] <= encoded * 1.08, (encoded, r["bytes"])
    assert seen == 2 * BULK_REPS


def test_each_sides_connections_are_the_ones_its_browser_recorded(run: dict[str, Any]) -> None:
    """The wire count (the shaper's flows that carried payload) against the extension's record:
    h1's six connections, h2's one; bare one-packet flows once made h1's count 7 or 8, and a
    connection with a handshake and no request made an h2 side 2."""
    seen = set()
    for r in run["rows"]:
        if r["load_id"] is None:
            continue
        assert r["connections"] == run["conns"][r["load_id"]], r
        seen.add((r["arm"], r["connections"]))
    assert {a for a, _ in seen} == {"h1", "h2"}
    assert any(a == "h1" and c > 1 for a, c in seen), seen


def test_each_browser_side_is_stored_as_a_campaign_load_is(run: dict[str, Any]) -> None:
    """The lab load recipe a campaign uses: flagged exactly when the shaper ran late, and the
    policy each host ran under stored with the side's navigation."""
    from protolens.lab.runner import LATENESS_FLAG_NS
    with open_ro(run["db"]) as conn:
        loads = [dict(r) for r in conn.execute(
            "SELECT l.load_id, l.flagged, l.lateness_max_ns, l.arm, count(p.host) AS hosts "
            "FROM loads l JOIN navigations n ON n.load_id = l.load_id "
            "LEFT JOIN navigation_policies p ON p.navigation_id = n.id "
            "WHERE l.campaign = 'ft' GROUP BY l.load_id")]
    # 4 h2:h2 repetitions x 2 sides + the h1 side of each bulk:h1 one, and the browser sides of
    # every try run again (sides started apart): a try not kept stays stored as a lab load
    rerun = [r for o in run["outcomes"] for r in o.rerun]
    again = [r.split(" rep ")[0] for r in rerun]
    assert len(loads) == 8 + BULK_REPS + 2 * again.count("h2:h2") + again.count("bulk:h1"), \
        rerun
    kept = {r["load_id"] for r in run["rows"] if r["load_id"]}
    assert len(kept) == 8 + BULK_REPS and kept <= {load["load_id"] for load in loads}
    for load in loads:
        assert load["flagged"] == int(load["lateness_max_ns"] > LATENESS_FLAG_NS), load
        assert load["hosts"] >= 1, load
