"""``--allow-domains FILE``, read once for ``export`` and ``contribute``: the domains of a
top-sites CSV or a plain list, and one line (exit 2) for a file that cannot be read, whichever
command was given it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.cli.allowlist import read_allowlist
from protolens.cli.errors import UserError
from scripts.devkit.store_builder import campaign_store


def test_the_file_gives_registrable_domains(tmp_path: Path) -> None:
    f = tmp_path / "top.csv"
    f.write_text("1,example.org\n2,192.168.1.1\n# a comment\nco.uk\n")
    assert read_allowlist(f) == frozenset({"example.org", "co.uk"})
    assert read_allowlist(None) == frozenset()
    f.write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(UserError, match="cannot read the allowlist"):
        read_allowlist(f)


@pytest.mark.parametrize("args", [
    ["export", "--preview"],
    ["contribute", "--to", "https://collector.example", "--token", "plc_x"],
])
def test_an_unreadable_allowlist_is_one_line_for_every_command(tmp_path: Path,
                                                                args: list[str]) -> None:
    db = tmp_path / "s.db"
    campaign_store(db, reps=1)
    missing = tmp_path / "missing.csv"
    r = CliRunner().invoke(main, [*args, "--allow-domains", str(missing), "--db", str(db)])
    assert r.exit_code == 2, r.output
    assert f"error: {missing}: cannot read the allowlist" in r.output
