"""The lab context file named by ``PROTOLENS_LAB_CONTEXT`` (docs/MESSAGES.md, "Lab mode").

Pure: ``parse_lab(obj)`` validates the decoded JSON; the host adapter reads the file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from protolens.record.model import URL_DETAILS

ADVANCES = ("ack", "record")
MAX_QUIET_MS = 30_000
"""The recorder's hard stop after load (src/cdp/navigation.ts ``maxAfterLoadMs``): a longer quiet
would never end a record."""


def is_epoch_ms(value: Any) -> bool:
    """A wall-clock time in epoch milliseconds: a finite, non-negative number (not a bool)."""
    return type(value) in (int, float) and 0 <= value < math.inf


class LabError(ValueError):
    """A lab context file that does not match the documented shape."""


@dataclass(frozen=True)
class LabContext:
    record: bool
    """The extension records every navigation."""
    url_detail: str
    """``origin`` | ``path`` | ``full``."""
    context: dict[str, Any] = field(hash=False)
    """Tags stamped onto every record ingested in this process."""
    navigate: tuple[str, ...]
    """URLs the extension opens in order."""
    advance: str = "ack"
    """When the next URL opens: ``ack`` (the previous record was stored) or ``record`` (it was
    produced and queued in the outbox; tests use it to navigate while the host is down)."""
    quiet_ms: int | None = None
    """The network quiet after load that ends a record (ms; the recorder's ``quietMs``), or None
    for the recorder's own default (2000 ms). Lab campaigns choose it: docs/MESSAGES.md."""
    visual: bool = False
    """Capture paint progress for the visual metrics (SpeedIndex; docs/RECORD.md)."""
    save_log: bool = False
    """The extension's log tap: each record's raw DevTools events are sent after it
    (docs/MESSAGES.md ``log``; ``protolens lab run --save-log``)."""
    start_at_ms: float | None = None
    """Open the first URL no earlier than this wall-clock time (epoch ms): lab fairness starts
    both sides' browsers side by side and has them navigate at the same moment."""
    go_file: str | None = None
    """Hold the first URL until this file exists (a standby browser: ``lab run`` starts the
    next load's browser while the current page's quiet runs). The host then sends ``lab_go``,
    with the file's ``start_at_ms`` if it gives one. The hello says only ``hold: true``."""
    loaded_file: str | None = None
    """The host creates this file when the extension says the last URL fired its load event
    (``lab_loaded``): ``lab run`` then starts the next load's browser."""

    def to_json(self) -> dict[str, Any]:
        """The ``lab`` object of the hello reply."""
        return {"record": self.record, "url_detail": self.url_detail,
                "context": self.context, "navigate": list(self.navigate),
                "advance": self.advance, "quiet_ms": self.quiet_ms, "visual": self.visual,
                "save_log": self.save_log, "start_at_ms": self.start_at_ms,
                "hold": self.go_file is not None}


def parse_lab(value: Any) -> LabContext:
    """Validate a decoded lab context file; raise ``LabError`` naming the first bad field."""
    if not isinstance(value, dict):
        raise LabError("lab context: expected a JSON object")
    rec = value.get("record", True)
    detail = value.get("url_detail", "full")
    ctx = value.get("context", {})
    nav = value.get("navigate", [])
    advance = value.get("advance", "ack")
    quiet = value.get("quiet_ms")
    visual = value.get("visual", False)
    save_log = value.get("save_log", False)
    start_at = value.get("start_at_ms")
    files = {key: value.get(key) for key in ("go_file", "loaded_file")}
    if not isinstance(rec, bool):
        raise LabError(f"lab context record: expected boolean, got {rec!r}")
    if detail not in URL_DETAILS:
        raise LabError(f"lab context url_detail: expected one of {', '.join(URL_DETAILS)}, "
                       f"got {detail!r}")
    if not isinstance(ctx, dict):
        raise LabError(f"lab context context: expected object, got {type(ctx).__name__}")
    if not isinstance(nav, list) or not all(isinstance(u, str) for u in nav):
        raise LabError("lab context navigate: expected an array of URL strings")
    if advance not in ADVANCES:
        raise LabError(f"lab context advance: expected one of {', '.join(ADVANCES)}, "
                       f"got {advance!r}")
    if quiet is not None and (type(quiet) is not int or not 0 <= quiet <= MAX_QUIET_MS):
        raise LabError(f"lab context quiet_ms: expected an integer from 0 to {MAX_QUIET_MS} or "
                       f"null, got {quiet!r}")
    if not isinstance(visual, bool):
        raise LabError(f"lab context visual: expected boolean, got {visual!r}")
    if not isinstance(save_log, bool):
        raise LabError(f"lab context save_log: expected boolean, got {save_log!r}")
    if start_at is not None and not is_epoch_ms(start_at):
        raise LabError(f"lab context start_at_ms: expected epoch milliseconds or null, "
                       f"got {start_at!r}")
    for key, path in files.items():
        if path is not None and (not isinstance(path, str) or not path or "\0" in path):
            raise LabError(f"lab context {key}: expected a file path or null, got {path!r}")
    return LabContext(record=rec, url_detail=detail, context=dict(ctx), navigate=tuple(nav),
                      advance=advance, quiet_ms=quiet, visual=visual, save_log=save_log,
                      start_at_ms=start_at, go_file=files["go_file"],
                      loaded_file=files["loaded_file"])
