"""The wan network's name servers (``testbed/wan.py``, pure parts): which of the host's resolvers
a namespace can reach, and the list written for the client namespace."""

from __future__ import annotations

from pathlib import Path

from protolens.testbed.wan import nameservers, resolv_conf


def test_loopback_stubs_are_left_out() -> None:
    text = ("# generated\nnameserver 127.0.0.53\nnameserver ::1\nnameserver 10.0.0.2\n"
            "options edns0\nnameserver fe80::1%eth0\nnameserver not-an-ip\nsearch lan\n")
    assert nameservers(text) == ["10.0.0.2", "fe80::1%eth0"]


def test_given_resolvers_win_over_the_hosts(tmp_path: Path) -> None:
    host = tmp_path / "resolv.conf"
    host.write_text("nameserver 10.0.0.2\n")
    assert resolv_conf(["198.18.6.53"], [host]) == "nameserver 198.18.6.53\n"


def test_the_first_host_file_with_a_reachable_server_is_used(tmp_path: Path) -> None:
    stub, behind = tmp_path / "stub.conf", tmp_path / "behind.conf"
    stub.write_text("nameserver 127.0.0.53\n")  # systemd-resolved's stub
    behind.write_text("nameserver 192.0.2.1\n")
    assert resolv_conf([], [tmp_path / "missing", stub, behind]) == "nameserver 192.0.2.1\n"
    assert resolv_conf([], [stub]) is None
