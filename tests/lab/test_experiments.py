"""Every experiment's analysis on generated navigations whose effects are known: the paper's
direction gives "agrees", the opposite "disagrees", no effect at small n "inconclusive"; the
Markdown report and the reproduce command's argument errors."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.lab import campaign as camp
from protolens.lab.estimate import Check
from protolens.lab.experiments import EXPERIMENTS, experiment
from protolens.lab.markdown import render
from protolens.lab.reproduce import Reproduction

Truth = Callable[[str, str, str], float]


def _navs(exp_name: str, truth: Truth, n: int = 8, noise: float = 0.03, seed: int = 1,
          quick: bool = True) -> dict[str, list[dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    exp = experiment(exp_name)
    out: dict[str, list[dict[str, Any]]] = {}
    for part in exp.quick if quick else exp.full:
        out[part.suffix] = [
            {"page": page, "condition": cond, "arm": arm, "warm": 0, "failed": 0,
             **{f"{m}_ms": truth(page, cond, arm) * (0.2 if m != "plt" else 1.0) * f
                for m, f in zip(("plt", "ttfb", "first_image"),
                                rng.lognormal(0, noise, 3), strict=True)}}
            for page in part.pages for cond in part.conditions for arm in part.arms
            for _ in range(n)]
    return out


def _verdicts(exp_name: str, truth: Truth, **kw: Any) -> dict[str, str]:
    findings = experiment(exp_name).analyze(_navs(exp_name, truth, **kw), 0)
    return {f.claim: f.verdict for f in findings if isinstance(f, Check)}


def test_ifip18_wifi_directions() -> None:
    def paper(page: str, cond: str, arm: str) -> float:
        slow = {"h1": 1.1, "h2": 1.7, "h3": 1.3}[arm] if cond == "wifi-lossy" else 1.0
        return 1000 * slow

    v = _verdicts("ifip18-wifi", paper)
    assert set(v.values()) == {"agrees"} and len(v) == 2

    def opposite(page: str, cond: str, arm: str) -> float:
        slow = {"h1": 1.7, "h2": 1.1, "h3": 1.3}[arm] if cond == "wifi-lossy" else 1.0
        return 1000 * slow

    v = _verdicts("ifip18-wifi", opposite)
    assert v["h2 degrades more than h1 under 2% loss (h2's slowdown / h1's)"] == "disagrees"
    assert v["QUIC is less affected by loss than h2 (h3's slowdown / h2's)"] == "disagrees"

    flat = _verdicts("ifip18-wifi", lambda p, c, a: 1000.0, n=5, noise=0.3)
    assert all(x.startswith("inconclusive") for x in flat.values())
    # 3 loads per cell: the design cannot decide, whatever the data (as compare says)
    for truth in (paper, opposite):
        small = _verdicts("ifip18-wifi", truth, n=3)
        assert set(small.values()) == {"too few loads to decide (needs n ≥ 4 per cell)"}


def test_ifip18_parallel_separates_the_second_connection_from_the_proxy_path() -> None:
    def truth(page: str, cond: str, arm: str) -> float:
        if cond == "wifi":
            return {"proxy-h2": 1150, "h2-parallel:2": 1150}.get(arm, 1000)
        return {"h1": 1200, "h2": 2000, "proxy-h2": 2300, "h2-parallel:2": 1400,
                "h3": 1500}[arm]

    v = _verdicts("ifip18-parallel", truth)
    assert v["at 2% loss, H2-Parallel cuts the PLT of h2 (what a user gets: Chromium's h2 "
             "against two connections through the lab proxy)"] == "agrees"
    assert v["at 2% loss, the second connection itself cuts the PLT (same proxy path: "
             "h2-parallel:2 against proxy-h2's one connection)"] == "agrees"
    assert v["at 2% loss, H2-Parallel comes near h1"] == "agrees"
    assert "proxy-h2" in experiment("ifip18-parallel").quick[0].arms


def test_cell_large_gap_and_conditions() -> None:
    def truth(page: str, cond: str, arm: str) -> float:
        gap = {"cell-good": 1.1, "cell-poor": 1.6}[cond]
        return 5000 * (gap if arm == "h2" else 1.0)

    v = _verdicts("cell-large", truth)
    assert v == {"h1 outperforms h2 across all conditions (geometric mean over conditions)":
                 "agrees",
                 "the gap grows from the best to the worst condition (cell-poor against "
                 "cell-good)": "agrees"}


def test_conext20_delay_compares_delay_based_servers_with_loss_based_cubic() -> None:
    """The paper's delay-based servers are BBR and CUBIC+HyStart; its loss-based control is CUBIC
    with regular slow start (cubic-nohystart). Here h1 gains 20% behind BBR, 10% behind HyStart
    and nothing behind the loss-based server."""
    gain = {"bbr": 0.8, "cubic": 0.9, "cubic-nohystart": 1.0}

    def truth_by_part(part: str) -> Truth:
        return lambda p, c, a: 3000 * (gain[part] if a == "h1" else 1.0)

    exp = experiment("conext20-delay")
    assert [p.suffix for p in exp.full] == ["bbr", "cubic", "cubic-nohystart"]
    assert [p.server_cc for p in exp.full] == ["bbr", "cubic", "cubic-nohystart"]
    navs: dict[str, list[dict[str, Any]]] = {}
    for part in exp.quick:
        navs[part.suffix] = _navs("conext20-delay", truth_by_part(part.suffix))[part.suffix]
    v = {f.claim: f.verdict for f in exp.analyze(navs, 0) if isinstance(f, Check)}
    assert v == {
        "behind the delay-based server (BBR), h1 outperforms h2 on large pages": "agrees",
        "behind CUBIC with HyStart (delay-based slow start), h1 outperforms h2 on large pages":
            "agrees",
        "BBR favours h1 more than loss-based CUBIC (regular slow start) does": "agrees",
        "HyStart favours h1 more than loss-based CUBIC (regular slow start) does": "agrees"}
    # a loss-based server that favoured h1 as much as BBR: the comparison says no
    gain["cubic-nohystart"] = 0.8
    navs["cubic-nohystart"] = _navs("conext20-delay",
                                    truth_by_part("cubic-nohystart"))["cubic-nohystart"]
    v = {f.claim: f.verdict for f in exp.analyze(navs, 0) if isinstance(f, Check)}
    assert v["BBR favours h1 more than loss-based CUBIC (regular slow start) does"] != "agrees"
    assert v["HyStart favours h1 more than loss-based CUBIC (regular slow start) does"] == \
        "disagrees"


def test_student_study_findings() -> None:
    def truth(page: str, cond: str, arm: str) -> float:
        base = {"h1": 1100, "h2": 1000, "h3": 1050}[arm]
        if page == "student-many-large":
            base = {"h1": 1000, "h2": 1000, "h3": 1400}[arm]
        return base

    v = _verdicts("student-study", truth)
    assert v["HTTP/2 has a lower PLT than h1 in most scenarios"] == "agrees"
    assert v["QUIC does worst on the page with many large resources (against h2)"] == "agrees"
    assert v["1% loss changes the PLT little at 3mbit/s"] == "agrees"
    assert v["HTTP/1.1 has a lower time to first byte than h2"] == "disagrees"

    def lossy(page: str, cond: str, arm: str) -> float:
        return 1000 * (1.5 if cond.endswith("loss1") else 1.0)

    assert _verdicts("student-study", lossy)["1% loss changes the PLT little at 10mbit/s"] \
        == "disagrees"


def test_mininet_quic_advantage_grows() -> None:
    def truth(page: str, cond: str, arm: str) -> float:
        files = int(page.split("-")[1])
        rtt = 20 if cond == "mininet-10ms" else 200
        h3_gain = 1.0 - 0.1 * (rtt == 200) - 0.1 * (files == 100)
        return (100 + rtt * files ** 0.5) * (h3_gain if arm == "h3" else 1.0)

    v = _verdicts("mininet-quic", truth)
    assert set(v.values()) == {"agrees"} and len(v) == 2


def test_ifip18_fairness_share_ratios() -> None:
    shares = {"h2:h3": 0.33, "h2-parallel:2:h3": 0.5, "h1:h2": 0.7, "h1:h3": 0.4}
    rows = []
    rng = np.random.default_rng(2)
    for pair, a_share in shares.items():
        arms = pair.rsplit(":", 1)
        for rep in range(1, 7):
            a = a_share + rng.normal(0, 0.01)
            rows += [{"pair": pair, "repetition": rep, "side": "a", "arm": arms[0], "share": a,
                      "connections": 1},
                     {"pair": pair, "repetition": rep, "side": "b", "arm": arms[1],
                      "share": 1 - a, "connections": 1}]
    found = experiment("ifip18-fairness").analyze({"fair": rows}, 0)
    v = {f.claim: f.verdict for f in found if isinstance(f, Check)}
    assert v == {"QUIC takes about twice H2's share": "agrees",
                 "H2-Parallel (2 connections) and QUIC share equally": "agrees",
                 "H1 (several connections) beats H2": "agrees",
                 "H1 (several connections) beats QUIC": "disagrees"}
    twice = next(f for f in found if isinstance(f, Check) and f.ratio.label == "share h3 / h2")
    assert twice.ratio.point == pytest.approx(0.67 / 0.33, rel=0.05)
    five = [r for r in rows if r["repetition"] < 6]  # a median of 5 has no 95% interval
    found = experiment("ifip18-fairness").analyze({"fair": five}, 0)
    assert {f.verdict for f in found if isinstance(f, Check)} == {
        "too few loads to decide (needs n ≥ 6 repetitions)"}


def test_every_experiment_analyzes_empty_data_as_no_data() -> None:
    for exp in EXPERIMENTS:
        findings = exp.analyze({p.suffix: [] for p in exp.quick}, 0)
        verdicts = {f.verdict for f in findings if isinstance(f, Check)}
        assert verdicts == {"no data"}, exp.name


def test_markdown_report_has_every_claim_and_verdict() -> None:
    exp = experiment("ifip18-wifi")

    def truth(page: str, cond: str, arm: str) -> float:
        return 1000 * ({"h1": 1.1, "h2": 1.7, "h3": 1.3}[arm] if cond == "wifi-lossy" else 1)

    navs = _navs("ifip18-wifi", truth)
    rep = Reproduction(exp, quick=True, campaigns={"wifi": "c-wifi"}, navigations=navs,
                       rows={"wifi": [{"page": "ifip18-wikipedia", "condition": "wifi",
                                       "arm": "h1", "n": 8, "plt_median_ms": 1000.0,
                                       "plt_p25_ms": 990.0, "plt_p75_ms": 1010.0}]},
                       findings=exp.analyze(navs, 0), seconds=90)
    text = render([rep], title="T", created="now", machine="m", figures={"ifip18-wifi": "f.png"})
    assert "1 experiments, 2 claims: 2 agree, 0 disagree, 0 inconclusive" in text
    assert "| ifip18-wifi | quick | 2 | 2 | 0 | 0 | 1.5 min |" in text
    assert text.count("**agrees**") == 2
    assert "h2 slowdown / h1 slowdown: x1.5" in text and "![ifip18-wifi PLT](f.png)" in text
    assert "| ifip18-wikipedia | wifi | h1 | 8 | 1000 | 990 | 1010 |" in text


def test_markdown_fairness_table_says_how_far_behind_each_side_started() -> None:
    from protolens.lab.fairness import summary_rows

    exp = experiment("ifip18-fairness")
    raw = [{"pair": "h2:h3", "repetition": rep, "side": side, "arm": arm, "share": share,
            "connections": 1, "start_ms": lead}
           for rep, lead in ((1, 3.0), (2, 11.5))
           for side, arm, share in (("a", "h2", 0.4), ("b", "h3", 0.6))]
    raw[1]["start_ms"] = 0.0  # b first in repetition 1
    raw[2]["start_ms"] = 0.0  # a first in repetition 2
    rep = Reproduction(exp, quick=True, campaigns={"fair": "c-fair"}, navigations={"fair": raw},
                       rows={"fair": summary_rows(raw)}, findings=exp.analyze({"fair": raw}, 0),
                       seconds=60)
    text = render([rep], title="T", created="now", machine="m")
    assert "| connections | started behind, max ms |" in text
    lines = [ln for ln in text.splitlines() if ln.startswith("| h2:h3 |")]
    assert [ln.rsplit("|", 2)[1].strip() for ln in lines] == ["3.0", "11.5"]


@pytest.mark.parametrize("args,message", [
    ([], "give one experiment NAME or --all"),
    (["ifip18-wifi", "--all"], "give one experiment NAME or --all"),
    (["nope"], "unknown experiment 'nope'"),
])
def test_reproduce_argument_errors_are_one_line(args: list[str], message: str) -> None:
    res = CliRunner().invoke(main, ["lab", "reproduce", *args])
    assert res.exit_code != 0 and message in res.output
    assert "Traceback" not in res.output


def test_reproduce_all_runs_every_experiment_and_writes_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []

    def fake_run(spec: camp.CampaignSpec, settings: camp.Settings) -> camp.Outcome:
        ran.append(spec.name)  # no browser here: the campaigns store nothing
        return camp.Outcome(campaign=spec.name, planned=0, ran=0, interrupted=False)

    monkeypatch.setattr(camp, "run", fake_run)
    from protolens.lab import fairness_run

    def fake_fairness(spec: Any, settings: camp.Settings, **kw: Any) -> Any:
        ran.append(spec.campaign)
        return fairness_run.FairnessOutcome(spec.campaign)

    monkeypatch.setattr(fairness_run, "run", fake_fairness)
    from protolens.store import open_rw
    db = tmp_path / "lab.db"
    open_rw(db, time.time() * 1000).close()
    out = tmp_path / "r.md"
    res = CliRunner().invoke(main, ["lab", "reproduce", "--all", "--quick", "--out", str(out),
                                    "--db", str(db), "--seed", "3"])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    for exp in EXPERIMENTS:
        assert f"## {exp.name}" in text
        assert any(name.startswith(exp.name + "-quick-") for name in ran)
    assert "**no data**" in text


def test_reproduce_help_names_every_experiment() -> None:
    res = CliRunner().invoke(main, ["lab", "reproduce", "--help"])
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    missing = [e.name for e in EXPERIMENTS if e.name not in text]
    assert not missing, f"`lab reproduce --help` does not name {missing}"


def test_the_name_list_bundles_use_is_every_experiment() -> None:
    """share/tags.py keeps ProtoLens's own names in clear from protolens/names.py (the core
    install cannot import the experiments' analyses nor build the corpus)."""
    from protolens.names import EXPERIMENT_NAMES, PAGE_NAMES
    from protolens.pages.catalog import catalog_names

    assert tuple(e.name for e in EXPERIMENTS) == EXPERIMENT_NAMES
    assert tuple(catalog_names()) == PAGE_NAMES
