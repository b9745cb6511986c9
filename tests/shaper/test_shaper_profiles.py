"""Profiles: every built-in parses and documents its source; validation errors are one line;
schedules are deterministic and follow the papers' numbers; the config text round-trips through
the C parser (via the shaper's own config check)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.shaper.catalogue import builtin_names, load_profile
from protolens.shaper.config import shaper_config
from protolens.shaper.profile import ProfileError, parse_profile
from protolens.shaper.schedule import expand, plays_once

EXPECTED = {"clean", "fiber", "wifi", "wifi-lossy", "ecmp", "ecmp-congested", "cell-good",
            "cell-fair", "cell-passable", "cell-poor", "cell-very-poor", "jitter", "slowdown",
            "student-3m", "student-3m-loss1", "student-10m", "student-10m-loss1",
            "mininet-10ms", "mininet-100ms"}


def test_builtins_are_all_there_and_cite_a_source() -> None:
    assert set(builtin_names()) == EXPECTED
    for name in EXPECTED:
        p = load_profile(name)
        assert p.name == name
        assert "shared/seeds/" in p.source or "chosen by ProtoLens" in p.source, name
        assert p.description


def test_student_and_mininet_numbers() -> None:
    s = load_profile("student-3m-loss1").link
    assert (s.rate_down_bps, s.rate_up_bps, s.loss_down, s.loss_up) == (3_000_000, 3_000_000,
                                                                        0.01, 0.01)
    assert load_profile("student-10m").link.rate_down_bps == 10_000_000
    m = load_profile("mininet-100ms").link
    assert m.delay_up_ns + m.delay_down_ns == 200_000_000 and m.rate_down_bps in (0, None)


def test_paper_numbers() -> None:
    wifi = load_profile("wifi").link
    assert (wifi.rate_down_bps, wifi.delay_up_ns + wifi.delay_down_ns, wifi.buffer_bytes) == (
        7_000_000, 50_000_000, 45_000)
    assert load_profile("wifi-lossy").link.loss_down == 0.02
    fiber = load_profile("fiber").link
    assert (fiber.rate_up_bps, fiber.delay_up_ns + fiber.delay_down_ns) == (80_000_000, 5_000_000)
    ecmp = load_profile("ecmp-congested").ecmp
    assert ecmp is not None and (ecmp.cross_traffic_load, ecmp.cross_traffic_flows) == (0.9, 8)


def test_slowdown_adds_15ms_every_100ms_up_to_300() -> None:
    tl = expand(load_profile("slowdown"))
    rtts: dict[int, int] = {}
    for s in tl.steps:
        if s.key == "delay_ns":
            rtts[s.at_ns] = rtts.get(s.at_ns, 0) + int(s.value)
    times = sorted(rtts)
    assert rtts[0] == 5_000_000 and rtts[100_000_000] == 20_000_000
    assert all(b - a == 100_000_000 for a, b in zip(times, times[1:], strict=False))
    assert max(rtts.values()) == 300_000_000 and rtts[times[-1]] == 300_000_000
    assert tl.loop_ns == 0


def test_only_a_schedule_without_loop_plays_once() -> None:
    """A lab campaign restarts such a schedule for every load (lab/shaped_network.py)."""
    assert plays_once(load_profile("slowdown"))
    assert not [n for n in builtin_names() if n != "slowdown" and plays_once(load_profile(n))]
    steps = '[schedule]\nkind = "steps"\nsteps = [{at_ms = 500, rtt_ms = 80}]\n'
    assert plays_once(parse_profile(steps))
    assert not plays_once(parse_profile(steps.replace('"steps"\n', '"steps"\nloop = true\n'
                                                      'period_ms = 1000\n')))


def test_cellular_schedule_is_deterministic_and_clustered() -> None:
    p = load_profile("cell-poor")
    a, b = expand(p), expand(p)
    assert a == b
    rates = [s for s in a.steps if s.key == "rate_bps" and s.dir == "both"]
    assert len(rates) == 60_000 // 70 + 1
    assert all(t2.at_ns - t1.at_ns == 70_000_000 for t1, t2 in zip(rates, rates[1:], strict=False))
    assert all(1.5e6 <= s.value <= 3e6 for s in rates)
    losses = [s for s in a.steps if s.key == "loss" and s.dir == "down" and s.at_ns > 0]
    clusters = [s for s in losses if s.value > 0]
    assert clusters and all(0.05 <= s.value <= 0.15 for s in clusters)
    # every cluster lasts exactly one 70 ms interval
    for c in clusters:
        end = next((s for s in losses if s.at_ns > c.at_ns), None)
        if end is None:  # the last cluster runs into the loop's end, where loss resets to 0
            assert a.loop_ns - c.at_ns <= 140_000_000
            continue
        assert end.at_ns - c.at_ns == 70_000_000 and end.value == 0
    other = parse_profile(Path(p.path).read_text().replace("seed = 1", "seed = 2"), "x.toml")
    assert expand(other) != a


def test_config_text_is_what_the_shaper_reads() -> None:
    text = shaper_config(load_profile("wifi-lossy"))
    assert "name wifi-lossy" in text
    assert "at 0 down rate_bps=7000000 delay_ns=25000000 loss=0.02" in text
    assert "buffer_bytes=45000" in text


@pytest.mark.parametrize(("toml", "message"), [
    ('[link]\nrate_mbps = 5\n', "unknown key 'link.rate_mbps'"),
    ('[link]\nloss = 2\n', "link.loss must be between 0 and 1 (a fraction, not a percentage)"),
    ('[link]\nrate_mbit = -3\n', "link.rate_mbit must be > 0"),
    ('[link]\nrtt_ms = "fast"\n', "link.rtt_ms must be a number"),
    ('colour = "red"\n', "unknown key 'colour'"),
    ('[schedule]\nkind = "sine"\n', "schedule.kind must be one of"),
    ('[schedule]\nkind = "steps"\nloop = true\nperiod_ms = 100\n'
     'steps = [{at_ms = 200, rtt_ms = 9}]\n',
     "before the loop period"),
    ('[schedule]\nkind = "cellular"\nrtt_ms = [90, 10]\nrate_mbit = [1, 2]\ngap_ms = [1, 2]\n'
     'cluster_loss = [0.05, 0.1]\n', "rtt_ms must be a [low, high] pair"),
    ('[schedule]\nkind = "steps"\nsteps = [{at_ms = 20}]\n', "changes no parameter"),
    ('[link\n', "not valid TOML"),
])
def test_bad_profiles_give_one_line_errors(toml: str, message: str) -> None:
    with pytest.raises(ProfileError) as e:
        parse_profile(toml, "bad.toml")
    assert message in str(e.value)
    assert "\n" not in str(e.value)
    assert str(e.value).startswith("bad.toml: ")


def test_unknown_profile_name_lists_the_known_ones() -> None:
    with pytest.raises(ProfileError, match="unknown profile 'wify'.*wifi-lossy"):
        load_profile("wify")
    with pytest.raises(ProfileError, match="profile file not found"):
        load_profile("/nonexistent/x.toml")


def test_user_profile_from_a_file(tmp_path: Path) -> None:
    f = tmp_path / "mine.toml"
    f.write_text('description = "d"\n[link]\nrate_down_mbit = 3\nrtt_ms = 31\n'
                 '[gilbert_elliott]\np = 0.01\nr = 0.3\n')
    p = load_profile(str(f))
    assert p.name == "mine" and p.source == "user-defined"
    assert p.link.rate_down_bps == 3_000_000 and p.link.rate_up_bps == 0
    assert (p.link.delay_up_ns, p.link.delay_down_ns) == (15_500_000, 15_500_000)
    assert "ge=1" in shaper_config(p)


def test_profiles_cli_json() -> None:
    r = CliRunner().invoke(main, ["testbed", "profiles", "--json"])
    assert r.exit_code == 0, r.output
    rows = {row["name"]: row for row in json.loads(r.output)}
    assert set(rows) == EXPECTED
    assert rows["wifi"]["rate_down_mbit"] == 7 and rows["wifi"]["rtt_ms"] == 50
    assert rows["jitter"]["schedule"]["stdev_ms"] == 70
    assert "seeds/000" in rows["wifi-lossy"]["source"]
