"""The lab workflows the CLI calls, called as functions: a campaign's stored spec read back for
``--resume``, and a fairness run's arguments checked before anything starts (one-line errors)."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

from protolens.arms import Arm
from protolens.lab import campaign as camp
from protolens.lab import fairness_run
from protolens.lab.fairness import PairError
from protolens.store import lab as labstore
from protolens.store import open_rw
from protolens.store.tx import transaction


def _store(db: Path, name: str, spec: dict[str, object]) -> None:
    with closing(open_rw(db, 1.0e12)) as conn, transaction(conn):
        labstore.ensure_campaign(conn, name, seed=42, spec=spec, version="t", now_ms=1.0e12)


def test_a_stored_campaign_reads_back_as_it_was_run(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    spec = camp.CampaignSpec(name="c", pages=("student-small",), arms=(Arm("h1"), Arm("h3")),
                             conditions=("wifi", "cell-poor"), reps=4, seed=42, warm=True,
                             bbr_hosts=("b.test",), quiet_ms=700)
    _store(db, "c", spec.stored())
    assert camp.stored_spec(db, "c") == spec
    with pytest.raises(camp.CampaignError, match="no campaign named 'd' in "):
        camp.stored_spec(db, "d")
    _store(db, "bad", {**spec.stored(), "arms": ["h9"]})
    with pytest.raises(camp.CampaignError, match="campaign 'bad': unknown arm h9"):
        camp.stored_spec(db, "bad")


def settings(tmp_path: Path, chromium: str = "/usr/bin/chromium") -> camp.Settings:
    ext = tmp_path / "ext"
    ext.mkdir(exist_ok=True)
    (ext / "manifest.json").write_text("{}")
    return camp.Settings(db=tmp_path / "lab.db", chromium=chromium, extension=ext)


@pytest.mark.parametrize(("kw", "error", "message"), [
    ({"pairs": "h2"}, PairError, "give exactly two arms"),
    ({"pairs": "h2-parallel:2:proxy-h2"}, PairError, "at most one side"),
    ({"page": "no-such-page"}, camp.CampaignError, "unknown page no-such-page"),
    ({"condition": "no-such-profile"}, camp.CampaignError, "no-such-profile"),
])
def test_a_fairness_run_is_refused_before_it_starts(tmp_path: Path, kw: dict[str, str],
                                                    error: type[Exception], message: str) -> None:
    args = {"pairs": "h2:h3", "page": "cell-10x435k", "condition": "wifi", **kw}
    with pytest.raises(error, match=message):
        fairness_run.prepare(args["pairs"], page=args["page"], condition=args["condition"],
                             reps=2, server_cc="cubic", testbed="plf",
                             settings=settings(tmp_path))
    assert not (tmp_path / "lab.db").exists()  # refused before anything was stored


def test_a_fairness_run_without_a_browser_is_refused(tmp_path: Path) -> None:
    with pytest.raises(camp.CampaignError, match="no browser at /nonexistent/chromium"):
        fairness_run.prepare("h2:h3", page="cell-10x435k", condition="wifi", reps=2,
                             server_cc="cubic", testbed="plf",
                             settings=settings(tmp_path, "/nonexistent/chromium"))


def test_a_fairness_spec_keeps_its_arguments(tmp_path: Path) -> None:
    if not Path("/usr/bin/chromium").is_file():
        pytest.skip("needs /usr/bin/chromium (scripts/setup.sh)")
    import os
    if os.geteuid() != 0:
        with pytest.raises(camp.CampaignError, match="needs root"):
            fairness_run.prepare("h2:h3", page="cell-10x435k", condition="wifi", reps=2,
                                 server_cc="cubic", testbed="plf", settings=settings(tmp_path))
        return
    spec = fairness_run.prepare("h2:h3,bulk:h1", page="cell-10x435k", condition="wifi", reps=2,
                                server_cc="cubic", testbed="plf", settings=settings(tmp_path),
                                campaign="f1", seed=9, duration_s=30.0)
    assert [p.name for p in spec.pairs] == ["h2:h3", "bulk:h1"]
    assert (spec.campaign, spec.seed, spec.duration_s, spec.testbed) == ("f1", 9, 30.0, "plf")
