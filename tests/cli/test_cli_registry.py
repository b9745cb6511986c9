"""Every registered top-level command imports under its own name and has working --help."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from protolens.cli import _COMMANDS, main


@pytest.mark.parametrize("name", sorted(_COMMANDS))
def test_command_is_registered_under_its_own_name(name: str) -> None:
    cmd = main.get_command(click.Context(main), name)
    assert cmd is not None and cmd.name == name


@pytest.mark.parametrize("name", sorted(_COMMANDS))
def test_every_command_and_subcommand_help_has_an_example(name: str) -> None:
    cmd = main.get_command(click.Context(main), name)
    assert cmd is not None
    paths = [[name]]
    if isinstance(cmd, click.Group):
        paths += [[name, sub] for sub in cmd.list_commands(click.Context(cmd))]
    for path in paths:
        out = CliRunner().invoke(main, [*path, "--help"])
        assert out.exit_code == 0, (path, out.output)
        assert "Example" in out.output, path


def test_unknown_command_is_a_usage_error() -> None:
    out = CliRunner().invoke(main, ["frobnicate"])
    assert out.exit_code == 2
    assert "No such command" in out.output
