"""``--allow-domains FILE`` (``export``, ``contribute``): the registrable domains whose origins
may stay in clear, read from the user's file once for both commands (the format is
``share.anonymize.parse_allowlist``'s)."""

from __future__ import annotations

from pathlib import Path

from protolens.cli.errors import UserError
from protolens.share.anonymize import parse_allowlist


def read_allowlist(path: Path | None) -> frozenset[str]:
    """The domains in ``path`` (none without one); a file that cannot be read is one line."""
    if path is None:
        return frozenset()
    try:
        return parse_allowlist(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read the allowlist ({exc})") from None
