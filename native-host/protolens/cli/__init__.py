"""The ``protolens`` command line: one click group; each subcommand lives in its own module here.

To add a command group, write ``protolens/cli/<name>.py`` exposing a click command or group and
add its name to ``_COMMANDS`` below.
"""

from __future__ import annotations

import importlib

import click

from protolens import __version__
from protolens.cli.errors import UserError
from protolens.cli.extras import extra_for, message, needs_extra

# name -> (module, attribute) of every top-level command. Only the command being run is
# imported, so `protolens db stats` does not pay for matplotlib or the proxy.
_COMMANDS: dict[str, tuple[str, str]] = {
    "navigations": ("navigations", "navigations"),
    "show": ("show", "show"),
    "db": ("db", "db_group"),
    "install": ("install_cmds", "install"),
    "uninstall": ("install_cmds", "uninstall"),
    "doctor": ("install_cmds", "doctor"),
    "testbed": ("testbed", "testbed"),
    "lab": ("lab", "lab_group"),
    "report": ("lab", "report_cmd"),
    "policy": ("policy", "policy_group"),
    "relay": ("policy", "relay_cmd"),
    "compare": ("compare", "compare_cmd"),
    "export": ("export", "export_cmd"),
    "merge": ("merge", "merge_cmd"),
    "plot": ("plot", "plot_cmd"),
    "collector": ("collector", "collector_group"),
    "contribute": ("contribute", "contribute_cmd"),
    "cc": ("cc", "cc_group"),
    "replay": ("replay", "replay_cmd"),
}


class _LazyGroup(click.Group):
    def invoke(self, ctx: click.Context) -> object:
        """A bad option value (``--last 0``, ``--metric foo``), a missing argument or an unknown
        command is one line ``error: ...`` like every other mistake (``cli/errors.py``), not
        click's usage block."""
        try:
            return super().invoke(ctx)
        except UserError:
            raise
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
            raise UserError(f"{exc.format_message()} (see: {where} --help)") from None
        except ModuleNotFoundError as exc:  # a library of an extra this install lacks
            name = ctx.invoked_subcommand or ""
            extra = extra_for(name, exc.name or "")
            if extra is None:
                raise
            raise UserError(message(f"protolens {name}", extra)) from None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except UserError:
            raise
        except click.UsageError as exc:
            raise UserError(f"{exc.format_message()} (see: {ctx.command_path} --help)") from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _COMMANDS:
            return None
        module, attr = _COMMANDS[cmd_name]
        try:
            cmd: click.Command = getattr(importlib.import_module(f"protolens.cli.{module}"),
                                         attr)
        except ModuleNotFoundError as exc:
            extra = extra_for(cmd_name, exc.name or "")
            if extra is None:
                raise
            return needs_extra(f"protolens {cmd_name}", extra)
        return cmd


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="protolens")
def main() -> None:
    """ProtoLens: measure HTTP/1.1, HTTP/2 and HTTP/3 page loads.

    Example: protolens navigations --last 10
    """
