"""``protolens policy suggest`` (pure): CoNEXT'20's HTTPX loop (Sec. 5, Fig. 2(c)): turn HTTP/2
off only for domains behind a delay-based server where the user's own loads show HTTP/1.1
faster. Each domain's evidence is ``compare``'s, per network condition (the shift with its 95%
interval, the Mann-Whitney p as a column, and the one verdict rule, ``analysis/verdict.py``),
plus the CC label. No difference established by the rule -> no proposal, whatever the label."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from protolens.analysis.compare import compare_pair
from protolens.analysis.observe import domain_of
from protolens.record.comparable import comparable

ARMS = ("h1", "h2")


@dataclass(frozen=True)
class Suggestion:
    domain: str
    page: str
    """The campaign page (loads of one page are compared with each other), ``all`` otherwise."""
    condition: str
    cc_label: str | None
    n_h1: int
    n_h2: int
    median_h1_ms: float | None
    median_h2_ms: float | None
    diff_ms: float | None
    """median(h1) - median(h2): negative = h1 faster."""
    ci_low_ms: float | None
    ci_high_ms: float | None
    p_value: float | None
    arm: str | None
    """The proposed rule's arm (``h1``), or None: no proposal."""
    confidence: str
    """``high`` (data and CC label agree), ``medium`` (data only), ``none``."""
    why: str

    @property
    def significant_h2(self) -> bool:
        return self.why.startswith("keep HTTP/2")

    def row(self) -> dict[str, Any]:
        return asdict(self)


def _cells(rows: Iterable[Mapping[str, Any]], mode: str
           ) -> dict[tuple[str, str, str], dict[str, list[float]]]:
    """(domain, page, condition) -> arm -> PLTs of the loads a cold comparison takes
    (``record/comparable.py``: successful, cold, complete). ``mode``:
    ``campaign`` (arm tag, per page) or ``passive`` (the main document's protocol family)."""
    cells: dict[tuple[str, str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list))
    for r in rows:
        if not comparable(r) or r.get("plt_ms") is None:
            continue
        arm = r.get("arm") if mode == "campaign" else r.get("main_family")
        if arm not in ARMS:
            continue
        cond = str(r.get("condition") or "all") if mode == "campaign" else "all"
        page = str(r.get("page") or "all") if mode == "campaign" else "all"
        cells[(domain_of(str(r.get("origin") or "")), page, cond)][str(arm)].append(
            float(r["plt_ms"]))
    return cells


def suggest(rows: Iterable[Mapping[str, Any]], labels: Mapping[str, str], mode: str
            ) -> list[Suggestion]:
    """One suggestion per (domain, page, condition) with loads, sorted."""
    out = []
    for (domain, page, cond), by_arm in sorted(_cells(rows, mode).items()):
        c = compare_pair(f"{domain} {page}", cond, "h1", by_arm.get("h1", []), "h2",
                         by_arm.get("h2", []))
        label = labels.get(domain)
        arm, conf = None, "none"
        cc = f"server {label}" if label else "server CC not probed"
        if c.diff_ms is None or c.p_value is None:
            why = f"no proposal: {c.verdict} ({cc})"
        elif not c.significant:
            why = f"no proposal: {c.verdict}, p={c.p_value:.2g} ({cc})"
        elif c.diff_ms > 0:
            why = f"keep HTTP/2: {c.verdict} ({cc})"
        else:
            arm = "h1"
            if label == "delay-based":
                conf = "high"
                why = (f"{c.verdict}, p={c.p_value:.2g}, and the server is delay-based: "
                       "HTTP/2's one connection is held back by its CC (CoNEXT'20 Sec. 3, 5)")
            else:
                conf = "medium"
                why = (f"{c.verdict}, p={c.p_value:.2g}; {cc}, so the data alone supports "
                       "it" + (" although the paper expects h2 not to suffer here"
                               if label == "loss-based" else ""))
        out.append(Suggestion(domain, page, cond, label, c.n_a, c.n_b, c.median_a_ms, c.median_b_ms,
                              c.diff_ms, c.ci_low_ms, c.ci_high_ms, c.p_value, arm, conf, why))
    return out


def domains_to_apply(suggestions: Iterable[Suggestion]) -> list[str]:
    """Domains with an ``h1`` proposal in some condition and HTTP/2 faster in none (a rule is
    per domain, for every network)."""
    props: dict[str, list[Suggestion]] = defaultdict(list)
    for s in suggestions:
        props[s.domain].append(s)
    return sorted(d for d, ss in props.items()
                  if any(s.arm == "h1" for s in ss)
                  and not any(s.significant_h2 for s in ss))
