"""conext20-httpx (CoNEXT'20 Sec. 5, shared/seeds/002): the pure analysis on hand-made report
rows, and the campaign ``reproduce`` builds from the experiment (BBR host, HTTPX policy)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from protolens.lab import campaign as camp
from protolens.lab import reproduce as repro
from protolens.lab.experiments import analyze_conext20_httpx, experiment
from protolens.store import open_rw

PAGE = "conext-httpx-2x2300k"


def _rows(plt: dict[str, float | None]) -> list[dict[str, Any]]:
    return [{"page": PAGE, "condition": "jitter", "arm": arm, "n": 3, "plt_median_ms": v}
            for arm, v in plt.items()]


def _verdict(lines: list[str]) -> str:
    line = next(ln for ln in lines if ln.startswith("is the mix at least as fast"))
    return line.split("? ", 1)[1].split(" (paper", 1)[0]


def test_mix_faster_than_both_is_yes_with_ratios() -> None:
    lines = analyze_conext20_httpx({"httpx": _rows(
        {"h1": 3000, "h2": 2500, "proxy-h1": 3200, "proxy-h2": 2800, "policy": 2600})})
    assert _verdict(lines) == "yes"
    text = "\n".join(lines)
    assert "mix / all-h2 x0.93, mix / all-h1 x0.81 (all three via the proxy)" in text
    assert "mix / all-h2 x1.04, mix / all-h1 x0.87 (all-h1/h2 direct" in text
    assert f"  {PAGE}: h1 3000   h2 2500   proxy-h1 3200   proxy-h2 2800   policy 2600" in text


def test_mix_slower_than_the_better_arm_is_no() -> None:
    lines = analyze_conext20_httpx({"httpx": _rows(
        {"h1": 3000, "h2": 2500, "proxy-h1": 2700, "proxy-h2": 2800, "policy": 2750})})
    assert _verdict(lines) == "no"
    assert "all-h1 / all-h2 direct x1.20, via the proxy x0.96" in "\n".join(lines)


def test_missing_arm_is_no_data() -> None:
    lines = analyze_conext20_httpx({"httpx": _rows(
        {"h1": 3000, "h2": 2500, "proxy-h2": 2800, "policy": None})})
    assert _verdict(lines) == "no data"
    assert f"  {PAGE}: h1 3000   h2 2500   proxy-h1 n/a   proxy-h2 2800   policy n/a" in lines


def test_reproduce_runs_the_bbr_host_and_the_httpx_policy(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    specs: list[camp.CampaignSpec] = []

    def fake_run(spec: camp.CampaignSpec, settings: camp.Settings) -> camp.Outcome:
        specs.append(spec)
        return camp.Outcome(campaign=spec.name, planned=0, ran=0, interrupted=True)

    monkeypatch.setattr(camp, "run", fake_run)  # no browser: only the spec is checked here
    db = tmp_path / "lab.db"
    open_rw(db).close()
    settings = camp.Settings(db=db, chromium="/usr/bin/chromium", extension=tmp_path)
    rep = repro.reproduce(experiment("conext20-httpx"), settings, quick=True, testbed="hx9",
                          seed=7)
    assert rep.interrupted and len(specs) == 1
    spec = specs[0]
    assert spec.bbr_hosts == ("b.test",) and spec.server_cc == "cubic"
    assert spec.pages == (PAGE,) and spec.conditions == ("jitter",)
    assert set(spec.arms) == {"h1", "h2", "proxy-h1", "proxy-h2", "policy"}
    assert {(r["domain"], r["arm"]) for r in spec.policy} == {("b.test", "h1"), ("a.test", "h2")}
    assert camp.CampaignSpec.from_stored(spec.name, 7, spec.stored()) == spec
