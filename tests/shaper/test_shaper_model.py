"""The shaper's pure C model (native-host/shaper/model.c), unit-tested on a virtual clock by the
C test binary: delay, rate on leaving, drop-tail, Bernoulli and Gilbert-Elliott loss, jitter
without reordering, looped schedules, ECMP paths, flow counters, lateness, config errors."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SHAPER = Path(__file__).resolve().parents[2] / "native-host" / "shaper"


@pytest.fixture(scope="module")
def test_binary() -> Path:
    if shutil.which("make") is None or shutil.which("gcc") is None:
        pytest.skip("needs make and gcc (scripts/setup.sh)")
    subprocess.run(["make", "-s", "-C", str(SHAPER)], check=True)
    return SHAPER / "build" / "test_model"


def test_c_model_unit_tests_pass(test_binary: Path) -> None:
    p = subprocess.run([str(test_binary)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    summary = p.stdout.strip().splitlines()[-1]
    checks, failures = int(summary.split()[0]), int(summary.split()[2])
    assert failures == 0
    assert checks >= 50, f"too few checks ran: {summary}"


def test_shaper_rejects_a_bad_config_with_one_line(tmp_path: Path, test_binary: Path) -> None:
    conf = tmp_path / "bad.conf"
    conf.write_text("at 0 both loss=3\n")
    binary = SHAPER / "build" / "protolens-shaper"
    p = subprocess.run([str(binary), "--queue-up", "0", "--queue-down", "1", "--config",
                        str(conf), "--control", str(tmp_path / "s.sock")],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 2
    assert p.stderr.strip() == "protolens-shaper: line 1: loss=3 out of range"
