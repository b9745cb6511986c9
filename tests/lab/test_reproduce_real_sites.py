"""``lab reproduce --urls``: which experiments' designs hold on real sites, the parts they run
there, what the report says of it, and the refusals (one line, nothing run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.lab.campaign import CampaignError
from protolens.lab.experiments import EXPERIMENTS, experiment
from protolens.lab.markdown import render
from protolens.lab.reproduce import Reproduction, real_parts


def test_only_designs_of_arms_and_client_conditions_run_on_real_sites() -> None:
    assert sorted(e.name for e in EXPERIMENTS if e.real_sites) == [
        "ifip18-parallel", "ifip18-wifi", "student-study"]
    assert [p.suffix for p in real_parts(experiment("student-study"), quick=True)] == ["net"]
    with pytest.raises(CampaignError, match="conext20-delay cannot run on real sites"):
        real_parts(experiment("conext20-delay"), quick=False)


def test_the_report_says_real_sites_and_that_they_change() -> None:
    rep = Reproduction(experiment("ifip18-wifi"), True, campaigns={"wifi": "c"},
                       urls=("https://www.example.com/",))
    assert rep.lines[0].startswith("on 1 real site(s), not the testbed's replicas")
    assert rep.as_json()["real_sites"] == ["https://www.example.com/"]
    text = render([rep], title="t", created="now", machine="m")
    assert "real sites change over time" in text and "https://www.example.com/" in text


@pytest.mark.parametrize(("args", "message"), [
    (["conext20-delay"], "conext20-delay cannot run on real sites"),
    (["ifip18-fairness"], "ifip18-fairness cannot run on real sites"),
    (["conext20-igor"], "conext20-igor probes the testbed's servers"),
])
def test_refusals_are_one_line_and_run_nothing(tmp_path: Path, args: list[str],
                                               message: str) -> None:
    urls = tmp_path / "u.txt"
    urls.write_text("https://www.example.com/\n")
    db = tmp_path / "never.db"
    out = CliRunner().invoke(main, ["lab", "reproduce", *args, "--urls", str(urls), "--db",
                                    str(db)])
    assert out.exit_code == 2, out.output
    assert message in out.output and len(out.output.strip().splitlines()) == 1
    assert not db.exists()


def test_wan_options_without_urls_are_refused(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["lab", "reproduce", "ifip18-wifi", "--uplink", "eth0",
                                    "--db", str(tmp_path / "x.db")])
    assert out.exit_code == 2 and "apply to real sites" in out.output
