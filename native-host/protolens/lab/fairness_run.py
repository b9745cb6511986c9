"""``protolens lab fairness``: two lab browsers (or a browser and a bulk download) load a page at
the same moment through the testbed's one shaped bottleneck (adapter; the analysis is
``lab/fairness.py``, pure).

Side ``a`` talks to the testbed's server address, side ``b`` to a second address added to the
same server for the run, so the shaper's per-flow counters and a header-only tcpdump in the router
namespace attribute every byte to its side. A proxied arm (``h2-parallel:N``, ``proxy-*``) always
takes the first address, where the lab proxy sends its upstream connections.
"""

from __future__ import annotations

import os
import random
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protolens import __version__
from protolens.arms import Arm
from protolens.lab.campaign import CampaignError, CampaignSpec, Settings, validate
from protolens.lab.fairness import (
    BULK_DELAY_MS,
    Pair,
    RepResult,
    Series,
    Side,
    bin_downlink,
    bulk_delay_after,
    late_start,
    parse_pairs,
    proxied,
    start_lead_ms,
    summarize,
    summary_rows,
    wire_connections,
)
from protolens.lab.fairness_net import bulk, capture, second_address
from protolens.lab.load import LoadSpec
from protolens.lab.pcap import packets
from protolens.lab.runner import (
    LAB_QUIET_MS,
    Browsed,
    RunOptions,
    Target,
    browse,
    record,
    start_proxy,
)
from protolens.lab.testbed_network import TestbedNetwork
from protolens.store import fairness as fstore
from protolens.store import lab as labstore
from protolens.store import open_ro, open_rw
from protolens.store.tx import transaction

if TYPE_CHECKING:
    from protolens.proxy.control import ProxyProcess

START_LEAD_MS = 2500
"""Both sides of a repetition navigate (or curl starts) this long after their launch: two lab
browsers launched side by side on the testbed machine (2 cores) reached their first navigation
0.90-1.20 s after launch, 6-137 ms apart (8 repetitions); without a common start the first side
took 0.64-0.69 of the link when it led by 70-130 ms. 2.5 s is twice the slowest launch seen,
rounded up (ProtoLens's choice; the paper's clients "load a page at the same moment")."""

START_TRIES_MORE = 2
"""How many times a repetition whose sides started apart is run again (``run``)."""


@dataclass(frozen=True)
class FairnessSpec:
    campaign: str
    pairs: tuple[Pair, ...]
    page: str
    condition: str
    reps: int
    server_cc: str
    testbed: str
    seed: int
    duration_s: float | None = None
    """Repeat each pair until this many seconds have passed (at least one repetition)."""

    def stored(self) -> dict[str, Any]:
        return {"kind": "fairness", "pairs": [p.name for p in self.pairs], "page": self.page,
                "conditions": [self.condition], "reps": self.reps, "server_cc": self.server_cc,
                "testbed": self.testbed, "duration_s": self.duration_s,
                "quiet_ms": LAB_QUIET_MS}


@dataclass
class SideRun:
    arm: Side
    server_ip: str
    load_id: str | None = None
    ok: bool = False
    reason: str | None = None


@dataclass
class FairnessOutcome:
    campaign: str
    repetitions: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)
    interrupted: bool = False
    rerun: list[str] = field(default_factory=list)
    """Repetitions run again because their sides did not start together (``late_start``)."""

    def summary(self) -> str:
        again = f", {len(self.rerun)} run again (sides started apart)" if self.rerun else ""
        return (f"campaign {self.campaign}: {self.repetitions} fairness repetitions, "
                f"{self.failed} with a failed side{again}" + (" (interrupted)" if self.interrupted
                                                              else ""))


def prepare(pairs: str, *, page: str, condition: str, reps: int, server_cc: str,
            testbed: str, settings: Settings, campaign: str | None = None,
            seed: int | None = None, duration_s: float | None = None) -> FairnessSpec:
    """A fairness run from its arguments, checked as a campaign is (known page and profile,
    the browser and the extension built) before anything starts: ``PairError`` or
    ``CampaignError``, one line. Needs root (the testbed's namespaces)."""
    parsed = parse_pairs(pairs)
    validate(CampaignSpec(name="fairness", pages=(page,), arms=(Arm("h2"),),
                          conditions=(condition,), reps=1, seed=0, server_cc=server_cc,
                          testbed=testbed), settings)
    if os.geteuid() != 0:
        raise CampaignError("lab fairness needs root (network namespaces): run it with sudo")
    return FairnessSpec(
        campaign=campaign or time.strftime("fairness-%Y%m%d-%H%M%S"), pairs=tuple(parsed),
        page=page, condition=condition, reps=reps, server_cc=server_cc, testbed=testbed,
        seed=seed if seed is not None else random.SystemRandom().randrange(2**31),
        duration_s=duration_s)


def summary(db: Path, campaign: str) -> list[dict[str, Any]]:
    """Per pair and side of a stored fairness campaign: share, throughput, connections, PLT and
    the Jain index over its repetitions (``fairness.summary_rows``)."""
    with closing(open_ro(db)) as conn:
        return summary_rows(fstore.fairness_rows(conn, campaign))


def load_options(settings: Settings, scratch: Path) -> RunOptions:
    """What every browser side runs with: a campaign load's options (the lab's quiet after
    load, late-shaper flagging, profiles removed after a stored load) without paint capture:
    the analysis reads bytes on the wire, and two screencasts would add work on the cores both
    browsers share."""
    return RunOptions(chromium=settings.chromium, extension_dir=settings.extension,
                      db=settings.db, scratch=scratch, timeout_s=settings.timeout_s,
                      quiet_ms=LAB_QUIET_MS, visual=False)


def run_repetition(pair: Pair, rep: int, spec: FairnessSpec, network: TestbedNetwork,
                   target: Target, objects: Sequence[str], opts: RunOptions,
                   ips: tuple[str, str], proxy: ProxyProcess | None, bulk_delay_ms: float = 0.0
                   ) -> tuple[list[SideRun], Series, RepResult, list[dict[str, Any]]]:
    """Both sides at once, each browser side an ordinary lab load (``runner.browse`` and
    ``runner.record``) with the flows of its address, a bulk side ``bulk_delay_ms`` after the
    common start (``fairness.BULK_DELAY_MS``); returns the sides, the 100 ms series and its
    summary, the flows."""
    first, second = ips
    if proxied(pair.a) or proxied(pair.b):  # the lab proxy talks to the server's own address
        a_ip = first if proxied(pair.a) else second
    else:  # the second address is NATed in the server's namespace (a conntrack lookup per
        # packet the first does not have): the sides swap addresses from one repetition to the
        # next, so that whatever that costs is not always one side's
        a_ip = first if rep % 2 else second
    sides = [SideRun(pair.a, a_ip), SideRun(pair.b, second if a_ip == first else first)]
    network.before_load()
    pcap = opts.scratch / f"rep-{pair.name.replace(':', '_')}-{rep}.pcap"

    start_at_ms = time.time() * 1000 + START_LEAD_MS

    def launch(side: SideRun) -> Browsed | tuple[bool, str | None, float]:
        if not isinstance(side.arm, Arm):
            return bulk(network, objects, side.server_ip, start_at_ms + bulk_delay_ms)
        side.load_id = str(uuid.uuid4())
        load = LoadSpec(load_id=side.load_id, campaign=spec.campaign, page=spec.page,
                        arm=side.arm, condition=spec.condition, repetition=rep,
                        tags=(("fairness_pair", pair.name),))
        return browse(load, target, network, opts, proxy if side.arm.proxied else None,
                      host_rules=f"MAP *.test {side.server_ip}", start_at_ms=start_at_ms)

    # both sides navigate at start_at_ms (START_LEAD_MS); should one browser come up later
    # than that, it would start behind: alternate which side is launched first, by repetition
    order = [0, 1] if rep % 2 else [1, 0]
    with capture(network, pcap), ThreadPoolExecutor(2) as pool:
        launched = list(pool.map(launch, [sides[i] for i in order]))
    results = [launched[order.index(i)] for i in range(2)]
    flows, lateness = network.after_load()
    browsed = [r for r in results if isinstance(r, Browsed)]
    report = (proxy.report(reset=True) if proxy is not None and any(b.rules for b in browsed)
              else None)
    for side, res in zip(sides, results, strict=True):
        if isinstance(res, Browsed):
            side.ok, side.reason = res.result.ok, res.result.reason
            mine = [f for f in flows if f.get("server_ip") == side.server_ip]
            record(res, mine, lateness, report, network.server_cc, opts)
        else:
            side.ok, side.reason = res[:2]
    series = bin_downlink(packets(pcap.read_bytes()),
                          {sides[0].server_ip: "a", sides[1].server_ip: "b"})
    return sides, series, summarize(series), flows


def fairness_rows(spec: FairnessSpec, pair: Pair, rep: int, sides: Sequence[SideRun],
                  series: Series, result: RepResult, flows: Sequence[dict[str, Any]],
                  started_ms: float) -> list[dict[str, Any]]:
    out = []
    leads = start_lead_ms(flows, [s.server_ip for s in sides])
    for name, side, lead in zip(("a", "b"), sides, leads, strict=True):
        out.append({"campaign": spec.campaign, "pair": pair.name, "repetition": rep,
                    "side": name, "arm": str(side.arm), "load_id": side.load_id,
                    "server_ip": side.server_ip, "bytes": result.bytes[name],
                    "share": result.share[name], "mbps": result.mbps[name], "jain": result.jain,
                    "contention_ms": result.contention_ms,
                    "connections": wire_connections(flows, side.server_ip),
                    "bin_ms": series.bin_ms, "series": list(series.bytes[name]),
                    "started_at_ms": started_ms, "start_ms": lead})
    return out


_Tried = tuple[list[SideRun], list[dict[str, Any]], list[dict[str, Any]]]
"""One try of a repetition: its sides, its rows, the shaper's flows."""


def started_together(once: Callable[[], _Tried], again: Callable[[str], None],
                     tries_more: int = START_TRIES_MORE) -> _Tried:
    """``once()`` until its sides started together (``fairness.late_start``), at most
    ``tries_more`` times more; ``again(why)`` before each new try. The loads of a try not kept
    stay stored as lab loads; its shares are not a repetition. The last try is kept whatever its
    start (its ``start_ms`` says how far apart)."""
    tried = once()
    for _ in range(tries_more):
        late = late_start(tried[1])
        if late is None:
            break
        again(late)
        tried = once()
    return tried


def _more(spec: FairnessSpec, done: int, elapsed_s: float) -> bool:
    if spec.duration_s is not None:
        return done == 0 or elapsed_s < spec.duration_s
    return done < spec.reps


def run(spec: FairnessSpec, settings: Settings,
        on_rep: Callable[[Pair, int, list[dict[str, Any]], list[dict[str, Any]]], None]
        | None = None,
        on_rerun: Callable[[Pair, int, str], None] | None = None
        ) -> FairnessOutcome:
    """Every pair, ``reps`` times (or for ``duration_s``); every repetition stored.
    ``on_rep(pair, rep, rows, flows)`` sees each repetition's rows and the shaper's flows. A
    repetition whose sides did not start together (``fairness.late_start``) is run again, up to
    ``START_TRIES_MORE`` times (``on_rerun(pair, rep, why)``); the last try is kept whatever its
    start, and its ``start_ms`` says how far apart."""
    outcome = FairnessOutcome(spec.campaign)
    scratch = settings.scratch or Path(settings.db).parent / "lab-scratch"
    opts = load_options(settings, scratch / f"fairness-{spec.campaign}")
    opts.scratch.mkdir(parents=True, exist_ok=True)
    network = TestbedNetwork.prepare(spec.testbed, server_cc=spec.server_cc, pages=[spec.page])
    proxy = None
    try:
        with closing(open_rw(settings.db, time.time() * 1000)) as conn, transaction(conn):
            labstore.ensure_campaign(conn, spec.campaign, seed=spec.seed, spec=spec.stored(),
                                     version=__version__, now_ms=time.time() * 1000)
        network.apply(spec.condition)
        target = network.targets([spec.page])[spec.page]
        objects = network.object_urls(spec.page)
        if any(proxied(p.a) or proxied(p.b) for p in spec.pairs):
            proxy = start_proxy(network)
        with second_address(network) as second:
            ips = (network.testbed.state.server_ip, second)
            for pair in spec.pairs:
                began, rep = time.monotonic(), 0
                # a bulk side waits for the browser's navigation, by what the tries show
                delay = [BULK_DELAY_MS]
                while _more(spec, rep, time.monotonic() - began):
                    rep += 1

                    def once(pair: Pair = pair, rep: int = rep,
                             delay: list[float] = delay) -> _Tried:
                        started_ms = time.time() * 1000
                        sides, series, result, flows = run_repetition(
                            pair, rep, spec, network, target, objects, opts, ips, proxy,
                            delay[0])
                        rows = fairness_rows(spec, pair, rep, sides, series, result, flows,
                                             started_ms)
                        delay[0] = bulk_delay_after(delay[0], rows)
                        return sides, rows, flows

                    def again(why: str, pair: Pair = pair, rep: int = rep) -> None:
                        outcome.rerun.append(f"{pair.name} rep {rep}: {why}")
                        if on_rerun:
                            on_rerun(pair, rep, why)

                    sides, rows, flows = started_together(once, again)
                    with closing(open_rw(settings.db, time.time() * 1000)) as conn:
                        fstore.store_repetition(conn, rows)
                    outcome.repetitions += 1
                    bad = [f"{pair.name} rep {rep} side {s.arm}: {s.reason}"
                           for s in sides if not s.ok]
                    outcome.failed += bool(bad)
                    outcome.failures += bad
                    if on_rep:
                        on_rep(pair, rep, rows, flows)
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        if proxy is not None:
            proxy.stop()
        network.close()
    return outcome
