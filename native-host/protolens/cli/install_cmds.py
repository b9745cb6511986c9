"""``protolens install`` / ``uninstall`` / ``doctor``: register the native host with browsers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.install.doctor import diagnose
from protolens.install.files import InstallError, apply_install, apply_uninstall
from protolens.install.locations import BROWSERS, PLATFORMS, support_dir
from protolens.install.manifest import EXTENSION_ID
from protolens.install.plan import RECEIPT_NAME, plan_install


def _platform(value: str | None) -> str:
    if value:
        return value
    return "darwin" if sys.platform == "darwin" else "win32" if sys.platform == "win32" else "linux"


_platform_option = click.option(
    "--platform", "platform", type=click.Choice(PLATFORMS), default=None, hidden=True,
    help="Act as if on this OS (tests; paths only).")
_udd_option = click.option(
    "--user-data-dir", "user_data_dir", type=click.Path(file_okay=False, path_type=Path),
    default=None, help="A custom Chromium profile: register in DIR/NativeMessagingHosts/ only.")


@click.command("install")
@click.option("--browser", "browsers", type=click.Choice(BROWSERS), multiple=True,
              help="Only this browser (repeatable). Default: all of " + ", ".join(BROWSERS) + ".")
@click.option("--system", is_flag=True, help="System-wide manifest directories (needs root).")
@_udd_option
@click.option("--extension-id", "extension_ids", multiple=True, metavar="ID",
              help="Also allow this extension ID (repeatable): the ID the Chrome Web Store gave "
                   "the published ProtoLens (docs/PACKAGING.md).")
@_platform_option
@output_options
def install(browsers: tuple[str, ...], system: bool, user_data_dir: Path | None,
            extension_ids: tuple[str, ...], platform: str | None, fmt: str) -> None:
    """Register the native host org.protolens.host with Chromium, Chrome, Brave and Edge.

    Writes a wrapper script that runs this Python's protolens.host, a host manifest allowing
    only the ProtoLens extension in each browser's manifest directory (registry keys on
    Windows), and a receipt so that `protolens uninstall` removes exactly these.

    Example: protolens install --browser chromium

    Example: protolens install --extension-id abcdefghijklmnopabcdefghijklmnop
    """
    if system and user_data_dir:
        raise UserError("--system and --user-data-dir exclude each other")
    for ext_id in extension_ids:
        if not EXTENSION_ID.match(ext_id):
            raise UserError(f"--extension-id: {ext_id!r} is not an extension ID (32 letters "
                            "a-p, as chrome://extensions shows it)")
    plat = _platform(platform)
    plan = plan_install(plat, os.environ, sys.executable, browsers or BROWSERS, system,
                        user_data_dir, extra_ids=extension_ids)
    if plat == "win32" and sys.platform != "win32":
        raise UserError("Windows registration can only be applied on Windows")
    try:
        actions = apply_install(plan)
    except InstallError as exc:
        raise UserError(str(exc)) from None
    emit([{"action": a.what, "where": a.where} for a in actions], fmt, title="protolens install")


@click.command("uninstall")
@click.option("--system", is_flag=True, help="Undo a system-wide install (needs root).")
@_platform_option
@output_options
def uninstall(system: bool, platform: str | None, fmt: str) -> None:
    """Remove exactly what `protolens install` wrote, using its receipt.

    Files changed since install are kept and reported. The store is never touched.

    Example: protolens uninstall
    """
    receipt = Path(support_dir(_platform(platform), os.environ, system)) / RECEIPT_NAME
    try:
        actions = apply_uninstall(receipt)
    except InstallError as exc:
        raise UserError(str(exc)) from None
    emit([{"action": a.what, "where": a.where, "note": a.note} for a in actions], fmt,
         title="protolens uninstall")


@click.command("doctor")
@_udd_option
@click.option("--no-probe", is_flag=True, help="Do not start the host to check it answers.")
@_platform_option
@output_options
def doctor(user_data_dir: Path | None, no_probe: bool, platform: str | None, fmt: str) -> None:
    """Say where the host is registered, whether it works, what is wrong and the fix.

    Exit status 1 if any check fails.

    Example: protolens doctor --json
    """
    checks = diagnose(_platform(platform), os.environ, user_data_dir, probe=not no_probe)
    emit([{"check": c.check, "status": c.status, "detail": c.detail, "fix": c.fix}
          for c in checks], fmt, title="protolens doctor")
    if any(c.status == "fail" for c in checks):
        sys.exit(1)
