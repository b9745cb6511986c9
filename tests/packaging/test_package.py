"""``scripts/package.sh`` as a user without the source tree would use its output.

The script runs for real (webpack, ``python -m build``). The extension zip must be the built
extension with a manifest that lacks only the development ``key``. The wheel is installed with
every extra (``[all]``) with pip into a fresh virtualenv (dependencies from pip's cache or PyPI,
as pipx would). Then, from a
directory outside the checkout with an empty HOME, the installed ``protolens`` must
``install --user-data-dir``, pass ``doctor`` (which starts the host through the registered
wrapper), answer a native-messaging ``hello`` and ``ping`` and store a record sent through the
registered launcher, list it with ``navigations``, refuse ``testbed up`` in one line while the
shaper is not built, and build the shaper from the packaged C sources.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scripts.devkit.navrecord_builder import make_record

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Installed:
    out: Path
    """scripts/package.sh's output directory."""
    venv: Path
    """The fresh virtualenv the wheel went into."""
    env: dict[str, str]
    """An environment with an empty HOME, and no trace of the source checkout."""
    cwd: Path
    """A directory outside the checkout."""

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / "protolens"), *args], cwd=self.cwd,
                              env=self.env, text=True, capture_output=True, timeout=300,
                              check=check)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    tmp = tmp_path_factory.mktemp("package")
    out = tmp / "out"
    subprocess.run(["bash", "scripts/package.sh", str(out)], cwd=ROOT, check=True, timeout=900,
                   capture_output=True, text=True)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    (wheel,) = out.glob("protolens-*.whl")
    # every extra (the lab, research, collector and spark commands); the core alone is
    # tests/packaging/test_core_install.py
    # --no-compile: what the commands import is compiled on first import; compiling every
    # installed file (pyspark's thousands) took 45 s of a 57 s set-up, 24 without
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-compile",
                           "--disable-pip-version-check", f"{wheel}[all]"], text=True,
                          capture_output=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    home = tmp / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": f"{venv / 'bin'}:/usr/bin:/bin:/usr/sbin:/sbin",
           "LANG": "C.UTF-8"}
    cwd = tmp / "elsewhere"
    cwd.mkdir()
    yield Installed(out, venv, env, cwd)


def test_extension_zip_is_dist_without_the_key(installed: Installed) -> None:
    (zipped,) = installed.out.glob("protolens-extension-*.zip")
    with zipfile.ZipFile(zipped) as zf:
        names = sorted(zf.namelist())
        manifest = json.loads(zf.read("manifest.json"))
    source = json.loads((ROOT / "manifest.json").read_text())
    assert "key" in source and "key" not in manifest
    assert manifest == {k: v for k, v in source.items() if k != "key"}
    assert zipped.name == f"protolens-extension-{source['version']}.zip"
    built = sorted(p.relative_to(ROOT / "dist").as_posix() for p in (ROOT / "dist").rglob("*")
                   if p.is_file())
    # dist/node/ is the host's replay script (webpack.config.js), not the extension's
    assert "node/replay.cjs" in built
    assert names == [n for n in built if not n.startswith("node/")]
    assert {"background.js", "popup.html", "waterfall.html"} <= set(names)


def test_the_installed_command_runs_outside_the_checkout(installed: Installed) -> None:
    done = installed.run("--version")
    assert done.stdout.startswith("protolens, version ")
    where = installed.run("--help").stdout
    for command in ("install", "doctor", "navigations", "show", "export", "compare", "testbed"):
        assert command in where
    # the package it runs is the installed one, not this checkout
    origin = subprocess.run([str(installed.venv / "bin" / "python"), "-c",
                             "import protolens; print(protolens.__file__)"], cwd=installed.cwd,
                            env=installed.env, text=True, capture_output=True, check=True)
    assert origin.stdout.startswith(str(installed.venv)) and str(ROOT) not in origin.stdout


def _frame(msg: dict[str, Any]) -> bytes:
    body = json.dumps(msg).encode()
    return struct.pack("<I", len(body)) + body


def _replies(raw: bytes) -> list[dict[str, Any]]:
    out = []
    while raw:
        (n,) = struct.unpack("<I", raw[:4])
        out.append(json.loads(raw[4:4 + n]))
        raw = raw[4 + n:]
    return out


def test_install_doctor_and_a_native_messaging_round_trip(installed: Installed) -> None:
    profile = installed.cwd / "profile"
    done = installed.run("install", "--user-data-dir", str(profile), "--json")
    manifest_path = profile / "NativeMessagingHosts" / "org.protolens.host.json"
    assert manifest_path.is_file(), done.stdout
    manifest = json.loads(manifest_path.read_text())
    wrapper = Path(manifest["path"])
    assert str(installed.venv / "bin" / "python") in wrapper.read_text()

    doctor = installed.run("doctor", "--user-data-dir", str(profile), "--json", check=False)
    checks = json.loads(doctor.stdout)
    assert doctor.returncode == 0, checks
    assert any(c["check"].startswith("host ") and c["status"] == "ok" and "pong" in c["detail"]
               for c in checks)

    # as Chromium does: run the manifest's path with the caller's origin, talk over stdio
    record = make_record(4, seed=141)
    msgs = [{"type": "hello", "schema": 1, "extension_version": "0.1.0",
             "extension_id": "ncpedlfcmhdmaokpoalfngkhdlamknob"},
            {"type": "ping", "schema": 1},
            {"type": "record", "schema": 1, "msg_id": "m1", "record": record}]
    host = subprocess.run([str(wrapper), manifest["allowed_origins"][0]],
                          input=b"".join(_frame(m) for m in msgs), env=installed.env,
                          cwd=installed.cwd, capture_output=True, timeout=120)
    replies = _replies(host.stdout)
    types = [r["type"] for r in replies]
    assert types[0] == "hello" and replies[0]["host_version"] == "0.1.0"
    assert "pong" in types
    ack = next(r for r in replies if r["type"] == "ack")
    assert ack["id"] == record["id"] and ack["duplicate"] is False

    listed = json.loads(installed.run("navigations", "--json").stdout)
    assert [n["id"] for n in listed] == [record["id"]]
    db = Path(installed.env["HOME"]) / ".local" / "share" / "protolens" / "protolens.db"
    assert db.is_file()


def test_testbed_up_without_the_shaper_says_so_in_one_line(installed: Installed) -> None:
    done = installed.run("testbed", "up", "--name", "tlpkg", check=False)
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "shaper" in done.stderr and "testbed build" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("make") is None,
                    reason="the shaper's build tools (scripts/setup.sh installs them)")
def test_testbed_build_compiles_the_packaged_sources(installed: Installed) -> None:
    done = installed.run("testbed", "build", check=False)
    assert done.returncode == 0, done.stderr
    binary = Path(installed.env["HOME"]) / ".local/share/protolens/shaper/protolens-shaper"
    assert binary.is_file() and os.access(binary, os.X_OK)
