"""Host-wide settings are recorded before the first change, shared between testbeds, refused on
conflict, and restored when the last testbed goes down (on plain files standing in for /proc)."""

from __future__ import annotations

from pathlib import Path

import pytest

from protolens.testbed import hostcfg


def test_record_conflict_restore(tmp_path: Path) -> None:
    knob = tmp_path / "hystart"
    knob.write_text("1\n")
    run = tmp_path / "run"
    assert hostcfg.change(run, "a", str(knob), "0") is True
    assert knob.read_text() == "0\n"
    assert hostcfg.change(run, "b", str(knob), "0") is False  # same need: shared
    with pytest.raises(hostcfg.HostConflict, match="testbed 'a' needs .* = 0"):
        hostcfg.change(run, "c", str(knob), "1")
    assert hostcfg.release(run, "a") == []  # b still up
    assert knob.read_text() == "0\n"
    assert hostcfg.release(run, "b") == [f"{knob} = 1"]
    assert knob.read_text() == "1\n"
    assert not (run / "host-settings.json").exists()
    assert hostcfg.release(run, "b") == []
