"""Chromium command lines for lab loads (pure).

Every flag here is from docs/ARCHITECTURE.md "Chromium facts (verified)" and the protocol table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from protolens.arms import Arm


@dataclass(frozen=True)
class LaunchSpec:
    """What one lab browser start needs."""

    chromium: str
    """Path of the Chromium binary."""
    user_data_dir: str
    """A fresh profile directory (cold cache, nothing remembered)."""
    extension_dir: str
    """The built extension (dist/)."""
    arm: Arm
    """h1, h2, h3, or a proxied arm (``arms.PROXY_ARMS``)."""
    origins: Sequence[str]
    """host:port of every origin of the page (h3 forces QUIC on each)."""
    spki: Sequence[str] = ()
    """Base64 SHA-256 SPKI hashes of certificates to trust (the testbed or test site cert)."""
    host_rules: str | None = None
    """e.g. ``MAP *.test 127.0.0.1``."""
    headless: bool = True
    extra: Sequence[str] = field(default_factory=tuple)
    """More flags, appended last."""


DISABLED_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup")
"""Chromium features a lab browser starts without (Chromium 156: ``omnibox::internal::
kWebUIOmniboxPopup`` and its AIM and full variants, enabled by default)."""


class UnknownArm(ValueError):
    """An arm that no lab launch implements (a policy-only arm), or h3 without an origin."""


def arm_flags(arm: Arm, origins: Sequence[str]) -> list[str]:
    """The protocol flags of an arm (verified: h1 -> 6 connections per host, h2 -> 1)."""
    if arm.name == "h1":
        return ["--disable-http2", "--disable-quic"]
    if arm.name == "h2":
        return ["--disable-quic"]
    if arm.name == "h3":
        if not origins:
            raise UnknownArm("h3 needs at least one origin to force QUIC on")
        return ["--enable-quic", "--origin-to-force-quic-on=" + ",".join(origins)]
    if arm.proxied:
        # Chromium never uses QUIC through an HTTP proxy (docs/ARCHITECTURE.md); make it explicit
        return ["--disable-quic"]
    raise UnknownArm(f"arm {arm}: a policy rule's arm, not a lab load's")


def command_line(spec: LaunchSpec) -> list[str]:
    """The full argv for one lab load (the browser opens about:blank; the extension navigates)."""
    argv = [spec.chromium]
    if spec.headless:
        argv.append("--headless=new")
    argv += [
        "--no-sandbox",  # we run as root in CI; Chromium refuses to start sandboxed as root
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--metrics-recording-only",
        "--password-store=basic",
        "--use-mock-keychain",
        # the omnibox's WebUI popup (chrome://omnibox-popup.top-chrome/) is built in its own
        # renderer at every start, 0.35 s of CPU, headless too: it overlapped the lab page's load
        # and made it slower (docs/ARCHITECTURE.md, Chromium facts); a lab browser never shows it
        "--disable-features=" + ",".join(DISABLED_FEATURES),
        f"--user-data-dir={spec.user_data_dir}",
        f"--load-extension={spec.extension_dir}",
        f"--disable-extensions-except={spec.extension_dir}",
    ]
    if spec.spki:
        argv.append("--ignore-certificate-errors-spki-list=" + ",".join(spec.spki))
    if spec.host_rules:
        argv.append(f"--host-resolver-rules={spec.host_rules}")
    argv += arm_flags(spec.arm, spec.origins)
    argv += list(spec.extra)
    argv.append("about:blank")
    return argv
