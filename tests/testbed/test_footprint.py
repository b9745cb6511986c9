"""What each kind of network leaves on the machine (protolens.testbed.footprint, pure), and how
the stale-network reaper reads a state file: the kind it records (or, for a file written before
the field, what it holds), never the run directory's name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protolens.testbed import procs
from protolens.testbed.footprint import footprint, recorded_kind, recorded_pids
from protolens.testbed.lifecycle import reap_stale, recorded_networks
from protolens.testbed.spec import state_to_json
from protolens.testbed.wan import WanState
from tests.testbed.test_testbed_spec import state as tb_state


def test_a_testbed_owns_three_namespaces_and_nothing_in_the_root_namespace() -> None:
    fp = footprint("testbed", "pl")
    assert fp.namespaces == ("pl-cli", "pl-rtr", "pl-srv")
    assert fp.metric_namespaces == ("pl-cli", "pl-srv")
    assert (fp.root_links, fp.root_routes, fp.rule_tag) == ((), (), None)
    assert fp.run_dir == fp.host_user == "pl"


def test_a_wan_network_owns_a_root_link_a_route_and_tagged_rules() -> None:
    fp = footprint("wan", "pl")
    assert fp.namespaces == ("pl-cli", "pl-rtr")
    assert fp.metric_namespaces == ("pl-cli",)
    assert fp.root_links == ("pl-hw",) and fp.root_routes == ("198.18.1.0/24",)
    assert fp.rule_tag == "protolens-wan-pl"
    assert fp.run_dir == fp.host_user == "wan-pl"


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown kind of network 'lan'"):
        footprint("lan", "pl")


def test_the_kind_comes_from_the_state_not_from_the_folder() -> None:
    assert recorded_kind(json.loads(state_to_json(tb_state()))) == "testbed"
    assert recorded_kind(json.loads(WanState("pl", "eth0", "/r", "/p").to_json())) == "wan"
    # written before states recorded their kind
    assert recorded_kind({"name": "pl", "uplink": "eth0", "shaper_pid": 3}) == "wan"
    assert recorded_kind({"name": "pl", "pids": {}}) == "testbed"
    assert recorded_kind({"name": "pl", "kind": "lan"}) is None


def test_the_processes_whose_death_marks_a_killed_owner() -> None:
    assert recorded_pids({"pids": {"caddy": 10, "shaper": 11}, "cross_pids": [12]}) == [10, 11]
    assert recorded_pids({"shaper_pid": 7}) == [7]
    assert recorded_pids({"shaper_pid": None}) == []


def _write(root: Path, folder: str, text: str) -> None:
    (root / folder).mkdir(parents=True)
    (root / folder / "state.json").write_text(text)


def _dead_pid() -> int:
    pid = 2 ** 22 - 1  # above the default pid_max (2^22): never a live process
    assert not procs.alive(pid)
    return pid


def test_networks_are_found_by_their_recorded_kind(tmp_path: Path) -> None:
    _write(tmp_path, "pl", state_to_json(tb_state(name="pl")))
    _write(tmp_path, "wan-ab", WanState("ab", "eth0", "/r", "/p").to_json())
    _write(tmp_path, "wan-cd", state_to_json(tb_state(name="cd")))  # not where it lives
    _write(tmp_path, "junk", "{not json")
    found = {d: fp.kind for d, fp in recorded_networks(tmp_path)}
    assert found == {"pl": "testbed", "wan-ab": "wan"}


def test_the_reaper_brings_down_a_wan_network_whose_shaper_is_gone(tmp_path: Path) -> None:
    """Its namespaces do not exist here, so taking it down only removes the run directory: what
    matters is that the reaper found it by its kind and its dead process."""
    _write(tmp_path, "wan-zz", WanState("zz", "eth0", "/r", "/p",
                                        shaper_pid=_dead_pid()).to_json())
    _write(tmp_path, "yy", state_to_json(tb_state(name="yy")))  # no process yet: coming up
    done = reap_stale(tmp_path)
    assert done == ["brought down stale wan network 'zz' (its processes were gone)"]
    assert not (tmp_path / "wan-zz").exists() and (tmp_path / "yy").exists()


def test_the_reaper_leaves_the_network_being_brought_up(tmp_path: Path) -> None:
    _write(tmp_path, "zz", state_to_json(tb_state(name="zz", pids={"caddy": _dead_pid()})))
    assert reap_stale(tmp_path, keep="zz") == []
    assert reap_stale(tmp_path) == ["brought down stale testbed 'zz' (its processes were gone)"]
