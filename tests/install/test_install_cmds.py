"""install / uninstall / doctor in a scratch HOME; Windows registry content as pure text."""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
from pathlib import Path, PureWindowsPath

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.install.doctor import check_manifest
from protolens.install.extension_id import (
    PROTOLENS_EXTENSION_ID,
    extension_id_from_key,
    extension_id_from_manifest,
)
from protolens.install.locations import BROWSERS, manifest_dirs, registry_keys, targets
from protolens.install.manifest import posix_wrapper
from protolens.install.plan import plan_install
from protolens.install.windows import install_reg, uninstall_reg

ORIGIN = "chrome-extension://ncpedlfcmhdmaokpoalfngkhdlamknob/"


def test_extension_id_from_repo_manifest(repo_root: Path) -> None:
    text = (repo_root / "manifest.json").read_text()
    assert extension_id_from_manifest(text) == PROTOLENS_EXTENSION_ID == \
        "ncpedlfcmhdmaokpoalfngkhdlamknob"


def test_extension_id_depends_on_key_and_uses_letters_a_to_p() -> None:
    other = extension_id_from_key(base64.b64encode(b"another key").decode())
    assert other != PROTOLENS_EXTENSION_ID and len(other) == 32
    assert set(other) <= set("abcdefghijklmnop")
    with pytest.raises(ValueError, match="not base64"):
        extension_id_from_key("***")
    with pytest.raises(ValueError, match="no \"key\""):
        extension_id_from_manifest('{"name": "x"}')


def test_linux_locations() -> None:
    env = {"HOME": "/home/u"}
    assert manifest_dirs("chromium", "linux", env, False) == [
        Path("/home/u/.config/chromium/NativeMessagingHosts")]
    assert manifest_dirs("chrome", "linux", env, False) == [
        Path("/home/u/.config/google-chrome/NativeMessagingHosts")]
    assert manifest_dirs("brave", "linux", env, False) == [
        Path("/home/u/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts")]
    assert manifest_dirs("edge", "linux", env, False) == [
        Path("/home/u/.config/microsoft-edge/NativeMessagingHosts")]
    assert manifest_dirs("chromium", "linux", {**env, "XDG_CONFIG_HOME": "/x"}, False) == [
        Path("/x/chromium/NativeMessagingHosts")]
    assert manifest_dirs("chromium", "linux", env, True) == [
        Path("/etc/chromium/native-messaging-hosts")]
    assert manifest_dirs("chrome", "linux", env, True) == [
        Path("/etc/opt/chrome/native-messaging-hosts")]
    assert manifest_dirs("edge", "linux", env, True) == [
        Path("/etc/opt/edge/native-messaging-hosts")]


def test_macos_locations() -> None:
    env = {"HOME": "/Users/u"}
    support = Path("/Users/u/Library/Application Support")
    assert manifest_dirs("chrome", "darwin", env, False) == [
        support / "Google/Chrome/NativeMessagingHosts"]
    assert manifest_dirs("chromium", "darwin", env, False) == [
        support / "Chromium/NativeMessagingHosts"]
    assert manifest_dirs("edge", "darwin", env, False) == [
        support / "Microsoft Edge/NativeMessagingHosts"]
    assert support / "Google/Chrome/NativeMessagingHosts" in manifest_dirs(
        "brave", "darwin", env, False)
    assert manifest_dirs("chrome", "darwin", env, True) == [
        Path("/Library/Google/Chrome/NativeMessagingHosts")]
    assert manifest_dirs("chromium", "darwin", env, True) == [
        Path("/Library/Application Support/Chromium/NativeMessagingHosts")]


def test_targets_dedupe_and_reject_unknowns() -> None:
    env = {"HOME": "/Users/u"}
    found = targets("darwin", env)
    places = [t.location for t in found]
    assert len(places) == len(set(places)) == 4  # brave's Chrome dir is listed once, by chrome
    assert [t.browser for t in found].count("brave") == 1
    assert len(targets("darwin", env, ("brave",))) == 2
    with pytest.raises(ValueError, match="unknown browser"):
        manifest_dirs("firefox", "linux", env, False)
    with pytest.raises(ValueError, match="unsupported platform"):
        targets("sunos", env)
    custom = targets("linux", env, user_data_dir=Path("/p"))
    assert [(t.scope, t.location) for t in custom] == [("profile", "/p/NativeMessagingHosts")]


def test_windows_registry_content() -> None:
    keys = registry_keys("chrome", False) + registry_keys("edge", True)
    assert keys == ["HKEY_CURRENT_USER\\Software\\Google\\Chrome\\NativeMessagingHosts",
                    "HKEY_LOCAL_MACHINE\\Software\\Microsoft\\Edge\\NativeMessagingHosts"]
    text = install_reg(keys, 'C:\\Users\\me\\AppData\\Local\\protolens\\org.protolens.host.json')
    lines = text.split("\r\n")
    assert lines[0] == "Windows Registry Editor Version 5.00"
    assert ("[HKEY_CURRENT_USER\\Software\\Google\\Chrome\\NativeMessagingHosts\\"
            "org.protolens.host]") in lines
    assert '@="C:\\\\Users\\\\me\\\\AppData\\\\Local\\\\protolens\\\\org.protolens.host.json"' \
        in lines
    removal = uninstall_reg(keys).split("\r\n")
    assert ("[-HKEY_LOCAL_MACHINE\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\"
            "org.protolens.host]") in removal
    assert not any(line.startswith("[-") and line.endswith("NativeMessagingHosts]")
                   for line in removal)  # never deletes the browsers' parent keys
    assert '\\"' in install_reg(keys, 'C:\\odd"name.json')


def test_windows_plan() -> None:
    env = {"LOCALAPPDATA": "C:\\Users\\me\\AppData\\Local"}
    plan = plan_install("win32", env, "C:\\Python\\python.exe", ("chromium", "brave"))
    names = [PureWindowsPath(f.path).name for f in plan.files]
    assert names == ["org.protolens.host.bat", "org.protolens.host.json", "install.reg",
                     "uninstall.reg"]
    manifest = json.loads(plan.files[1].content)
    assert manifest["path"] == "C:\\Users\\me\\AppData\\Local\\protolens\\org.protolens.host.bat"
    assert manifest["allowed_origins"] == [ORIGIN]
    assert '"C:\\Python\\python.exe" -m protolens.host %*' in plan.files[0].content
    assert len(plan.registry_keys) == 3  # chromium, brave's own, brave via Chrome's key
    assert all(k.endswith("\\org.protolens.host") for k in plan.registry_keys)


def test_wrapper_rejects_bad_env_names() -> None:
    with pytest.raises(ValueError, match="not valid"):
        posix_wrapper("/usr/bin/python3", {"A B": "x"})
    assert "export PROTOLENS_DB='/tmp/a b.db'" in posix_wrapper("/p", {"PROTOLENS_DB":
                                                                       "/tmp/a b.db"})


@pytest.mark.parametrize(("text", "needle"), [
    ("{", "not valid JSON"),
    ("[]", "not a JSON object"),
    (json.dumps({"name": "x", "type": "stdio", "path": "/a", "allowed_origins": [ORIGIN]}),
     "name is 'x'"),
    (json.dumps({"name": "org.protolens.host", "type": "stdio", "path": "/a",
                 "allowed_origins": ["chrome-extension://aaaa/"]}), "extension ID mismatch"),
    (json.dumps({"name": "org.protolens.host", "type": "stdio", "path": "rel.sh",
                 "allowed_origins": [ORIGIN]}), "not absolute"),
])
def test_check_manifest_problems(text: str, needle: str) -> None:
    assert any(needle in p for p in check_manifest(text))


def test_check_manifest_accepts_good() -> None:
    good = {"name": "org.protolens.host", "type": "stdio", "path": "/a",
            "allowed_origins": [ORIGIN]}
    assert check_manifest(json.dumps(good)) == []


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home/.config"),
            "XDG_DATA_HOME": str(tmp_path / "home/.local/share"),
            "XDG_CACHE_HOME": str(tmp_path / "home/.cache"), "PROTOLENS_DB": ""}


def run(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")} if root.exists() else set()


@pytest.mark.parametrize("argv", [["install"], ["uninstall"], ["doctor"]])
def test_help_has_an_example(argv: list[str]) -> None:
    result = CliRunner().invoke(main, [*argv, "--help"])
    assert result.exit_code == 0 and f"Example: protolens {argv[0]}" in result.stdout


def ping_through(wrapper: str, env: dict[str, str]) -> dict[str, object]:
    msg = b'{"type":"ping","schema":1}'
    out = subprocess.run([wrapper, ORIGIN], input=struct.pack("<I", len(msg)) + msg,
                         capture_output=True, timeout=30, env={**os.environ, **env}).stdout
    result: dict[str, object] = json.loads(out[4:])
    return result


def test_linux_install_doctor_uninstall_round_trip(home: dict[str, str]) -> None:
    root = Path(home["HOME"])
    root.mkdir()
    (root / ".config").mkdir()
    (root / ".config" / "unrelated.txt").write_text("keep me")
    before = tree(root)
    code, out, _ = run(home, "install", "--json")
    assert code == 0
    written = [a["where"] for a in json.loads(out)]
    assert len(written) == 5
    manifests = [Path(w) for w in written if w.endswith(".json")]
    assert {m.parent.parent.name for m in manifests} == {
        "chromium", "google-chrome", "Brave-Browser", "microsoft-edge"}
    data = json.loads(manifests[0].read_text())
    assert data["name"] == "org.protolens.host" and data["allowed_origins"] == [ORIGIN]
    assert data["type"] == "stdio"
    assert ping_through(data["path"], home) == {"type": "pong", "schema": 1}

    code, out, _ = run(home, "doctor", "--json")
    checks = json.loads(out)
    assert code == 0, checks
    by_status = {c["check"]: c["status"] for c in checks}
    assert by_status["extension id"] == "ok" and by_status["chromium (user)"] == "ok"
    assert any(c["check"].startswith("host ") and c["status"] == "ok" for c in checks)
    db = Path(home["XDG_DATA_HOME"]) / "protolens" / "protolens.db"
    assert not db.exists()  # the probe's ping never creates the store

    code, out, _ = run(home, "uninstall", "--json")
    assert code == 0
    assert {a["where"] for a in json.loads(out) if a["action"] == "removed"} >= set(written)
    assert tree(root) == before


def test_macos_paths_in_scratch_home(home: dict[str, str]) -> None:
    code, out, _ = run(home, "install", "--platform", "darwin", "--browser", "chrome", "--json")
    assert code == 0
    where = [a["where"] for a in json.loads(out)]
    support = Path(home["HOME"]) / "Library" / "Application Support"
    assert where == [str(support / "protolens" / "org.protolens.host.sh"),
                     str(support / "Google/Chrome/NativeMessagingHosts/org.protolens.host.json")]
    code, _, _ = run(home, "uninstall", "--platform", "darwin")
    assert code == 0 and not (support / "Google").exists()


def test_user_data_dir_install(home: dict[str, str], tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    code, out, _ = run(home, "install", "--user-data-dir", str(profile), "--json")
    assert code == 0
    assert (profile / "NativeMessagingHosts" / "org.protolens.host.json").is_file()
    assert not (Path(home["XDG_CONFIG_HOME"]) / "chromium").exists()
    code, out, _ = run(home, "doctor", "--user-data-dir", str(profile), "--no-probe", "--json")
    assert code == 0 and json.loads(out)[1]["status"] == "ok"


STORE_ID = "abcdefghijklmnopabcdefghijklmnop"


def test_install_allows_the_published_extension_id(home: dict[str, str], tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    code, _, _ = run(home, "install", "--user-data-dir", str(profile), "--extension-id",
                     STORE_ID)
    assert code == 0
    manifest = json.loads((profile / "NativeMessagingHosts" / "org.protolens.host.json")
                          .read_text())
    assert manifest["allowed_origins"] == [ORIGIN, f"chrome-extension://{STORE_ID}/"]
    code, out, _ = run(home, "doctor", "--user-data-dir", str(profile), "--no-probe", "--json")
    assert code == 0 and json.loads(out)[1]["status"] == "ok"


@pytest.mark.parametrize("bad", ["ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP", "abc",
                                 "qbcdefghijklmnopabcdefghijklmnop"])
def test_install_rejects_a_malformed_extension_id(home: dict[str, str], tmp_path: Path,
                                                  bad: str) -> None:
    profile = tmp_path / "profile"
    code, _, err = run(home, "install", "--user-data-dir", str(profile), "--extension-id", bad)
    assert code == 2 and "--extension-id" in err and err.count("\n") == 1
    assert not profile.exists()


def test_uninstall_keeps_files_changed_since_install(home: dict[str, str]) -> None:
    run(home, "install", "--browser", "chromium")
    manifest = Path(home["XDG_CONFIG_HOME"]) / "chromium" / "NativeMessagingHosts" \
        / "org.protolens.host.json"
    manifest.write_text('{"edited": true}')
    code, out, _ = run(home, "uninstall", "--json")
    actions = {a["where"]: a for a in json.loads(out)}
    assert code == 0 and actions[str(manifest)]["action"] == "kept"
    assert manifest.read_text() == '{"edited": true}'


def test_uninstall_without_install_is_an_error(home: dict[str, str]) -> None:
    code, _, err = run(home, "uninstall")
    assert code == 2 and err.startswith("error: nothing to uninstall")


def test_doctor_reports_broken_manifest_with_fix(home: dict[str, str]) -> None:
    run(home, "install", "--browser", "edge")
    manifest = Path(home["XDG_CONFIG_HOME"]) / "microsoft-edge/NativeMessagingHosts" \
        / "org.protolens.host.json"
    data = json.loads(manifest.read_text())
    data["allowed_origins"] = ["chrome-extension://abcdefghabcdefghabcdefghabcdefgh/"]
    manifest.write_text(json.dumps(data))
    code, out, _ = run(home, "doctor", "--no-probe", "--json")
    edge = next(c for c in json.loads(out) if c["check"] == "edge (user)")
    assert code == 1 and edge["status"] == "fail"
    assert "extension ID mismatch" in edge["detail"]
    assert edge["fix"] == "protolens install --browser edge"


def test_doctor_with_nothing_installed_fails(home: dict[str, str]) -> None:
    code, out, _ = run(home, "doctor", "--no-probe", "--json")
    checks = json.loads(out)
    assert code == 1
    assert any(c["check"] == "installed" and c["fix"] == "protolens install" for c in checks)


def test_doctor_probe_catches_a_broken_wrapper(home: dict[str, str]) -> None:
    run(home, "install", "--browser", "chromium")
    wrapper = Path(home["XDG_DATA_HOME"]) / "protolens" / "org.protolens.host.sh"
    wrapper.write_text("#!/bin/sh\necho oops >&2\nexit 3\n")
    code, out, _ = run(home, "doctor", "--json")
    host = next(c for c in json.loads(out) if c["check"].startswith("host "))
    assert code == 1 and host["status"] == "fail" and "exit 3" in host["detail"]


def test_install_option_errors(home: dict[str, str], tmp_path: Path) -> None:
    code, _, err = run(home, "install", "--system", "--user-data-dir", str(tmp_path))
    assert code == 2 and "exclude each other" in err
    code, _, err = run(home, "install", "--platform", "win32")
    assert code == 2 and "only be applied on Windows" in err
    code, _, err = run(home, "install", "--browser", "firefox")
    assert code == 2 and "firefox" in err


def test_browsers_constant_matches_issue() -> None:
    assert set(BROWSERS) == {"chromium", "chrome", "brave", "edge"}
