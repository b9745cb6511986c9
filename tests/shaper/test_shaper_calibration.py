"""The path-latency calibration (issue 13 target 4), pure parts: ping output to samples, each
probe's median minus its configured RTT, the interpolation between probes, and the delay taken
off a profile's config."""

from __future__ import annotations

import pytest

from protolens.shaper import load_profile
from protolens.shaper.calibration import (
    Calibration,
    CalibrationError,
    Probe,
    ping_rtts_ms,
    probe,
    probe_config,
)
from protolens.shaper.config import shaper_config

PING = """PING 198.18.2.2 (198.18.2.2) 56(84) bytes of data.
64 bytes from 198.18.2.2: icmp_seq=1 ttl=63 time=2.51 ms
64 bytes from 198.18.2.2: icmp_seq=2 ttl=63 time=2.470 ms
64 bytes from 198.18.2.2: icmp_seq=3 ttl=63 time=9.9 ms

--- 198.18.2.2 ping statistics ---
3 packets transmitted, 3 received, 0% packet loss, time 20ms
rtt min/avg/max/mdev = 2.470/4.960/9.900/3.5 ms
"""


def cal(*points: tuple[int, int]) -> Calibration:
    return Calibration(tuple(Probe(r, 60, r + p, r + p, r + p, p) for r, p in points), "t")


def test_ping_output_gives_one_sample_per_reply() -> None:
    assert ping_rtts_ms(PING) == [2.51, 2.47, 9.9]
    assert ping_rtts_ms("ping: connect: Network is unreachable\n") == []


def test_a_probe_is_its_median_minus_the_configured_rtt() -> None:
    rtts = [2.4] * 30 + [2.5] * 40 + [30.0] * 10  # a stall must not move the result
    p = probe(2_000_000, rtts, 80)
    assert p.median_rtt_ns == 2_500_000 and p.path_rtt_ns == 500_000
    assert p.replies == 80 and p.mean_rtt_ns > p.median_rtt_ns and p.p90_rtt_ns == 30_000_000
    assert probe(2_000_000, [1.9] * 60, 60).path_rtt_ns == 0  # never negative


def test_too_few_replies_is_a_one_line_error() -> None:
    with pytest.raises(CalibrationError) as e:
        probe(20_000_000, [2.5] * 10, 60)
    assert str(e.value) == ("path latency probe at 20 ms: 10 of 60 pings answered (need 40); "
                            "is the shaper forwarding?")


def test_interpolation_between_probes_and_flat_beyond() -> None:
    c = cal((2_000_000, 100_000), (20_000_000, 190_000))
    assert c.path_rtt_ns(1_000_000) == 100_000 and c.path_rtt_ns(2_000_000) == 100_000
    assert c.path_rtt_ns(11_000_000) == 145_000
    assert c.path_rtt_ns(20_000_000) == 190_000 and c.path_rtt_ns(300_000_000) == 190_000
    assert Calibration.from_dict({"probes": [vars(p) for p in c.probes],
                                  "measured_at": "t"}) == c


def test_probe_config_splits_the_rtt() -> None:
    lines = probe_config(2_000_001).splitlines()
    assert "at 0 up delay_ns=1000000" in lines and "at 0 down delay_ns=1000001" in lines


def test_calibration_takes_the_path_rtt_off_each_direction() -> None:
    fiber = load_profile("fiber")
    plain = shaper_config(fiber)
    lines = shaper_config(fiber, cal((2_000_000, 481), (20_000_000, 481))).splitlines()
    up = next(x for x in lines if x.startswith("at 0 up "))
    down = next(x for x in lines if x.startswith("at 0 down "))
    assert "delay_ns=2499760" in up.split() and "delay_ns=2499759" in down.split()
    assert [x for x in lines if "delay_ns" not in x] == [
        x for x in plain.splitlines() if "delay_ns" not in x]


def test_calibration_follows_scheduled_delays_and_never_goes_below_zero() -> None:
    c = cal((2_000_000, 100_000), (20_000_000, 400_000))
    lines = shaper_config(load_profile("slowdown"), c).splitlines()
    # static 5 ms RTT: 100 + 3/18 * 300 = 150 us off; the first step, 20 ms RTT: 400 us off
    assert "at 0 up rate_bps=80000000 delay_ns=2425000 loss=0.0" in lines
    assert "at 100000000 down delay_ns=9800000" in lines
    clean = shaper_config(load_profile("clean"), c)
    assert "delay_ns=-" not in clean and "delay_ns=0" in clean
