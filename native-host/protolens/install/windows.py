"""Windows registration content (pure): a ``.reg`` file that points each browser's
``NativeMessagingHosts\\org.protolens.host`` key at the manifest, and one that removes them.
(https://developer.chrome.com/docs/extensions/develop/concepts/native-messaging#native-messaging-host-location:
"the default value of the key must be the full path to the manifest file")
"""

from __future__ import annotations

from collections.abc import Sequence

from protolens.install.manifest import HOST_NAME

REG_HEADER = "Windows Registry Editor Version 5.00"


def _reg_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def host_key(base_key: str) -> str:
    """``<base>\\org.protolens.host``."""
    return f"{base_key}\\{HOST_NAME}"


def install_reg(keys: Sequence[str], manifest_path: str) -> str:
    """``.reg`` text creating each ``<key>\\org.protolens.host`` with the manifest path."""
    blocks = [REG_HEADER, ""]
    for key in keys:
        blocks += [f"[{host_key(key)}]", f"@={_reg_string(manifest_path)}", ""]
    return "\r\n".join(blocks)


def uninstall_reg(keys: Sequence[str]) -> str:
    """``.reg`` text deleting each ``<key>\\org.protolens.host`` (and nothing above it)."""
    blocks = [REG_HEADER, ""]
    for key in keys:
        blocks += [f"[-{host_key(key)}]", ""]
    return "\r\n".join(blocks)
