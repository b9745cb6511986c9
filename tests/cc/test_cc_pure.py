"""Pure parts of the CC fingerprint: Igor's packet size and RTT padding, curl's results and
errors, the website step, the Fig. 2(c) shares and the Table 1 confusion matrix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protolens.cc import bottleneck, igor
from protolens.cc.curl import WRITE_OUT, ProbeError, content_length, parse_result, parse_target
from protolens.cc.share import nav_class, page_shares
from protolens.cc.website import top_hosts


@pytest.mark.parametrize(("size", "packet"), [(None, 500), (99_999, 100), (100_000, 500),
                                              (1_000_000, 500), (1_000_001, 1500)])
def test_packet_size_rule(size: int | None, packet: int) -> None:
    assert bottleneck.packet_bytes_for(size) == packet


@pytest.mark.parametrize(("measured", "padded"), [(0.3, 100), (30, 100), (100, 100),
                                                  (113, 150), (150, 150), (150.1, 200)])
def test_rtt_padding(measured: float, padded: int) -> None:
    assert bottleneck.padded_rtt_ms(measured) == padded


def test_profile_is_the_same_queue_in_time_at_every_packet_size() -> None:
    for pkt in (100, 500, 1500):
        link = bottleneck.profile(pkt, 100).link
        assert link.buffer_bytes == 100 * pkt
        assert link.buffer_bytes * 8 / link.rate_down_bps == pytest.approx(0.4)
        assert link.rate_up_bps == 0 and link.loss_down == 0
        assert link.delay_up_ns + link.delay_down_ns == 100_000_000
    assert bottleneck.advmss(500) == 460
    with pytest.raises(ValueError):
        bottleneck.advmss(40)


@pytest.mark.parametrize("url", ["ftp://a.test/x", "file:///etc/passwd", "a.test/x",
                                 "https://", "http://a.test:99999/"])
def test_bad_urls_are_one_line_errors(url: str) -> None:
    with pytest.raises(ProbeError) as e:
        parse_target(url)
    assert "\n" not in str(e.value)


def test_target_defaults_the_port() -> None:
    assert parse_target("https://a.test/x").port == 443
    assert parse_target("http://a.test/x").port == 80


def _out(**kw: object) -> str:
    return "".join(f"{k}={v}\n" for k, v in kw.items())


@pytest.mark.parametrize(("rc", "needle"), [(47, "too many redirects"), (18, "closed the "
                         "connection before"), (7, "cannot connect"), (6, "resolve")])
def test_curl_exit_codes_become_reasons(rc: int, needle: str) -> None:
    with pytest.raises(ProbeError) as e:
        parse_result(rc, _out(http_code=0, errormsg="x"), "curl: (x) y")
    assert needle in str(e.value) and f"curl exit {rc}" in str(e.value)


def test_curl_http_errors_and_success() -> None:
    with pytest.raises(ProbeError, match="HTTP 404"):
        parse_result(0, _out(http_code=404), "")
    info, hdrs = parse_result(0, _out(http_code=200, size_download=160000, local_port=40000)
                              + "\n@@protolens-headers@@\n"
                              + json.dumps({"content-length": ["160000"]}), "")
    assert info["size_download"] == "160000" and content_length(hdrs) == 160000
    assert "%{local_port}" in WRITE_OUT and "json" not in WRITE_OUT


def test_top_hosts_by_bytes_and_only_http() -> None:
    rows = [{"host": "b", "bytes": 10, "share": 0.1, "biggest_url": "https://b/x",
             "biggest_bytes": 9},
            {"host": "a", "bytes": 80, "share": 0.8, "biggest_url": "https://a/big",
             "biggest_bytes": 70},
            {"host": "c", "bytes": 10, "share": 0.1, "biggest_url": "data:x",
             "biggest_bytes": 10}]
    got = top_hosts(rows, 2)
    assert [t.host for t in got] == ["a", "b"] and got[0].url == "https://a/big"
    with pytest.raises(ValueError):
        top_hosts(rows, 0)


def test_fig2c_shares_and_nav_class() -> None:
    rows = [{"page": "p", "bytes": 100, "delay_bytes": 60, "loss_bytes": 20},
            {"page": "p", "bytes": 100, "delay_bytes": 40, "loss_bytes": 0},
            {"page": "q", "bytes": 0, "delay_bytes": 0, "loss_bytes": 0}]
    shares = {r["page"]: r for r in page_shares(rows)}
    assert shares["p"]["delay_based_share"] == 0.5 and shares["p"]["loss_based_share"] == 0.1
    assert shares["p"]["unlabelled_share"] == 0.4 and shares["p"]["navigations"] == 2
    assert shares["q"]["delay_based_share"] is None
    assert [nav_class(r) for r in rows] == ["delay-based", "delay-based", "unlabelled"]
    assert nav_class({"delay_bytes": 5, "loss_bytes": 5}) == "mixed"
    assert nav_class({"delay_bytes": 1, "loss_bytes": 5}) == "loss-based"


def test_table1_rows_and_confusion_from_recorded_probes() -> None:
    fixtures = sorted((Path(__file__).parent / "fixtures").glob("*.json"))
    results = [json.loads(p.read_text())["row"] for p in fixtures]
    rows = igor.table_rows(results)
    m = igor.confusion(rows)
    assert sum(sum(v.values()) for v in m.values()) == len(rows)
    right, total = igor.accuracy(rows)
    assert total == len(rows) and right == sum(m[t][t] for t in m)
    hy = next(r for r in rows if r["server_cc"] == "cubic" and r["size_kb"] == 320
              and r["mtu"] == 500)
    assert (hy["paper_max_queue_pct"], hy["paper_time_to_max_s"]) == (80, 6.4)
    assert next(r for r in rows if r["server_cc"] == "reno")["paper_max_queue_pct"] is None
    assert any("labels right" in line for line in igor.summary_lines(rows))
