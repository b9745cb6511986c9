"""The ``protolens`` command line: one click group; each subcommand lives in its own module here.

To add a command group, write ``protolens/cli/<name>.py`` exposing a click command or group and
add it to ``_COMMANDS`` below.
"""

from __future__ import annotations

import importlib

import click

from protolens import __version__

# (module, attribute) of every top-level command. Imported lazily so `--help` stays fast.
_COMMANDS: list[tuple[str, str]] = [
    ("navigations", "navigations"),
    ("show", "show"),
    ("db", "db_group"),
    ("install_cmds", "install"),
    ("install_cmds", "uninstall"),
    ("install_cmds", "doctor"),
    ("testbed", "testbed"),
    ("lab", "lab_group"),
    ("lab", "report_cmd"),
    ("policy", "policy_group"),
    ("policy", "relay_cmd"),
    ("compare", "compare_cmd"),
    ("export", "export_cmd"),
    ("merge", "merge_cmd"),
    ("plot", "plot_cmd"),
]


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self._load().keys())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self._load().get(cmd_name)

    def _load(self) -> dict[str, click.Command]:
        found: dict[str, click.Command] = {}
        for module, attr in _COMMANDS:
            cmd = getattr(importlib.import_module(f"protolens.cli.{module}"), attr)
            found[cmd.name or attr] = cmd
        return found


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="protolens")
def main() -> None:
    """ProtoLens: measure HTTP/1.1, HTTP/2 and HTTP/3 page loads.

    Example: protolens navigations --last 10
    """
