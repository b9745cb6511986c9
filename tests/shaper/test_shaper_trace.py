"""Mahimahi delivery traces on the Python side: the pure parser (property tests: every valid
trace parses back to its opportunities, every bad line is a one-line error naming file and
line), the profile key, the command-line overlay and the config lines the C model reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from protolens.cli import main
from protolens.shaper.catalogue import load_profile, with_traces
from protolens.shaper.config import shaper_config
from protolens.shaper.profile import ProfileError, parse_profile
from protolens.shaper.trace import TraceError, parse_mahimahi

opportunities = st.lists(st.integers(0, 10_000), min_size=1, max_size=200).map(sorted).filter(
    lambda xs: xs[-1] > 0)


@given(opportunities, st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_a_valid_trace_parses_back_to_its_opportunities(ops: list[int], nl: str,
                                                          final_newline: bool) -> None:
    text = nl.join(map(str, ops)) + (nl if final_newline else "")
    trace = parse_mahimahi(text, "t.down")
    assert trace.opportunities_ms == tuple(ops)
    assert trace.period_ms == ops[-1]
    assert trace.rate_bps == pytest.approx(1500 * 8 * len(ops) / (ops[-1] / 1000))


@given(opportunities, st.data())
def test_a_bad_line_is_a_one_line_error_naming_it(ops: list[int], data: st.DataObject) -> None:
    bad = data.draw(st.text(min_size=1, max_size=20).filter(
        lambda s: s.strip() != "" and not (s.strip().isascii() and s.strip().isdigit())
        and "\n" not in s and "\r" not in s and s.strip() == s
        and not any(c in s for c in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")))
    at = data.draw(st.integers(0, len(ops)))
    lines = [str(x) for x in ops]
    lines.insert(at, bad)
    with pytest.raises(TraceError) as e:
        parse_mahimahi("\n".join(lines), "t.down")
    msg = str(e.value)
    assert msg.startswith(f"t.down:{at + 1}: expected a whole number of ms, got ")
    assert "\n" not in msg


@given(st.text(max_size=200))
def test_any_text_gives_a_trace_or_only_a_trace_error(text: str) -> None:
    try:
        trace = parse_mahimahi(text, "x")
    except TraceError as e:
        assert "\n" not in str(e)
    else:
        assert list(trace.opportunities_ms) == sorted(trace.opportunities_ms)
        assert trace.period_ms > 0


@pytest.mark.parametrize(("text", "message"), [
    ("", "t: no delivery opportunities (one whole number of ms a line)"),
    ("\n\n", "t: no delivery opportunities (one whole number of ms a line)"),
    ("0\n0\n", "t: the trace lasts 0 ms (its last line is the loop period and must be > 0)"),
    ("1\n5\n3\n", "t:3: 3 ms comes before the previous line's 5 ms (a trace never goes back in "
                  "time)"),
    ("1\n-2\n", "t:2: expected a whole number of ms, got '-2'"),
    ("1.5\n", "t:1: expected a whole number of ms, got '1.5'"),
    ("4294967296\n", "t:1: 4294967296 ms is beyond the longest trace (4294967295 ms)"),
])
def test_bad_traces(text: str, message: str) -> None:
    with pytest.raises(TraceError) as e:
        parse_mahimahi(text, "t")
    assert str(e.value) == message


def test_a_profile_key_names_traces_next_to_the_profile(tmp_path: Path) -> None:
    (tmp_path / "lte.down").write_text("1\n1\n2\n")
    (tmp_path / "lte.up").write_text("4\n")
    prof = tmp_path / "lte.toml"
    prof.write_text('[link]\nrtt_ms = 40\nbuffer_bytes = 30000\nloss = 0.01\n'
                    '[trace]\ndown = "lte.down"\nup = "lte.up"\n')
    p = load_profile(str(prof))
    assert p.link.trace_down is not None and p.link.trace_up is not None
    assert p.link.trace_down.opportunities_ms == (1, 1, 2)
    assert p.link.trace_down.source == str(tmp_path / "lte.down")
    assert p.link.trace_up.rate_bps == 3e6
    text = shaper_config(p)
    assert "trace down 1 1 2" in text.splitlines() and "trace up 4" in text.splitlines()
    # the profile's delay, loss and buffer stay
    assert "delay_ns=20000000" in text and "loss=0.01" in text and "buffer_bytes=30000" in text


def test_trace_key_errors_are_one_line(tmp_path: Path) -> None:
    prof = tmp_path / "p.toml"
    prof.write_text('[link]\nrtt_ms = 40\n[trace]\ndown = "missing.down"\n')
    with pytest.raises(ProfileError, match=r"^cannot read trace missing.down: No such file"):
        load_profile(str(prof))
    (tmp_path / "bad.down").write_text("1\nfast\n")
    prof.write_text('[link]\nrtt_ms = 40\n[trace]\ndown = "bad.down"\n')
    with pytest.raises(ProfileError) as e:
        load_profile(str(prof))
    assert str(e.value) == f"{tmp_path / 'bad.down'}:2: expected a whole number of ms, got 'fast'"
    prof.write_text('[link]\nrtt_ms = 40\n[trace]\nsideways = "x"\n')
    with pytest.raises(ProfileError, match="unknown key 'trace.sideways'"):
        load_profile(str(prof))
    with pytest.raises(ProfileError, match="trace files can only be read from a profile file"):
        parse_profile('[trace]\ndown = "x"\n')


def test_long_traces_are_written_in_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "long.down").write_text("\n".join(str(i) for i in range(1, 2501)) + "\n")
    p = with_traces(load_profile("wifi"), down="long.down")
    lines = [x for x in shaper_config(p).splitlines() if x.startswith("trace down ")]
    assert [len(x.split()) - 2 for x in lines] == [1000, 1000, 500]
    assert " ".join(x.split(" ", 2)[2] for x in lines).split() == [str(i) for i in range(1, 2501)]
    assert p.link.delay_down_ns == 25_000_000 and p.link.buffer_bytes == 45000
    assert with_traces(p) is p


def test_shape_without_profile_or_trace_is_a_one_line_error() -> None:
    r = CliRunner().invoke(main, ["testbed", "shape", "--name", "shnone"])
    assert r.exit_code != 0
    assert r.output.strip() == "error: give a PROFILE, --trace-down FILE or --trace-up FILE"
