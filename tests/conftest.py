"""Shared pytest configuration: markers and the path to the repository root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo_root() -> Path:
    return ROOT


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """In CI every dependency is installed by scripts/setup.sh, so a skip means a broken set-up
    (e.g. chromium or caddy missing): report it as a failure instead of hiding it."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where scripts/setup.sh installs everything: " \
                          f"{report.longrepr}"
