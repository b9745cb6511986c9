"""The volunteer's install: the wheel's core alone (no extras) in a fresh virtualenv, from the
wheel and the locked requirements (docs/PACKAGING.md). It must stay under ``MAX_MB`` on disk
with pip itself, and record: ``--help``, ``install`` and ``doctor`` (which starts the host), a
native-messaging round trip through the registered launcher that stores a record, ``export`` of
that record as a bundle (written without pyarrow, read back by the full install's pyarrow), and
one line naming the extra for a command that needs one.

Offline-capable: the wheel (built by pip from a copy of native-host/, its build backend setuptools
in pip's isolated build environment) and the dependencies come from PyPI, pinned by
``native-host/requirements.lock`` (pip's cache makes a second run fast), or, with
``PROTOLENS_WHEELHOUSE=DIR``, only from wheels already downloaded into DIR (``--no-index``;
docs/PACKAGING.md says how to fill it). Costs about 15-30 s (a virtualenv, about 25 MB of
wheels).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from protolens.share.bundle import read_bundle
from scripts.devkit.navrecord_builder import make_record

ROOT = Path(__file__).resolve().parents[2]
MAX_MB = 150
EXTENSION = "ncpedlfcmhdmaokpoalfngkhdlamknob"


@dataclass
class Core:
    venv: Path
    env: dict[str, str]
    cwd: Path
    install_s: float

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / "protolens"), *args], cwd=self.cwd,
                              env=self.env, text=True, capture_output=True, timeout=300,
                              check=check)


def _du_mb(path: Path) -> float:
    return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_symlink()) / 1e6


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Core]:
    tmp = tmp_path_factory.mktemp("core")
    src = tmp / "src"  # a copy: an in-tree build would leave build/ in the checkout
    shutil.copytree(ROOT / "native-host", src, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "work", "*.o"))
    where = os.environ.get("PROTOLENS_WHEELHOUSE")
    source = ["--no-index", "--find-links", where] if where else []
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                            "--disable-pip-version-check", *source, "-w", str(tmp / "dist"),
                            str(src)], text=True, capture_output=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp / "dist").glob("protolens-*.whl")
    venv = tmp / "venv"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q",
                           "--disable-pip-version-check", *source, "-c",
                           str(ROOT / "native-host" / "requirements.lock"), str(wheel)],
                          text=True, capture_output=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    install_s = time.monotonic() - started
    home = tmp / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": f"{venv / 'bin'}:/usr/bin:/bin", "LANG": "C.UTF-8"}
    cwd = tmp / "elsewhere"
    cwd.mkdir()
    yield Core(venv, env, cwd, install_s)


def test_the_core_is_small_and_has_no_extra(core: Core) -> None:
    size = _du_mb(core.venv)
    print(f"core install: {size:.1f} MB in {core.install_s:.1f} s (venv + pip install)")
    assert size < MAX_MB, f"{size:.1f} MB"
    probe = subprocess.run([str(core.venv / "bin" / "python"), "-c",
                            "import importlib.util as u; print([m for m in ('pyarrow', 'numpy', "
                            "'scipy', 'matplotlib', 'duckdb', 'pyspark', 'starlette', "
                            "'cryptography', 'aioquic', 'PIL') if u.find_spec(m)])"],
                           cwd=core.cwd, env=core.env, text=True, capture_output=True,
                           check=True)
    assert probe.stdout.strip() == "[]"


def test_help_lists_every_command_and_names_the_extras(core: Core) -> None:
    out = core.run("--help").stdout
    for command in ("install", "doctor", "navigations", "show", "export", "contribute",
                    "relay", "compare", "lab", "collector"):
        assert command in out
    assert "(needs protolens[research])" in out and "(needs protolens[lab])" in out


@pytest.mark.parametrize("argv,extra", [
    (["compare", "--campaign", "x"], "research"), (["report", "--campaign", "x"], "research"),
    (["lab", "run", "--pages", "x"], "lab"), (["testbed", "up", "--name", "x"], "lab"),
    (["collector", "serve", "--data", "x"], "collector"),
    (["policy", "suggest", "--source", "passive"], "research"),
])
def test_a_command_without_its_extra_says_which_in_one_line(core: Core, argv: list[str],
                                                            extra: str) -> None:
    done = core.run(*argv, check=False)
    assert done.returncode == 2
    assert done.stderr == f"error: protolens {argv[0]} needs the {extra} extra: pip install " \
                          f"'protolens[{extra}]'\n", done.stderr


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


def test_install_doctor_round_trip_and_export_without_pyarrow(core: Core) -> None:
    profile = core.cwd / "profile"
    core.run("install", "--user-data-dir", str(profile), "--json")
    manifest = json.loads((profile / "NativeMessagingHosts" / "org.protolens.host.json")
                          .read_text())
    doctor = core.run("doctor", "--user-data-dir", str(profile), "--json", check=False)
    checks = json.loads(doctor.stdout)
    assert doctor.returncode == 0, checks
    assert any(c["check"].startswith("host ") and c["status"] == "ok" for c in checks)

    record = make_record(4, seed=151)
    msgs = [{"type": "hello", "schema": 1, "extension_version": "0.1.0",
             "extension_id": EXTENSION},
            {"type": "ping", "schema": 1},
            {"type": "record", "schema": 1, "msg_id": "m1", "record": record}]
    host = subprocess.run([manifest["path"], manifest["allowed_origins"][0]],
                          input=b"".join(_frame(m) for m in msgs), env=core.env, cwd=core.cwd,
                          capture_output=True, timeout=120)
    replies = _replies(host.stdout)
    types = [r["type"] for r in replies]
    assert types[0] == "hello" and "pong" in types, replies
    ack = next(r for r in replies if r["type"] == "ack")
    assert ack["id"] == record["id"] and ack["duplicate"] is False
    listed = json.loads(core.run("navigations", "--json").stdout)
    assert [n["id"] for n in listed] == [record["id"]]

    out = core.cwd / "mine.tar"
    core.run("export", "--out", str(out))
    bundle = read_bundle(out)  # this checkout's pyarrow reads what the core wrote without it
    assert bundle.tables["navigations"].column("id").to_pylist() == [record["id"]]
    assert bundle.tables["requests"].num_rows == 4


def test_the_core_contributes_to_a_real_collector(core: Core, tmp_path: Path) -> None:
    """The collector (this checkout, with its extra) on loopback with TLS; the core uploads."""
    from scripts.devkit.collector import running_collector, small_store

    db = small_store(tmp_path / "s.db", n=5)
    with running_collector(tmp_path) as c:
        token = c.token("vol-core")
        env = {**core.env, "PROTOLENS_DB": str(db), "PROTOLENS_CA_CERT": str(c.ca)}
        done = subprocess.run([str(core.venv / "bin" / "protolens"), "contribute", "--to",
                               c.url, "--token", token, "--json"], cwd=core.cwd, env=env,
                              text=True, capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr
        files = list((c.data / "dataset").glob("table=navigations/*/*.parquet"))
        assert len(files) == 1  # accepted: the collector checked the core's bundle and stored it
        assert read_bundle_rows(files[0]) == 5


def read_bundle_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return int(pq.read_table(path).num_rows)
