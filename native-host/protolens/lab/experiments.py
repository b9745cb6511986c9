"""The papers' experiments as campaign parts (pure data): pages, arms, conditions, repetitions,
server CC, and the analysis that checks each paper's claims (``findings.py``).

Page choices, repetition counts and the quick variants are ProtoLens's (the papers ran 25-100
loads per cell); they are written down in each ``Part``; ``--reps N`` overrides them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from protolens.lab.findings import (
    CELL_ORDER,
    DELAY_CCS,
    FAIR_PAIRS,
    HTTPX_ARMS,
    HTTPX_POLICY,
    STUDENT_NET,
    Finding,
    Navs,
    analyze_cell_large,
    analyze_conext20_delay,
    analyze_conext20_httpx,
    analyze_ifip18_fairness,
    analyze_ifip18_parallel,
    analyze_ifip18_wifi,
    analyze_mininet_quic,
    analyze_student_study,
)

__all__ = ["EXPERIMENTS", "Experiment", "Finding", "Navs", "Part", "experiment"]

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
    real_sites: tuple[str, ...] = ()
    """The parts (suffixes) whose design holds on real sites (``--urls``): their claims compare
    arms and client-side conditions only. Empty: the claims rest on what only the testbed
    controls (the servers' CC, a page's make-up, a shared bottleneck)."""


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
        analyze=analyze_ifip18_wifi, real_sites=("wifi",)),
    Experiment(
        name="ifip18-parallel",
        paper="IFIP Networking 2018 (shared/seeds/000), Sec. V-B, H2-Parallel",
        finding="at 2% loss, H2-Parallel (two connections, requests round-robin) cuts HTTP/2's "
                "mean PLT by 55% (emulation) and brings it near HTTP/1.1",
        full=(Part("parallel", IFIP_FULL_PAGES[:4], PARALLEL_ARMS, ("wifi", "wifi-lossy"), 8,
                   "cubic"),),
        quick=(Part("parallel", ("ifip18-wikipedia", "ifip18-facebook"), PARALLEL_ARMS,
                    ("wifi", "wifi-lossy"), 3, "cubic"),),
        analyze=analyze_ifip18_parallel, real_sites=("parallel",)),
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
                   for cc in DELAY_CCS),
        quick=tuple(Part(cc, ("conext-6x2300k", "conext-48x9m"), ("h1", "h2"), ("jitter",), 3,
                         cc) for cc in DELAY_CCS),
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
        # the "normal" part's claims are about its two pages' make-up
        analyze=analyze_student_study, real_sites=("net",)),
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
