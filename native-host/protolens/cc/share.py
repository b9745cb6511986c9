"""Bytes served over delay-based servers (CoNEXT'20 Fig. 2(c)), pure: per page, the share of its
bytes that came from hosts labelled delay-based, loss-based, or not (yet) labelled; and the CC
class of one navigation, for grouping ``compare`` and ``show``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

UNLABELLED = "unlabelled"


def nav_class(row: Mapping[str, Any]) -> str:
    """``delay-based`` or ``loss-based`` by the majority of the labelled bytes; ``mixed`` on a
    tie; ``unlabelled`` when no byte came from a labelled host."""
    delay, loss = int(row.get("delay_bytes") or 0), int(row.get("loss_bytes") or 0)
    if delay == loss:
        return UNLABELLED if delay == 0 else "mixed"
    return "delay-based" if delay > loss else "loss-based"


def page_shares(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per page: navigations, bytes, and the delay-based / loss-based / unlabelled
    shares of all its navigations' bytes together; sorted by delay share, then page."""
    acc: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in rows:
        a = acc[str(r["page"])]
        a[0] += 1
        a[1] += int(r.get("bytes") or 0)
        a[2] += int(r.get("delay_bytes") or 0)
        a[3] += int(r.get("loss_bytes") or 0)
    out: list[dict[str, Any]] = []
    for page, (n, total, delay, loss) in acc.items():
        out.append({"page": page, "navigations": n, "bytes": total,
                    "delay_based_share": _share(delay, total),
                    "loss_based_share": _share(loss, total),
                    "unlabelled_share": _share(total - delay - loss, total)})
    out.sort(key=lambda r: (-(r["delay_based_share"] or 0.0), str(r["page"])))
    return out


def _share(part: int, total: int) -> float | None:
    return round(part / total, 4) if total else None
