"""Chromium command lines per arm (pure)."""

from __future__ import annotations

import pytest

from protolens.arms import Arm, ArmError, parse_lab_arm
from protolens.browser.flags import LaunchSpec, UnknownArm, arm_flags, command_line


def spec(arm: str, origins: tuple[str, ...] = ("a.test:443", "b.test:443")) -> LaunchSpec:
    return LaunchSpec(chromium="/usr/bin/chromium", user_data_dir="/tmp/p", extension_dir="/x/dist",
                      arm=parse_lab_arm(arm), origins=origins, spki=("AAA=", "BBB="),
                      host_rules="MAP *.test 10.0.0.2")


@pytest.mark.parametrize(("arm", "expected"), [
    ("h1", ["--disable-http2", "--disable-quic"]),
    ("h2", ["--disable-quic"]),
    ("h3", ["--enable-quic", "--origin-to-force-quic-on=a.test:443,b.test:443"]),
    ("proxy-h3", ["--disable-quic"]),
    ("h2-parallel:2", ["--disable-quic"]),
])
def test_arm_flags_match_the_verified_table(arm: str, expected: list[str]) -> None:
    assert arm_flags(parse_lab_arm(arm), ["a.test:443", "b.test:443"]) == expected


def test_unknown_arm_and_h3_without_origins_are_errors() -> None:
    with pytest.raises(ArmError, match="unknown arm 'h4'"):
        spec("h4")
    with pytest.raises(UnknownArm, match="no-h3: a policy rule's arm"):
        arm_flags(Arm("no-h3"), [])
    with pytest.raises(UnknownArm, match="at least one origin"):
        arm_flags(Arm("h3"), [])


def test_command_line_loads_only_our_extension_in_the_given_profile() -> None:
    argv = command_line(spec("h2"))
    assert argv[0] == "/usr/bin/chromium"
    assert "--user-data-dir=/tmp/p" in argv
    assert "--load-extension=/x/dist" in argv and "--disable-extensions-except=/x/dist" in argv
    assert "--ignore-certificate-errors-spki-list=AAA=,BBB=" in argv
    assert "--host-resolver-rules=MAP *.test 10.0.0.2" in argv
    assert "--disable-background-networking" in argv
    assert argv[-1] == "about:blank"
    assert "--enable-quic" not in argv and "--disable-quic" in argv
