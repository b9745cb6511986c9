"""Shared pytest configuration: markers and the path to the repository root."""

from __future__ import annotations

import os
import shutil
import subprocess
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


SLOW_FILES_FIRST = (
    "tests/packaging/test_package.py", "tests/collector/test_spark_engine.py",
    "tests/collector/test_collector_many.py", "tests/packaging/test_core_install.py",
    "tests/analysis/test_bootstrap.py", "tests/host/test_host_fuzz.py",
    "tests/share/test_har_export.py", "tests/collector/test_collector_crash.py",
)
"""The unit stage's longest files (scripts/test.sh's ``--durations``: 20-110 s each, against a
few seconds for most), handed to the xdist workers first so that none of them is left running
alone at the end."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadfile`` hands out whole files in collection order) the
    slow files come first; a plain run keeps pytest's order. Files share nothing (scripts/test.sh),
    so their order does not change what they test."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: i for i, name in enumerate(SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.relative_to(ROOT).as_posix(), len(rank)))


def pytest_sessionstart(session: pytest.Session) -> None:
    """The shaper helper is built by an explicit step, never by the program (issue 12 Sec. 4):
    the suite takes that step itself, as scripts/setup.sh does, so a test never meets a helper
    older than its sources (``find_binary`` refuses one). A no-op when it is up to date."""
    shaper = ROOT / "native-host" / "shaper"
    if shutil.which("make") and shutil.which("gcc") and (shaper / "Makefile").exists():
        subprocess.run(["make", "-s", "-C", str(shaper)], capture_output=True, check=False)
