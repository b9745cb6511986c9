"""The shaper helper is built by an explicit step (``protolens testbed build`` for an installed
package, scripts/setup.sh in a checkout) and never by the running program: ``testbed up`` without
a built helper, or with one older than its sources, stops in one line before creating anything."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.shaper import build
from protolens.shaper.build import ShaperError, find_binary, missing_build_deps

TREE = Path(__file__).resolve().parents[2] / "native-host" / "shaper"


@pytest.fixture
def packaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the C sources with no build in it, standing in for an installed package's."""
    src = tmp_path / "csrc"
    shutil.copytree(TREE, src, ignore=shutil.ignore_patterns("build"))
    monkeypatch.setattr(build, "source_dir", lambda: src)
    monkeypatch.delenv("PROTOLENS_SHAPER", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return src


def test_missing_helper_is_one_line_and_nothing_is_built(packaged: Path) -> None:
    with pytest.raises(ShaperError) as e:
        find_binary()
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("the shaper helper is not built: run protolens "
                                              "testbed build")
    assert not (packaged / "build").exists()
    assert not list((packaged.parent / "data").rglob("protolens-shaper"))


def test_missing_helper_also_names_missing_build_dependencies(
        packaged: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "missing_build_deps", lambda: ["gcc", "libnetfilter-queue-dev"])
    with pytest.raises(ShaperError) as e:
        find_binary()
    assert str(e.value) == ("the shaper helper is not built: run protolens testbed build (or "
                            "scripts/setup.sh in a source checkout); its build needs: apt install "
                            "gcc libnetfilter-queue-dev")


def test_missing_build_dependencies_are_named(tmp_path: Path) -> None:
    assert missing_build_deps(lambda tool: None, tmp_path / "none.h") == [
        "make", "gcc", "pkg-config", "libnetfilter-queue-dev"]
    assert missing_build_deps(lambda tool: f"/usr/bin/{tool}", tmp_path / "none.h") == [
        "libnetfilter-queue-dev"]


def test_build_refuses_in_one_line_without_its_dependencies(
        packaged: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "missing_build_deps", lambda: ["gcc", "libnetfilter-queue-dev"])
    r = CliRunner().invoke(main, ["testbed", "build"])
    assert r.exit_code != 0
    assert r.output.strip().splitlines() == [
        "error: cannot build the shaper helper: apt install gcc libnetfilter-queue-dev"]


@pytest.mark.skipif(missing_build_deps() != [], reason="needs gcc, make, libnetfilter-queue-dev")
def test_testbed_build_compiles_into_the_user_directory(packaged: Path) -> None:
    r = CliRunner().invoke(main, ["testbed", "build"])
    assert r.exit_code == 0, r.output
    binary = packaged.parent / "data" / "protolens" / "shaper" / "protolens-shaper"
    assert r.output.strip() == f"built {binary}"
    assert os.access(binary, os.X_OK) and not (packaged / "build").exists()
    assert find_binary() == binary
    p = subprocess.run([str(binary), "--bogus"], capture_output=True, text=True, timeout=10)
    assert p.returncode == 2 and p.stderr.startswith("protolens-shaper: usage:")
    # A source changed after the build: the stale helper is refused, not rebuilt.
    later = binary.stat().st_mtime + 10
    os.utime(packaged / "model.c", (later, later))
    with pytest.raises(ShaperError, match="older than its sources: run protolens testbed build"):
        find_binary()


@pytest.mark.skipif(os.geteuid() != 0, reason="testbed commands need root")
def test_testbed_up_without_helper_says_so_and_creates_nothing(packaged: Path) -> None:
    r = CliRunner().invoke(main, ["testbed", "up", "--name", "shnb"])
    assert r.exit_code != 0
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "the shaper helper is not built" in lines[0]
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "shnb-" not in netns
