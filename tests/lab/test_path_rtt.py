"""The path's own share (``lab/path_rtt.py``, pure): the profile's RTT from its link and
schedule, each host's base RTT from its connections' set-up, and the sentence that says which of
the two dominates."""

from __future__ import annotations

import pytest

from protolens.lab.path_rtt import (
    ProfileRtt,
    host_rtts,
    one_round_trip,
    profile_rtt,
    profile_settings,
    rtt_note,
    wan_refusal,
)
from protolens.shaper import load_profile


def test_a_static_profile_adds_its_rtt_and_a_schedule_its_range() -> None:
    assert profile_rtt(load_profile("wifi")) == ProfileRtt(50.0, 50.0, 50.0)
    slow = profile_rtt(load_profile("slowdown"))  # 5 ms, +15 ms every 100 ms up to 300 ms
    assert (slow.low_ms, slow.high_ms) == (5.0, 300.0)
    assert 5.0 < slow.rtt_ms < 300.0


def test_profile_settings_name_the_link_and_the_rtt() -> None:
    s = profile_settings(load_profile("wifi"))
    assert (s["name"], s["rtt_ms"], s["link"]["rate_down_bps"]) == ("wifi", 50.0, 7_000_000)
    assert s["ecmp"] is None and s["schedule"] is None
    cell = profile_settings(load_profile("cell-poor"))  # RTT re-drawn in 100-180 ms from t=0
    assert cell["schedule"]["kind"] == "cellular"
    assert 100 <= cell["rtt_range_ms"][0] <= cell["rtt_ms"] <= cell["rtt_range_ms"][1] <= 180


def test_only_ecmp_with_cross_traffic_is_refused_on_real_sites() -> None:
    refusal = wan_refusal(load_profile("ecmp-congested"))
    assert refusal is not None and "cannot apply to real sites" in refusal
    assert wan_refusal(load_profile("ecmp")) is None
    assert wan_refusal(load_profile("slowdown")) is None


@pytest.mark.parametrize(("conn", "expected"), [
    ({"family": "h2", "connect_ms": 80.0, "tls_ms": 30.0, "remote_ip": "198.18.6.2"},
     (50.0, "tcp")),
    ({"family": "h3", "connect_ms": 62.0, "tls_ms": None, "remote_ip": "198.18.6.2"},
     (62.0, "quic")),
    ({"family": "h2", "connect_ms": 3.0, "tls_ms": 2.0, "remote_ip": "127.0.0.1"}, None),
    ({"family": "h2", "connect_ms": 80.0, "tls_ms": 30.0, "upstream": True}, None),
    ({"family": "h1", "connect_ms": None, "tls_ms": None}, None),
    ({"family": "h1", "connect_ms": 40.0, "tls_ms": 40.0}, None),
])
def test_one_round_trip_of_a_set_up(conn: dict[str, object],
                                    expected: tuple[float, str] | None) -> None:
    assert one_round_trip(conn) == expected


def test_a_hosts_base_rtt_is_its_smallest_set_up_and_the_rest_is_the_paths() -> None:
    conns = [
        {"host": "a.example", "family": "h1", "connect_ms": 90.0, "tls_ms": 30.0},
        {"host": "a.example", "family": "h1", "connect_ms": 85.0, "tls_ms": 30.0},
        {"host": "b.example", "family": "h3", "connect_ms": 70.0},
        {"host": "proxy", "family": "h2", "connect_ms": 1.0, "tls_ms": 0.5,
         "remote_ip": "127.0.0.1"},
    ]
    rows = host_rtts(conns, ProfileRtt(50.0, 50.0, 50.0))
    assert [(r.host, r.observed_rtt_ms, r.path_rtt_ms, r.source, r.connections)
            for r in rows] == [("a.example", 55.0, 5.0, "tcp", 2),
                               ("b.example", 70.0, 20.0, "quic", 1)]


def test_a_hosts_base_rtt_is_its_first_connections_not_a_later_clamped_one() -> None:
    """A CI run's h1 load on the wan path (50 ms profile), as stored: the page host's second
    connection, whose connect another request's job began, read 47.7 ms (Chromium clamps times
    before a request's start to it); its first, the document's, 53.3. Three connections opened
    together for img.example.net: the first one's set-up."""
    conns = [
        {"host": "www.example.com", "family": "h1", "first_ms": 255.593, "connect_ms": 103.045,
         "tls_ms": 55.35},
        {"host": "www.example.com", "family": "h1", "first_ms": 2.565, "connect_ms": 120.206,
         "tls_ms": 66.914},
        {"host": "img.example.net", "family": "h1", "first_ms": 255.5, "connect_ms": 112.401,
         "tls_ms": 57.492},
        {"host": "img.example.net", "family": "h1", "first_ms": 255.126, "connect_ms": 110.68,
         "tls_ms": 55.958},
        {"host": "img.example.net", "family": "h1", "first_ms": 255.647, "connect_ms": 115.026,
         "tls_ms": 59.961},
    ]
    rows = host_rtts(conns, ProfileRtt(50.0, 50.0, 50.0))
    assert [(r.host, r.observed_rtt_ms, r.path_rtt_ms, r.connections) for r in rows] == [
        ("img.example.net", 54.722, 4.722, 3), ("www.example.com", 53.292, 3.292, 2)]


def test_the_note_says_which_dominates() -> None:
    assert "path slower than profile" in rtt_note(50.0, 80.0)
    assert "profile slower than path" in rtt_note(50.0, 3.0)
    assert rtt_note(None, 3.0) == ""


def test_the_path_table_takes_each_hosts_smallest_set_up_over_the_loads() -> None:
    from protolens.lab.path_rtt import by_cell, path_table

    def row(host: str, observed: float, profile: float = 50.0) -> dict[str, object]:
        return {"page": "https://a.example/", "condition": "wifi", "host": host,
                "observed_rtt_ms": observed, "profile_rtt_ms": profile, "source": "tcp"}

    table = path_table([row("a.example", 56.0), row("a.example", 51.5), row("far.example", 140)])
    assert [(r["host"], r["path_rtt_ms"], r["loads"]) for r in table] == [
        ("a.example", 1.5, 2), ("far.example", 90.0, 1)]
    assert table[0]["note"].startswith("profile slower than path")
    assert table[1]["note"].startswith("path slower than profile")
    assert by_cell(table) == {("https://a.example/", "wifi"): {
        "profile_rtt_ms": 50.0, "path_rtt_ms": {"a.example": 1.5, "far.example": 90.0}}}
