"""The papers' experiments as campaign parts, and what each paper found (pure data + analysis).

Every analysis reads only report rows (``report.report_rows``) and states the measurement beside
the paper's qualitative finding; nothing here is tuned to make them agree. Page choices, repetition
counts and the quick variants are ProtoLens's (the papers ran 30-100 loads per cell, which does not
fit 20 minutes on 2 cores); they are written down in each ``Part``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Rows = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Part:
    """One campaign of an experiment."""

    suffix: str
    pages: tuple[str, ...]
    arms: tuple[str, ...]
    conditions: tuple[str, ...]
    reps: int
    server_cc: str
    timeout_s: float = 60.0
    """Per-load timeout: at least this (the user's ``--timeout`` can raise it)."""
    policy: tuple[tuple[str, str], ...] = ()
    """(domain, arm) rules of the ``policy`` arm."""
    bbr_hosts: tuple[str, ...] = ()
    """Testbed hosts served over BBR while the others use ``server_cc`` (``--bbr-host``)."""


@dataclass(frozen=True)
class Experiment:
    name: str
    paper: str
    """Citation (shared/seeds file and section)."""
    finding: str
    """The paper's qualitative finding, quoted or closely paraphrased."""
    full: tuple[Part, ...]
    quick: tuple[Part, ...]
    analyze: Callable[[Mapping[str, Rows]], list[str]]
    """Report rows per part suffix -> lines stating the measurement and the verdict."""


def _median(rows: Rows, page: str, condition: str, arm: str) -> float | None:
    for r in rows:
        if (r["page"], r["condition"], r["arm"]) == (page, condition, arm):
            v = r.get("plt_median_ms")
            return float(v) if v is not None else None
    return None


def geomean(values: Sequence[float]) -> float | None:
    """Geometric mean of ratios (the right average for ratios); None when empty."""
    vals = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def ratios(rows: Rows, *, num: tuple[str, str], den: tuple[str, str]) -> list[float]:
    """Per page: median PLT of (condition, arm) ``num`` over ``den``."""
    out = []
    for page in sorted({r["page"] for r in rows}):
        a, b = _median(rows, page, *num), _median(rows, page, *den)
        if a is not None and b:
            out.append(a / b)
    return out


def _fmt(x: float | None) -> str:
    return "n/a (no data)" if x is None else f"x{x:.2f}"


def _yes(flag: bool | None) -> str:
    return "no data" if flag is None else ("yes" if flag else "no")


def analyze_ifip18_wifi(parts: Mapping[str, Rows]) -> list[str]:
    rows = parts["wifi"]
    slow = {arm: geomean(ratios(rows, num=("wifi-lossy", arm), den=("wifi", arm)))
            for arm in ("h1", "h2", "h3")}
    h2_h1 = geomean(ratios(rows, num=("wifi-lossy", "h2"), den=("wifi-lossy", "h1")))
    h2_h1_clean = geomean(ratios(rows, num=("wifi", "h2"), den=("wifi", "h1")))
    worse = (slow["h2"] > slow["h1"]) if slow["h2"] and slow["h1"] else None
    h3_less = (slow["h3"] < slow["h2"]) if slow["h3"] and slow["h2"] else None
    return [
        "2% loss slows each arm by (geometric mean over pages of median-PLT ratios, "
        "wifi-lossy / wifi):",
        f"  h1 {_fmt(slow['h1'])}   h2 {_fmt(slow['h2'])}   h3 {_fmt(slow['h3'])}",
        f"h2 / h1 PLT without loss {_fmt(h2_h1_clean)}, with 2% loss {_fmt(h2_h1)}",
        f"does h2 degrade more than h1 under 2% loss? {_yes(worse)} "
        f"(paper: yes) -> {'agrees' if worse else 'differs' if worse is not None else '?'}",
        f"is h3 less affected than h2? {_yes(h3_less)} (paper: yes, QUIC less affected) -> "
        f"{'agrees' if h3_less else 'differs' if h3_less is not None else '?'}",
    ]


def analyze_ifip18_parallel(parts: Mapping[str, Rows]) -> list[str]:
    rows = parts["parallel"]
    lossy, clean, par = "wifi-lossy", "wifi", "h2-parallel:2"
    par_h2 = geomean(ratios(rows, num=(lossy, par), den=(lossy, "h2")))
    par_h1 = geomean(ratios(rows, num=(lossy, par), den=(lossy, "h1")))
    h2_h1 = geomean(ratios(rows, num=(lossy, "h2"), den=(lossy, "h1")))
    par_h2_clean = geomean(ratios(rows, num=(clean, par), den=(clean, "h2")))
    cut = (1 - par_h2) if par_h2 is not None else None
    cuts = cut > 0 if cut is not None else None
    near = (0.75 <= par_h1 <= 1.33) if par_h1 is not None else None
    return [
        "geometric mean over pages of median-PLT ratios (the paper reports means of 30+ loads):",
        f"  at 2% loss: h2-parallel:2 / h2 {_fmt(par_h2)}, h2-parallel:2 / h1 {_fmt(par_h1)}, "
        f"h2 / h1 {_fmt(h2_h1)}",
        f"  without loss: h2-parallel:2 / h2 {_fmt(par_h2_clean)} (proxy overhead included)",
        f"two connections cut h2's PLT at 2% loss by "
        f"{'n/a' if cut is None else f'{cut * 100:.0f}%'} (paper: 55% of the mean PLT, "
        f"emulation) -> {'agrees' if cuts else 'differs' if cuts is not None else '?'} "
        "in direction",
        f"does h2-parallel:2 come near h1 (within x0.75-x1.33)? {_yes(near)} (paper: yes) -> "
        f"{'agrees' if near else 'differs' if near is not None else '?'}",
        "h2-parallel:2 runs through the ProtoLens lab proxy (stock Chromium has no H2-Parallel; "
        "the paper patched Chromium): see the upstream connections with protolens show ID",
    ]


CELL_ORDER = ("cell-good", "cell-fair", "cell-passable", "cell-poor", "cell-very-poor")


def analyze_cell_large(parts: Mapping[str, Rows]) -> list[str]:
    rows = parts["cell"]
    conds = [c for c in CELL_ORDER if any(r["condition"] == c for r in rows)]
    gaps = {c: geomean(ratios(rows, num=(c, "h2"), den=(c, "h1"))) for c in conds}
    lines = ["h2 / h1 median PLT per condition (>1: h1 faster):"]
    lines += [f"  {c:<16} {_fmt(gaps[c])}" for c in conds]
    known = [g for g in gaps.values() if g is not None]
    faster = sum(1 for g in known if g > 1)
    grows = (known[-1] > known[0]) if len(known) >= 2 else None
    lines.append(f"h1 faster than h2 in {faster} of {len(known)} conditions "
                 "(paper: h1 outperforms h2 across all conditions)")
    lines.append(f"does the gap grow from the best to the worst condition? {_yes(grows)} "
                 "(paper: yes, especially where loss is frequent)")
    return lines


def analyze_conext20_delay(parts: Mapping[str, Rows]) -> list[str]:
    lines = ["h1 / h2 median PLT under jitter (<1: h1 faster), per server CC:"]
    res: dict[str, float | None] = {}
    for cc in ("bbr", "cubic"):
        res[cc] = geomean(ratios(parts[cc], num=("jitter", "h1"), den=("jitter", "h2")))
        lines.append(f"  {cc:<6} {_fmt(res[cc])}")
    favours = None
    if res["bbr"] is not None and res["cubic"] is not None:
        favours = res["bbr"] < res["cubic"]
    lines.append(f"does the delay-based server (BBR) favour h1 more than cubic does? "
                 f"{_yes(favours)} (paper: yes, for large pages)")
    return lines


HTTPX_ARMS = ("h1", "h2", "proxy-h1", "proxy-h2", "policy")
"""All-h1 and all-h2 with Chromium's flags, the same two through the lab proxy (the mix's own
path, so the comparison is not the proxy's overhead), and the HTTPX mix (``policy``)."""
HTTPX_POLICY = (("b.test", "h1"), ("a.test", "h2"))
"""CoNEXT'20 Sec. 5: H1 for the domain behind the delay-based server (b.test, ``--bbr-host``),
H2 elsewhere."""


def analyze_conext20_httpx(parts: Mapping[str, Rows]) -> list[str]:
    rows = parts["httpx"]
    cond = "jitter"

    def gm(num: str, den: str) -> float | None:
        return geomean(ratios(rows, num=(cond, num), den=(cond, den)))

    lines = ["median PLT per page and arm under jitter (ms; b.test behind BBR, a.test behind "
             "cubic; policy = HTTPX: b.test over h1, a.test over h2, through the lab proxy):"]
    for page in sorted({r["page"] for r in rows}):
        cells = []
        for arm in HTTPX_ARMS:
            v = _median(rows, page, cond, arm)
            cells.append(f"{arm} {'n/a' if v is None else f'{v:.0f}'}")
        lines.append(f"  {page}: {'   '.join(cells)}")
    mix_h2, mix_h1 = gm("policy", "proxy-h2"), gm("policy", "proxy-h1")
    lines += [
        "geometric mean over pages of median-PLT ratios:",
        f"  mix / all-h2 {_fmt(mix_h2)}, mix / all-h1 {_fmt(mix_h1)} (all three via the proxy)",
        f"  mix / all-h2 {_fmt(gm('policy', 'h2'))}, mix / all-h1 {_fmt(gm('policy', 'h1'))} "
        "(all-h1/h2 direct, Chromium flags; includes the proxy's overhead)",
        f"  all-h1 / all-h2 direct {_fmt(gm('h1', 'h2'))}, via the proxy "
        f"{_fmt(gm('proxy-h1', 'proxy-h2'))} (<1: h1 faster)",
    ]
    best = None if mix_h2 is None or mix_h1 is None else max(mix_h2, mix_h1) <= 1.0
    lines.append(f"is the mix at least as fast as the better of all-h1 and all-h2 (same proxy "
                 f"path)? {_yes(best)} (paper: HTTPX is meant to pick the better version per "
                 "domain, and on real sites it both improved and reduced performance, Fig. 2(c))")
    return lines


IFIP_FULL_PAGES = ("ifip18-wikipedia", "ifip18-yahoo", "ifip18-taobao", "ifip18-sohu",
                   "ifip18-facebook", "ifip18-amazon")
"""Six of Table I's 15 pages, 441 kB to 3.7 MB, every host count (ProtoLens's choice: the whole
table x 3 arms x 2 conditions does not fit the 20-minute budget)."""

EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        name="ifip18-wifi",
        paper="IFIP Networking 2018 (shared/seeds/000), Sec. V-B and Fig. 5",
        finding="with 2% loss H2's PLT increases greatly while H1 sees only a moderate increase "
                "(about 20%); QUIC is not affected as severely as H2",
        full=(Part("wifi", IFIP_FULL_PAGES, ("h1", "h2", "h3"), ("wifi", "wifi-lossy"), 3,
                   "cubic"),),
        quick=(Part("wifi", ("ifip18-wikipedia", "ifip18-facebook"), ("h1", "h2", "h3"),
                    ("wifi", "wifi-lossy"), 2, "cubic"),),
        analyze=analyze_ifip18_wifi),
    Experiment(
        name="ifip18-parallel",
        paper="IFIP Networking 2018 (shared/seeds/000), Sec. V-B, H2-Parallel",
        finding="at 2% loss, H2-Parallel (two connections, requests round-robin) cuts HTTP/2's "
                "mean PLT by 55% (emulation) and brings it near HTTP/1.1",
        full=(Part("parallel", IFIP_FULL_PAGES[:4], ("h1", "h2", "h2-parallel:2", "h3"),
                   ("wifi", "wifi-lossy"), 3, "cubic"),),
        quick=(Part("parallel", ("ifip18-wikipedia", "ifip18-facebook"),
                    ("h1", "h2", "h2-parallel:2", "h3"), ("wifi", "wifi-lossy"), 2, "cubic"),),
        analyze=analyze_ifip18_parallel),
    Experiment(
        name="cell-large",
        paper="Akamai cellular poster (shared/seeds/001), Fig. 5(b)",
        finding="for 10 objects of 435 KB, h1 outperforms h2 across all network conditions, "
                "especially in Poor conditions where loss occurs frequently",
        # 4.35 MB at cell-very-poor's 0.5-1.5 Mbit/s takes 35 s before any loss: 240 s per load
        full=(Part("cell", ("cell-10x435k",), ("h1", "h2"), CELL_ORDER, 3, "cubic", 240.0),),
        quick=(Part("cell", ("cell-10x435k",), ("h1", "h2"), ("cell-good", "cell-poor"), 2,
                    "cubic", 180.0),),
        analyze=analyze_cell_large),
    Experiment(
        name="conext20-delay",
        paper="CoNEXT 2020 (shared/seeds/002), Sec. 3",
        finding="delay-based congestion control (BBR, CUBIC+HyStart) favours H1 for large pages "
                "(2.3 MB, 9 MB): H1 tends to outperform H2",
        full=tuple(Part(cc, ("conext-6x2300k", "conext-48x2300k", "conext-6x9m",
                             "conext-48x9m"), ("h1", "h2"), ("jitter",), 3, cc)
                   for cc in ("bbr", "cubic")),
        quick=tuple(Part(cc, ("conext-6x2300k", "conext-48x9m"), ("h1", "h2"), ("jitter",), 2,
                         cc) for cc in ("bbr", "cubic")),
        analyze=analyze_conext20_delay),
    Experiment(
        name="conext20-httpx",
        paper="CoNEXT 2020 (shared/seeds/002), Sec. 4-5 and Fig. 2(c)",
        finding="HTTPX (H2 turned off only for the domains served by a delay-based TCP CC) can "
                "both improve and reduce performance; H1 becomes more competitive as the share "
                "of bytes served by delay-based CC grows",
        full=(Part("httpx", ("conext-httpx-2x2300k", "conext-httpx-2x9m"), HTTPX_ARMS,
                   ("jitter",), 5, "cubic", 90.0, HTTPX_POLICY, ("b.test",)),),
        quick=(Part("httpx", ("conext-httpx-2x2300k",), HTTPX_ARMS, ("jitter",), 3, "cubic",
                    60.0, HTTPX_POLICY, ("b.test",)),),
        analyze=analyze_conext20_httpx),
)


def experiment(name: str) -> Experiment:
    for exp in EXPERIMENTS:
        if exp.name == name:
            return exp
    raise KeyError(f"unknown experiment {name!r} "
                   f"(known: {', '.join(e.name for e in EXPERIMENTS)})")
