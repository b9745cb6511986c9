"""conext20-httpx (CoNEXT'20 Sec. 5, shared/seeds/002): the pure analysis on generated
navigations, and the campaign ``reproduce`` builds from the experiment (BBR host, HTTPX policy)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from protolens.lab import campaign as camp
from protolens.lab import reproduce as repro
from protolens.lab.estimate import Check
from protolens.lab.experiments import experiment
from protolens.lab.findings import analyze_conext20_httpx
from protolens.store import open_rw

PAGE = "conext-httpx-2x2300k"


def _navs(plt: dict[str, float | None], n: int = 8) -> list[dict[str, Any]]:
    rng = np.random.default_rng(3)
    return [{"page": PAGE, "condition": "jitter", "arm": arm, "plt_ms": v * f, "warm": 0,
             "failed": 0}
            for arm, v in plt.items() if v is not None for f in rng.lognormal(0, 0.03, n)]


def _checks(findings: list[Any]) -> dict[str, Check]:
    return {f.ratio.label: f for f in findings if isinstance(f, Check)}


def test_mix_faster_than_both_agrees_with_ratios_and_intervals() -> None:
    found = analyze_conext20_httpx({"httpx": _navs(
        {"h1": 3000, "h2": 2500, "proxy-h1": 3200, "proxy-h2": 2800, "policy": 2600})})
    checks = _checks(found)
    to_h2, to_h1 = checks["mix / all-h2 via the proxy"], checks["mix / all-h1 via the proxy"]
    assert to_h2.ratio.point == pytest.approx(2600 / 2800, rel=0.03)
    assert to_h1.ratio.point == pytest.approx(2600 / 3200, rel=0.03)
    assert to_h2.verdict == "agrees" and to_h1.verdict == "agrees"
    assert f"  {PAGE}: h1 " in "\n".join(f for f in found if isinstance(f, str))


def test_mix_slower_than_the_proxy_h1_path_disagrees() -> None:
    checks = _checks(analyze_conext20_httpx({"httpx": _navs(
        {"h1": 3000, "h2": 2500, "proxy-h1": 2400, "proxy-h2": 2800, "policy": 2600})}))
    assert checks["mix / all-h1 via the proxy"].verdict == "disagrees"
    assert checks["mix / all-h2 via the proxy"].verdict == "agrees"


def test_missing_arm_is_no_data() -> None:
    found = analyze_conext20_httpx({"httpx": _navs(
        {"h1": 3000, "h2": 2500, "proxy-h2": 2800, "policy": None})})
    assert _checks(found)["mix / all-h2 via the proxy"].verdict == "no data"
    assert any(f.startswith(f"  {PAGE}: h1 ") and "proxy-h1 n/a" in f and "policy n/a" in f
               for f in found if isinstance(f, str))


def test_reproduce_runs_the_bbr_host_and_the_httpx_policy(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    specs: list[camp.CampaignSpec] = []

    def fake_run(spec: camp.CampaignSpec, settings: camp.Settings) -> camp.Outcome:
        specs.append(spec)
        return camp.Outcome(campaign=spec.name, planned=0, ran=0, interrupted=True)

    monkeypatch.setattr(camp, "run", fake_run)  # no browser: only the spec is checked here
    db = tmp_path / "lab.db"
    open_rw(db, time.time() * 1000).close()
    settings = camp.Settings(db=db, chromium="/usr/bin/chromium", extension=tmp_path)
    rep = repro.reproduce(experiment("conext20-httpx"), settings, quick=True, testbed="hx9",
                          seed=7)
    assert rep.interrupted and len(specs) == 1
    spec = specs[0]
    assert spec.bbr_hosts == ("b.test",) and spec.server_cc == "cubic"
    assert spec.pages == (PAGE,) and spec.conditions == ("jitter",)
    assert {str(a) for a in spec.arms} == {"h1", "h2", "proxy-h1", "proxy-h2", "policy"}
    assert spec.stored()["arms"] == [str(a) for a in spec.arms]
    assert {(r["domain"], r["arm"]) for r in spec.policy} == {("b.test", "h1"), ("a.test", "h2")}
    assert camp.CampaignSpec.from_stored(spec.name, 7, spec.stored()) == spec
