"""The network quiet after load a lab campaign's records end with: chosen per campaign kind,
stored with the campaign, carried by the lab context file to the extension's hello."""

from __future__ import annotations

import json
from pathlib import Path

from protolens.browser.profile import write_lab_context
from protolens.lab.campaign import LEGACY_QUIET_MS, CampaignSpec
from protolens.lab.runner import LAB_QUIET_MS
from protolens.messaging.lab import parse_lab


def test_testbed_pages_get_the_lab_quiet_real_sites_the_recorders_own() -> None:
    assert CampaignSpec(name="c", pages=("student-small",)).quiet_ms == LAB_QUIET_MS == 200
    assert CampaignSpec(name="c", urls=("https://example.com/",)).quiet_ms is None
    for quiet in (700, 0):
        assert CampaignSpec(name="c", pages=("student-small",), quiet_ms=quiet).quiet_ms == quiet
        real = CampaignSpec(name="c", urls=("https://example.com/",), quiet_ms=quiet)
        assert real.quiet_ms == quiet


def test_a_stored_campaign_resumes_with_the_quiet_it_ran_with() -> None:
    for spec in (CampaignSpec(name="c", pages=("student-small",)),
                 CampaignSpec(name="c", urls=("https://example.com/",)),
                 CampaignSpec(name="c", pages=("student-small",), quiet_ms=1200)):
        stored = json.loads(json.dumps(spec.stored()))  # as the store keeps it
        assert stored["quiet_ms"] == spec.quiet_ms
        assert CampaignSpec.from_stored("c", 1, stored).quiet_ms == spec.quiet_ms


def test_a_campaign_stored_before_quiet_ms_resumes_with_the_recorders_2_s() -> None:
    stored = CampaignSpec(name="c", pages=("student-small",)).stored()
    del stored["quiet_ms"]
    assert CampaignSpec.from_stored("c", 1, stored).quiet_ms == LEGACY_QUIET_MS == 2000


def test_the_lab_context_file_carries_the_quiet_to_the_hello(tmp_path: Path) -> None:
    for quiet in (LAB_QUIET_MS, None):
        path = write_lab_context(tmp_path / "lab.json", navigate=["https://a.test/page/"],
                                 context={}, quiet_ms=quiet)
        assert parse_lab(json.loads(path.read_text())).to_json()["quiet_ms"] == quiet
