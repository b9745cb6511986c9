"""Pure pieces of the testbed: ss parsing on captured output, names, the ECMP hash, the
Caddyfile, the shaper's truth rows."""

from __future__ import annotations

from pathlib import Path

from protolens.shaper.ecmp import ecmp_path, ip_int
from protolens.shaper.summary import truth_rows
from protolens.testbed.caddy import caddyfile
from protolens.testbed.links import hosts_file
from protolens.testbed.tcpstats import MARK, parse_ss, parse_stream
from protolens.testbed.topology import Topology, cross_ports, valid_name

FIX = Path(__file__).parent / "fixtures"


def test_parse_ss_on_captured_output() -> None:
    rows = parse_ss((FIX / "ss-tin.txt").read_text())
    assert len(rows) == 6
    first = rows[0]
    assert first["local_port"] == 443 and first["peer_port"] == 52172
    assert first["cc"] == "cubic"
    assert first["cwnd"] == 20 and first["ssthresh"] == 17
    assert first["rtt_ms"] == 96.327 and first["rttvar_ms"] == 2.417
    assert first["retrans"] == 0 and first["retrans_total"] == 23
    assert first["delivery_rate_bps"] == 2213128.0
    assert first["bytes_retrans"] == 33304 and first["minrtt_ms"] == 50.259
    assert rows[1]["lost"] == 1


def test_parse_ss_without_header_or_state_column() -> None:
    rows = parse_ss((FIX / "ss-tin-established.txt").read_text())
    assert rows and all(r["local_port"] == 443 and "cwnd" in r for r in rows)


def test_parse_ss_units_and_garbage() -> None:
    text = ("ESTAB 0 0 10.0.0.1:443 10.0.0.2:5000\n\t bbr rtt:1.5/0.2 cwnd:7 send 2.5Mbps "
            "delivery_rate 12Kbps retrans:bad/x\nnonsense\n\t junk:: :\n")
    rows = parse_ss(text)
    assert rows[0]["send_bps"] == 2.5e6 and rows[0]["delivery_rate_bps"] == 12e3
    assert rows[0]["cc"] == "bbr" and rows[0]["cwnd"] == 7 and "retrans" not in rows[0]
    assert parse_ss("") == []


def test_parse_stream_keeps_server_sockets_with_timestamps() -> None:
    body = (FIX / "ss-tin-established.txt").read_text()
    text = f"{MARK}100\n{body}{MARK}200\n"
    rows = parse_stream(text)
    assert {r["t_ns"] for r in rows} == {100}
    assert len(rows) == len(parse_ss(body))


def test_names() -> None:
    t = Topology("pl")
    assert t.namespaces == ("pl-cli", "pl-rtr", "pl-srv")
    assert max(len(x) for x in (t.cli_if, t.rtr_cli_if, t.rtr_srv_if, t.srv_if)) <= 15
    assert valid_name("pl") and valid_name("a1234567")
    assert not valid_name("") and not valid_name("a12345678") and not valid_name("Pl")
    assert not valid_name("p-l") and not valid_name("1pl")


def test_ecmp_hash_and_cross_ports() -> None:
    # (SA ^ DA ^ SP ^ DP ^ PT) mod 2: only the low bits matter.
    assert ecmp_path("0.0.0.0", 1, "0.0.0.0", 0, proto=0) == 1
    assert ecmp_path("198.18.1.2", 5000, "198.18.2.2", 443) != ecmp_path(
        "198.18.1.2", 5001, "198.18.2.2", 443)
    t = Topology("pl")
    for path in (0, 1):
        pairs = cross_ports(t, 8, path)
        assert len({c for c, _ in pairs}) == 8
        # ecmp_path is held to the C shaper's sh_ecmp_path by the shared vectors
        # (native-host/shaper/testdata/ecmp_vectors.json, tests/shaper/test_shaper_ecmp.py and
        # test_inputs.c), so this checks the ports against the hash the shaper applies.
        assert pairs and all(
            ecmp_path(t.cross_cli_ip, c, t.cross_srv_ip, s) == path for c, s in pairs)


def test_cross_traffic_address_matches_the_shaper_config() -> None:
    from protolens.shaper import load_profile
    from protolens.shaper.config import shaper_config

    text = shaper_config(load_profile("ecmp-congested"))
    assert f"cross_ip={ip_int(Topology('pl').cross_cli_ip)}" in text


def test_caddyfile_serves_every_host_with_three_protocols() -> None:
    text = caddyfile(["a.test", "b.test"], Path("/c.pem"), Path("/k.pem"), Path("/site"),
                     Path("/static"), Path("/log.json"))
    assert "a.test:443, b.test:443 {" in text
    assert "protocols h1 h2 h3" in text and "format json" in text
    assert "tls /c.pem /k.pem" in text and "root * /site" in text


def test_truth_rows_names_protocols_and_sorts() -> None:
    stats = {"flows": [
        {"proto": 17, "client_port": 9, "first_ns": 5},
        {"proto": 6, "client_port": 7, "first_ns": 1},
    ]}
    rows = truth_rows(stats)
    assert [r["proto"] for r in rows] == ["tcp", "udp"]


def test_hosts_file_puts_bbr_hosts_on_the_second_address() -> None:
    t = Topology("x")
    text = hosts_file(t, ["a.test", "b.test", "c.test"], ["b.test"])
    assert text.splitlines() == ["127.0.0.1 localhost", f"{t.srv_ip} a.test c.test",
                                 f"{t.bbr_srv_ip} b.test"]
    assert hosts_file(t, ["a.test"], []).splitlines()[1:] == [f"{t.srv_ip} a.test"]
