"""The papers' experiments as campaign parts, and what each paper found (pure data + analysis).

Every analysis reads only the campaigns' stored navigations and states each paper claim beside a
measured ratio of medians with its 95% bootstrap interval; the verdict comes from the interval
(``lab/estimate.py``), and nothing here is tuned to make them agree. Page choices, repetition
counts and the quick variants are ProtoLens's (the papers ran 25-100 loads per cell); they are
written down in each ``Part``; ``--reps N`` overrides them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from protolens.lab.estimate import ABOVE, BELOW, Cells, Check, Expect, Ratio, Term, ratio

Navs = Sequence[Mapping[str, Any]]
"""A campaign's stored navigations (``store.lab.campaign_navigations``)."""
NEAR_EQUAL = Expect("near", (0.75, 1.33))
"""'near h1' (IFIP'18 Sec. V-B): within x0.75..x1.33, ProtoLens's reading; the paper gives no
band."""

Finding = str | Check
"""A line of context, or a claim checked against a measured ratio."""


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
    analyze: Callable[[Mapping[str, Navs], int], list[Finding]]
    """Stored navigations per part suffix (fairness rows for a fairness experiment), seed ->
    context lines and checked claims."""
    kind: str = "campaign"
    """``campaign`` (each part a lab campaign) or ``fairness`` (each part a ``lab fairness`` run:
    ``Part.arms`` holds the pairs, ``pages[0]`` and ``conditions[0]`` the page and
    bottleneck)."""


def _cells(navs: Navs, metric: str = "plt") -> Cells:
    return Cells.from_navigations(navs, metric)


def median_ms(cells: Cells, page: str, condition: str, arm: str) -> float | None:
    values = cells.get(page, condition, arm)
    return float(np.median(values)) if values else None


def analyze_ifip18_wifi(parts: Mapping[str, Navs], seed: int = 0) -> list[Finding]:
    c = _cells(parts["wifi"])
    lossy, clean = "wifi-lossy", "wifi"

    def r(label: str, num: list[Term], den: list[Term]) -> Ratio:
        return ratio(c, label, num, den, seed=seed)

    out: list[Finding] = ["2% loss slows each arm by (median PLT, wifi-lossy / wifi, geometric "
                          "mean over pages, 95% bootstrap interval):"]
    out += ["  " + r(f"{arm}", [(None, lossy, arm)], [(None, clean, arm)]).text()
            for arm in ("h1", "h2", "h3")]
    out.append("  " + r("h2 / h1 without loss", [(None, clean, "h2")],
                        [(None, clean, "h1")]).text())
    out.append("  " + r("h2 / h1 with 2% loss", [(None, lossy, "h2")],
                        [(None, lossy, "h1")]).text())
    out.append(Check("h2 degrades more than h1 under 2% loss (h2's slowdown / h1's)",
                     r("h2 slowdown / h1 slowdown", [(None, lossy, "h2"), (None, clean, "h1")],
                       [(None, clean, "h2"), (None, lossy, "h1")]), ABOVE))
    out.append(Check("QUIC is less affected by loss than h2 (h3's slowdown / h2's)",
                     r("h3 slowdown / h2 slowdown", [(None, lossy, "h3"), (None, clean, "h2")],
                       [(None, clean, "h3"), (None, lossy, "h2")]), BELOW))
    return out


def analyze_ifip18_parallel(parts: Mapping[str, Navs], seed: int = 0) -> list[Finding]:
    c = _cells(parts["parallel"])
    lossy, clean, par = "wifi-lossy", "wifi", "h2-parallel:2"

    def r(label: str, cond: str, num: str, den: str) -> Ratio:
        return ratio(c, label, [(None, cond, num)], [(None, cond, den)], seed=seed)

    return [
        "median-PLT ratios, geometric mean over pages, 95% bootstrap interval (the paper "
        "reports means of 30+ loads, and a 55% cut at 2% loss in emulation):",
        Check("at 2% loss, H2-Parallel cuts the PLT of h2 (what a user gets: Chromium's h2 "
              "against two connections through the lab proxy)",
              r("h2-parallel:2 / h2 at 2% loss", lossy, par, "h2"), BELOW),
        Check("at 2% loss, the second connection itself cuts the PLT (same proxy path: "
              "h2-parallel:2 against proxy-h2's one connection)",
              r("h2-parallel:2 / proxy-h2 at 2% loss", lossy, par, "proxy-h2"), BELOW),
        Check("at 2% loss, H2-Parallel comes near h1",
              r("h2-parallel:2 / h1 at 2% loss", lossy, par, "h1"), NEAR_EQUAL),
        "  " + r("h2 / h1 at 2% loss", lossy, "h2", "h1").text(),
        "  " + r("h2-parallel:2 / proxy-h2 without loss", clean, par, "proxy-h2").text(),
        "  " + r("proxy-h2 / h2 without loss (the proxy path's own cost)", clean, "proxy-h2",
                 "h2").text(),
        "  " + r("proxy-h2 / h2 at 2% loss", lossy, "proxy-h2", "h2").text(),
        "h2-parallel:2 and proxy-h2 run through the ProtoLens lab proxy (stock Chromium has no "
        "H2-Parallel; the paper patched Chromium): see the upstream connections with "
        "protolens show ID",
    ]


CELL_ORDER = ("cell-good", "cell-fair", "cell-passable", "cell-poor", "cell-very-poor")


def analyze_cell_large(parts: Mapping[str, Navs], seed: int = 0) -> list[Finding]:
    c = _cells(parts["cell"])
    conds = [cond for cond in CELL_ORDER if any(k[1] == cond for k in c.values)]
    out: list[Finding] = [
        "h2 / h1 median PLT (>1: h1 faster), 95% bootstrap interval:",
        Check("h1 outperforms h2 across all conditions (geometric mean over conditions)",
              ratio(c, "h2 / h1", [(None, None, "h2")], [(None, None, "h1")], seed=seed),
              ABOVE)]
    out += ["  " + ratio(c, f"h2 / h1 in {cond}", [(None, cond, "h2")], [(None, cond, "h1")],
                         seed=seed).text() for cond in conds]
    if len(conds) >= 2:
        best, worst = conds[0], conds[-1]
        out.append(Check(f"the gap grows from the best to the worst condition ({worst} against "
                         f"{best})",
                         ratio(c, "(h2 / h1 worst) / (h2 / h1 best)",
                               [(None, worst, "h2"), (None, best, "h1")],
                               [(None, worst, "h1"), (None, best, "h2")], seed=seed), ABOVE))
    return out


def analyze_conext20_delay(parts: Mapping[str, Navs], seed: int = 0) -> list[Finding]:
    c = Cells.merged({cc: _cells(parts[cc]) for cc in ("bbr", "cubic") if cc in parts})
    out: list[Finding] = ["h1 / h2 median PLT under jitter (<1: h1 faster), per server CC, 95% "
                          "bootstrap interval:"]
    out.append(Check("behind the delay-based server (BBR), h1 outperforms h2 on large pages",
                     ratio(c, "h1 / h2 behind bbr", [(None, "jitter@bbr", "h1")],
                           [(None, "jitter@bbr", "h2")], seed=seed), BELOW))
    out.append("  " + ratio(c, "h1 / h2 behind cubic", [(None, "jitter@cubic", "h1")],
                            [(None, "jitter@cubic", "h2")], seed=seed).text())
    out.append(Check("the delay-based server favours h1 more than cubic does",
                     ratio(c, "(h1 / h2 bbr) / (h1 / h2 cubic)",
                           [(None, "jitter@bbr", "h1"), (None, "jitter@cubic", "h2")],
                           [(None, "jitter@bbr", "h2"), (None, "jitter@cubic", "h1")],
                           seed=seed), BELOW))
    return out


HTTPX_ARMS = ("h1", "h2", "proxy-h1", "proxy-h2", "policy")
"""All-h1 and all-h2 with Chromium's flags, the same two through the lab proxy (the mix's own
path, so the comparison is not the proxy's overhead), and the HTTPX mix (``policy``)."""
HTTPX_POLICY = (("b.test", "h1"), ("a.test", "h2"))
"""CoNEXT'20 Sec. 5: H1 for the domain behind the delay-based server (b.test, ``--bbr-host``),
H2 elsewhere."""


def analyze_conext20_httpx(parts: Mapping[str, Navs], seed: int = 0) -> list[Finding]:
    c = _cells(parts["httpx"])
    cond = "jitter"

    def r(label: str, num: str, den: str) -> Ratio:
        return ratio(c, label, [(None, cond, num)], [(None, cond, den)], seed=seed)

    out: list[Finding] = [
        "median PLT per page and arm under jitter (ms; b.test behind BBR, a.test behind cubic; "
        "policy = HTTPX: b.test over h1, a.test over h2, through the lab proxy):"]
    for page in c.pages():
        cells = []
        for arm in HTTPX_ARMS:
            v = median_ms(c, page, cond, arm)
            cells.append(f"{arm} {'n/a' if v is None else f'{v:.0f}'}")
        out.append(f"  {page}: {'   '.join(cells)}")
    out += [
        "median-PLT ratios, geometric mean over pages, 95% bootstrap interval (paper: HTTPX "
        "both improved and reduced performance on real sites, Fig. 2(c); it is meant to pick "
        "the better version per domain):",
        Check("the HTTPX mix is faster than all-h2 (same proxy path)",
              r("mix / all-h2 via the proxy", "policy", "proxy-h2"), BELOW),
        Check("the HTTPX mix is faster than all-h1 (same proxy path)",
              r("mix / all-h1 via the proxy", "policy", "proxy-h1"), BELOW),
        "  " + r("mix / all-h2 direct (includes the proxy's cost)", "policy", "h2").text(),
        "  " + r("all-h1 / all-h2 direct", "h1", "h2").text(),
        "  " + r("all-h1 / all-h2 via the proxy", "proxy-h1", "proxy-h2").text(),
    ]
    return out


FAIR_PAIRS = ("h2:h3", "h2-parallel:2:h3", "h1:h2", "h1:h3")
"""IFIP'18 Fig. 7's pairs (a: the paper's first protocol, b: its second)."""
ABOUT_TWICE = Expect("near", (1.5, 2.5))
"""'QUIC gets twice as much bandwidth share as H2' (IFIP'18 Sec. V-D): ProtoLens reads "about
twice" as x1.5..x2.5; the paper gives no interval."""
ABOUT_EQUAL = Expect("near", (0.8, 1.25))
"""'H2-Parallel ... and QUIC ... get an equal share' (IFIP'18 Sec. V-D): x0.8..x1.25, ProtoLens's
reading."""


def _share_ratios(rows: Navs, pair: str, seed: int, label: str) -> Ratio:
    """Median over repetitions of share(b) / share(a) for one pair, with its interval."""
    reps: dict[int, dict[str, float]] = {}
    for r in rows:
        if r["pair"] == pair and r.get("share") is not None:
            reps.setdefault(int(r["repetition"]), {})[r["side"]] = float(r["share"])
    values = tuple(sorted(s["b"] / s["a"] for s in reps.values()
                          if set(s) == {"a", "b"} and s["a"] > 0))
    cells = Cells({(pair, "share", "b/a"): values} if values else {})
    return ratio(cells, label, [(pair, "share", "b/a")], [], seed=seed, unit="repetitions")


def analyze_ifip18_fairness(parts: Mapping[str, Navs], seed: int = 0) -> list[Finding]:
    rows = parts["fair"]
    out: list[Finding] = ["share of the 7 Mbit/s bottleneck while both pages load, ratio of the "
                          "two sides per repetition (median, 95% bootstrap interval):"]
    out.append(Check("QUIC takes about twice H2's share",
                     _share_ratios(rows, "h2:h3", seed, "share h3 / h2"), ABOUT_TWICE))
    out.append(Check("H2-Parallel (2 connections) and QUIC share equally",
                     _share_ratios(rows, "h2-parallel:2:h3", seed, "share h3 / h2-parallel:2"),
                     ABOUT_EQUAL))
    out.append(Check("H1 (several connections) beats H2",
                     _share_ratios(rows, "h1:h2", seed, "share h2 / h1"), BELOW))
    out.append(Check("H1 (several connections) beats QUIC",
                     _share_ratios(rows, "h1:h3", seed, "share h3 / h1"), BELOW))
    conns = sorted({(str(r["arm"]), int(r["connections"])) for r in rows
                    if r.get("connections") is not None})
    if conns:
        out.append("connections per side as on the wire (the paper: h1 4, h2-parallel 2, h2 and "
                   "h3 1; Chromium's h1 opens up to 6 per host): " +
                   ", ".join(f"{a} {c}" for a, c in conns))
    return out


STUDENT_NET = ("student-3m", "student-3m-loss1", "student-10m", "student-10m-loss1")
STUDENT_CHANGED_LITTLE = Expect("near", (0.9, 1.1))
"""'1% loss changed little' (shared/seeds/003, Sec. 6: "I barely saw any changes"): ProtoLens
reads it as a slowdown within +-10%; the paper gives no figure."""


def analyze_student_study(parts: Mapping[str, Navs], seed: int = 0) -> list[Finding]:
    net = parts.get("net", [])
    everything = [*net, *parts.get("normal", [])]
    plt, ttfb, image = _cells(everything), _cells(everything, "ttfb"), \
        _cells(everything, "first_image")
    out: list[Finding] = ["median ratios, geometric mean over every page x condition, 95% "
                          "bootstrap interval:"]
    for other in ("h1", "h3"):
        out.append(Check(f"HTTP/2 has a lower PLT than {other} in most scenarios",
                         ratio(plt, f"PLT h2 / {other}", [(None, None, "h2")],
                               [(None, None, other)], seed=seed), BELOW))
    for other in ("h2", "h3"):
        out.append(Check(f"HTTP/1.1 has a lower time to first byte than {other}",
                         ratio(ttfb, f"TTFB h1 / {other}", [(None, None, "h1")],
                               [(None, None, other)], seed=seed), BELOW))
        out.append(Check(f"HTTP/1.1 loads the first image faster than {other}",
                         ratio(image, f"first image h1 / {other}", [(None, None, "h1")],
                               [(None, None, other)], seed=seed), BELOW))
    for other in ("h1", "h2"):
        out.append(Check(f"QUIC does worst on the page with many large resources (against "
                         f"{other})",
                         ratio(plt, f"PLT h3 / {other} on student-many-large",
                               [("student-many-large", None, "h3")],
                               [("student-many-large", None, other)], seed=seed), ABOVE))
    net_cells = _cells(net)
    for rate in ("3m", "10m"):
        out.append(Check(f"1% loss changes the PLT little at {rate}bit/s",
                         ratio(net_cells, f"PLT student-{rate}-loss1 / student-{rate}",
                               [(None, f"student-{rate}-loss1", None)],
                               [(None, f"student-{rate}", None)], seed=seed),
                         STUDENT_CHANGED_LITTLE))
    return out


def analyze_mininet_quic(parts: Mapping[str, Navs], seed: int = 0) -> list[Finding]:
    c = _cells(parts["toc"])
    out: list[Finding] = ["time to completion (PLT of a page of N equal 100 KB files), h3 / h2 "
                          "median, 95% bootstrap interval:"]
    for page in ("mininet-1", "mininet-10", "mininet-100"):
        for cond in ("mininet-10ms", "mininet-100ms"):
            out.append("  " + ratio(c, f"h3 / h2 {page} at {cond}", [(page, cond, "h3")],
                                    [(page, cond, "h2")], seed=seed).text())
    out.append(Check("QUIC's advantage grows with latency ((h3 / h2 at 100 ms) / (h3 / h2 at "
                     "10 ms), over pages)",
                     ratio(c, "(h3 / h2 100 ms) / (h3 / h2 10 ms)",
                           [(None, "mininet-100ms", "h3"), (None, "mininet-10ms", "h2")],
                           [(None, "mininet-100ms", "h2"), (None, "mininet-10ms", "h3")],
                           seed=seed), BELOW))
    out.append(Check("QUIC's advantage grows with the number of objects ((h3 / h2 for 100 "
                     "files) / (h3 / h2 for 1 file), over latencies)",
                     ratio(c, "(h3 / h2 100 files) / (h3 / h2 1 file)",
                           [("mininet-100", None, "h3"), ("mininet-1", None, "h2")],
                           [("mininet-100", None, "h2"), ("mininet-1", None, "h3")],
                           seed=seed), BELOW))
    return out


PARALLEL_ARMS = ("h1", "h2", "proxy-h2", "h2-parallel:2", "h3")
"""proxy-h2 is H2-Parallel's own path with one connection: h2-parallel:2 / proxy-h2 is the effect
of the second connection, h2-parallel:2 / h2 what a user of stock Chromium would get."""

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
        full=(Part("wifi", IFIP_FULL_PAGES, ("h1", "h2", "h3"), ("wifi", "wifi-lossy"), 8,
                   "cubic"),),
        quick=(Part("wifi", ("ifip18-wikipedia", "ifip18-facebook"), ("h1", "h2", "h3"),
                    ("wifi", "wifi-lossy"), 3, "cubic"),),
        analyze=analyze_ifip18_wifi),
    Experiment(
        name="ifip18-parallel",
        paper="IFIP Networking 2018 (shared/seeds/000), Sec. V-B, H2-Parallel",
        finding="at 2% loss, H2-Parallel (two connections, requests round-robin) cuts HTTP/2's "
                "mean PLT by 55% (emulation) and brings it near HTTP/1.1",
        full=(Part("parallel", IFIP_FULL_PAGES[:4], PARALLEL_ARMS, ("wifi", "wifi-lossy"), 8,
                   "cubic"),),
        quick=(Part("parallel", ("ifip18-wikipedia", "ifip18-facebook"), PARALLEL_ARMS,
                    ("wifi", "wifi-lossy"), 3, "cubic"),),
        analyze=analyze_ifip18_parallel),
    Experiment(
        name="cell-large",
        paper="Akamai cellular poster (shared/seeds/001), Fig. 5(b)",
        finding="for 10 objects of 435 KB, h1 outperforms h2 across all network conditions, "
                "especially in Poor conditions where loss occurs frequently",
        # 4.35 MB at cell-very-poor's 0.5-1.5 Mbit/s takes 35 s before any loss: 240 s per load
        full=(Part("cell", ("cell-10x435k",), ("h1", "h2"), CELL_ORDER, 6, "cubic", 240.0),),
        quick=(Part("cell", ("cell-10x435k",), ("h1", "h2"), ("cell-good", "cell-poor"), 3,
                    "cubic", 180.0),),
        analyze=analyze_cell_large),
    Experiment(
        name="conext20-delay",
        paper="CoNEXT 2020 (shared/seeds/002), Sec. 3",
        finding="delay-based congestion control (BBR, CUBIC+HyStart) favours H1 for large pages "
                "(2.3 MB, 9 MB): H1 tends to outperform H2",
        full=tuple(Part(cc, ("conext-6x2300k", "conext-48x2300k", "conext-6x9m",
                             "conext-48x9m"), ("h1", "h2"), ("jitter",), 8, cc)
                   for cc in ("bbr", "cubic")),
        quick=tuple(Part(cc, ("conext-6x2300k", "conext-48x9m"), ("h1", "h2"), ("jitter",), 3,
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
    Experiment(
        name="ifip18-fairness",
        paper="IFIP Networking 2018 (shared/seeds/000), Sec. V-D and Fig. 7",
        finding="on a shared 7 Mbit/s bottleneck QUIC takes about twice H2's bandwidth share, "
                "H2-Parallel (2 connections) and QUIC share equally, and H1 with 4 connections "
                "beats both",
        full=(Part("fair", ("cell-10x435k",), FAIR_PAIRS, ("wifi",), 10, "cubic", 120.0),),
        quick=(Part("fair", ("cell-10x435k",), FAIR_PAIRS, ("wifi",), 3, "cubic", 120.0),),
        analyze=analyze_ifip18_fairness, kind="fairness"),
    Experiment(
        name="student-study",
        paper="O'Connor, course project (shared/seeds/003), Sec. 4-6, Fig. 2-9",
        finding="HTTP/2 has the lowest PLT in most scenarios; HTTP/1.1 has the lowest time to "
                "first byte and loads the first image fastest; QUIC does worst on pages with "
                "many large resources; 1% loss changed little",
        full=(Part("net", ("student-small", "student-medium", "student-large"),
                   ("h1", "h2", "h3"), STUDENT_NET, 6, "cubic"),
              Part("normal", ("student-many-small", "student-many-large"), ("h1", "h2", "h3"),
                   ("clean",), 6, "cubic", 120.0)),
        quick=(Part("net", ("student-small", "student-medium"), ("h1", "h2", "h3"),
                    STUDENT_NET, 3, "cubic"),
               Part("normal", ("student-many-small", "student-many-large"), ("h1", "h2", "h3"),
                    ("clean",), 3, "cubic", 120.0)),
        analyze=analyze_student_study),
    Experiment(
        name="mininet-quic",
        paper="Zheng et al., Mininet study (shared/seeds/004), Sec. 4, scenario 1, Fig. 6",
        finding="QUIC's time to completion advantage over HTTP/2 on TCP+TLS grows with latency "
                "(10 ms -> 100 ms) and with the number of small objects (1, 10, 100 files)",
        full=(Part("toc", ("mininet-1", "mininet-10", "mininet-100"), ("h2", "h3"),
                   ("mininet-10ms", "mininet-100ms"), 8, "cubic"),),
        quick=(Part("toc", ("mininet-1", "mininet-100"), ("h2", "h3"),
                    ("mininet-10ms", "mininet-100ms"), 3, "cubic"),),
        analyze=analyze_mininet_quic),
)


def experiment(name: str) -> Experiment:
    for exp in EXPERIMENTS:
        if exp.name == name:
            return exp
    raise KeyError(f"unknown experiment {name!r} "
                   f"(known: {', '.join(e.name for e in EXPERIMENTS)})")
