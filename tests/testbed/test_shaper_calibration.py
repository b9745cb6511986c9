"""The path-latency calibration (issue 13 target 4), pure parts: ping output to samples, the
median minus the probe's configured RTT, and the delay taken off a profile's config."""

from __future__ import annotations

import pytest

from protolens.shaper import load_profile
from protolens.shaper.calibration import (
    PROBE_DELAY_NS,
    CalibrationError,
    calibrate,
    ping_rtts_ms,
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


def test_ping_output_gives_one_sample_per_reply() -> None:
    assert ping_rtts_ms(PING) == [2.51, 2.47, 9.9]
    assert ping_rtts_ms("ping: connect: Network is unreachable\n") == []


def test_the_path_rtt_is_the_median_minus_the_probe_rtt() -> None:
    rtts = [2.4] * 30 + [2.5] * 40 + [30.0] * 10  # a stall must not move the result
    cal = calibrate(rtts, "2026-11-24T12:00:00+00:00")
    assert cal.probe_rtt_ns == 2 * PROBE_DELAY_NS == 2_000_000
    assert cal.median_rtt_ns == 2_500_000 and cal.path_rtt_ns == 500_000
    assert cal.replies == 80 and cal.mean_rtt_ns > cal.median_rtt_ns
    assert cal.p90_rtt_ns == 30_000_000
    assert calibrate([1.9] * 60, "t").path_rtt_ns == 0  # never negative


def test_too_few_replies_is_a_one_line_error() -> None:
    with pytest.raises(CalibrationError) as e:
        calibrate([2.5] * 10, "t")
    assert str(e.value) == ("path latency probe: 10 of 100 pings answered (need 50); is the "
                            "shaper forwarding?")


def test_probe_config_holds_packets_each_way() -> None:
    assert f"at 0 both delay_ns={PROBE_DELAY_NS}" in probe_config().splitlines()


def test_calibration_takes_the_path_rtt_off_each_direction() -> None:
    fiber = load_profile("fiber")
    plain = shaper_config(fiber)
    assert "at 0 up" in plain and "delay_ns=2500000" in plain
    lines = shaper_config(fiber, path_rtt_ns=481).splitlines()
    up = next(x for x in lines if x.startswith("at 0 up "))
    down = next(x for x in lines if x.startswith("at 0 down "))
    assert "delay_ns=2499760" in up.split() and "delay_ns=2499759" in down.split()
    # the rest of the config is unchanged
    assert [x for x in lines if "delay_ns" not in x] == [
        x for x in plain.splitlines() if "delay_ns" not in x]


def test_calibration_reaches_scheduled_delays_and_never_goes_below_zero() -> None:
    slow = shaper_config(load_profile("slowdown"), path_rtt_ns=400_000)
    lines = slow.splitlines()
    assert "at 0 up rate_bps=80000000 delay_ns=2300000 loss=0.0" in lines  # 5 ms RTT, static
    assert "at 100000000 down delay_ns=9800000" in lines  # first step: 20 ms RTT
    clean = shaper_config(load_profile("clean"), path_rtt_ns=400_000)
    assert "delay_ns=-" not in clean and "delay_ns=0" in clean
