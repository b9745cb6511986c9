"""From navigation rows to observations (pure): which column is the "group" (page or domain),
the condition and the arm, for each kind of data.

- a lab campaign: group = corpus page, condition and arm = the campaign's tags;
- passive (everyday browsing): group = the page's domain (the origin's host), condition = "all",
  arm = the main document's protocol family (h1/h2/h3);
- experiment: group = the page tag if set, else the domain; arm = the arm tag if set, else the
  main document's family; condition = the condition tag if set, else "all".

Input rows carry the ``navigation_summary`` columns ``source, origin, page, condition, arm,
main_family, warm, failed, incomplete`` and the metric columns (``plt_ms`` ...
``first_image_ms``, and the visual ones, ``speed_index_ms`` ...: ``record/columns.py``
VISUAL_MILESTONES).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from protolens.record.comparable import comparable

VISUAL_METRICS = ("speed_index", "first_visual_change", "visual_complete_85",
                  "visual_complete_99", "last_visual_change")
"""From the tab's painted frames (docs/RECORD.md "Visual metrics"); null where not captured."""
METRICS = ("plt", "ttfb", "fcp", "lcp", "first_image", *VISUAL_METRICS)
"""Metric names accepted by ``--metric``; each reads the ``<name>_ms`` column."""

ALL = "all"


@dataclass(frozen=True)
class Observation:
    """One page load's value of one metric, placed in its comparison cell."""

    group: str
    """Corpus page (lab) or domain (passive)."""
    condition: str
    """Network condition tag, or ``all``."""
    arm: str
    """Arm tag, or the main document's protocol family."""
    value_ms: float
    """The metric in milliseconds."""


def domain_of(origin: str) -> str:
    """The host of an origin (``https://a.test:8443`` -> ``a.test``); an anonymized origin token
    (no ``://``) is its own domain."""
    if "://" not in origin:
        return origin
    rest = origin.split("://", 1)[1].split("/", 1)[0]
    if rest.startswith("["):
        return rest.split("]", 1)[0] + "]"
    return rest.rsplit(":", 1)[0] if ":" in rest else rest


def domain_matches(domain: str, wanted: str) -> bool:
    """``en.wikipedia.org`` matches ``wikipedia.org``; case-insensitive."""
    d, w = domain.lower(), wanted.lower().strip(".")
    return d == w or d.endswith("." + w)


def is_incomplete(row: Mapping[str, Any]) -> bool:
    """A load whose record is incomplete (docs/RECORD.md "Incomplete records"): left out of
    comparisons unless asked for. Records from before the flag (null) count as complete."""
    return bool(row.get("incomplete"))


def incomplete_count(rows: Iterable[Mapping[str, Any]], warm: bool = False) -> int:
    """How many successful loads (cold unless ``warm``) ``observations`` leaves out as
    incomplete."""
    return sum(1 for r in rows if is_incomplete(r) and comparable(r, warm, include_incomplete=True))


def observations(rows: Iterable[Mapping[str, Any]], metric: str, mode: str,
                 domain: str | None = None, warm: bool = False,
                 include_incomplete: bool = False) -> list[Observation]:
    """Successful loads with a value for ``metric``, cold ones unless ``warm``, complete ones
    unless ``include_incomplete`` (the one rule, ``record/comparable.py``; mode: ``campaign``,
    ``passive`` or ``experiment``; ``domain`` keeps only that domain and its subdomains)."""
    if metric not in METRICS:
        raise ValueError(f"metric: unknown {metric!r} (choose from {', '.join(METRICS)})")
    if mode not in ("campaign", "passive", "experiment"):
        raise ValueError(f"mode: unknown {mode!r}")
    out: list[Observation] = []
    column = f"{metric}_ms"
    for row in rows:
        value = row.get(column)
        if value is None or not comparable(row, warm, include_incomplete):
            continue
        dom = domain_of(str(row.get("origin") or ""))
        if domain is not None and not domain_matches(dom, domain):
            continue
        if mode == "campaign":
            group, cond, arm = row.get("page"), row.get("condition"), row.get("arm")
        elif mode == "passive":
            group, cond, arm = dom, ALL, row.get("main_family")
        else:
            group = row.get("page") or dom
            cond = row.get("condition") or ALL
            arm = row.get("arm") or row.get("main_family")
        if group is None or cond is None or arm is None:
            continue
        out.append(Observation(str(group), str(cond), str(arm), float(value)))
    return out
