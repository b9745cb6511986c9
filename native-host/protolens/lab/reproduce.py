"""``protolens lab reproduce NAME``: run an experiment's campaigns, then put the paper's finding
beside the measurement (adapter; the analysis is ``experiments``, pure)."""

from __future__ import annotations

import random
import time
from contextlib import closing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from protolens.lab import campaign as camp
from protolens.lab.estimate import Check
from protolens.lab.experiments import EXPERIMENTS, Experiment, Finding, Part
from protolens.lab.fairness import parse_pairs, summary_rows
from protolens.lab.report import report_rows
from protolens.policy.file import to_stored
from protolens.policy.rules import make_rule
from protolens.store import fairness as fstore
from protolens.store import lab as labstore
from protolens.store import open_ro

if TYPE_CHECKING:
    from protolens.lab.fairness_run import FairnessOutcome


@dataclass
class Reproduction:
    experiment: Experiment
    quick: bool
    campaigns: dict[str, str] = field(default_factory=dict)
    """Part suffix -> campaign name."""
    outcomes: list[camp.Outcome | FairnessOutcome] = field(default_factory=list)
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    navigations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Part suffix -> the campaign's stored navigations, or its fairness rows for a fairness
    experiment (what the analysis read)."""
    findings: list[Finding] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    """Wall time of the whole reproduction."""
    urls: tuple[str, ...] = ()
    """Real sites the parts ran on instead of the testbed's replicas (``--urls``)."""

    @property
    def checks(self) -> list[Check]:
        return [f for f in self.findings if isinstance(f, Check)]

    @property
    def lines(self) -> list[str]:
        out: list[str] = []
        if self.urls:
            out.append(f"on {len(self.urls)} real site(s), not the testbed's replicas: real "
                       "sites change over time, so a rerun measures the sites of today "
                       f"(parts: {', '.join(self.campaigns)})")
        for f in self.findings:
            out.extend(f.lines() if isinstance(f, Check) else [f])
        return out

    def as_json(self) -> dict[str, Any]:
        return {"experiment": self.experiment.name, "paper": self.experiment.paper,
                "paper_finding": self.experiment.finding, "quick": self.quick,
                "campaigns": self.campaigns, "measured": self.lines,
                "checks": [c.to_json() for c in self.checks], "rows": self.rows,
                "failed_loads": sum(o.failed for o in self.outcomes),
                "interrupted": self.interrupted, "seconds": round(self.seconds, 1),
                "real_sites": list(self.urls)}


@dataclass(frozen=True)
class RealSites:
    """``lab reproduce --urls``: the sites, and the wan path's settings (``CampaignSpec``)."""

    urls: tuple[str, ...]
    wan: str = "plw"
    uplink: str | None = None
    resolvers: tuple[str, ...] = ()
    ca: str | None = None


def real_parts(exp: Experiment, quick: bool) -> tuple[Part, ...]:
    """The parts of ``exp`` that run on real sites; ``CampaignError`` if none can."""
    if not exp.real_sites:
        raise camp.CampaignError(
            f"{exp.name} cannot run on real sites: its claims rest on what only the testbed "
            "controls (the servers' CC, a page's make-up, a shared bottleneck); these can: "
            f"{', '.join(e.name for e in EXPERIMENTS if e.real_sites)}")
    return tuple(p for p in (exp.quick if quick else exp.full) if p.suffix in exp.real_sites)


def _run_fairness(part: Part, name: str, settings: camp.Settings, *, testbed: str,
                  reps: int | None, seed: int) -> FairnessOutcome:
    from protolens.lab import fairness_run
    spec = fairness_run.FairnessSpec(
        campaign=name, pairs=tuple(parse_pairs(",".join(part.arms))), page=part.pages[0],
        condition=part.conditions[0], reps=reps or part.reps, server_cc=part.server_cc,
        testbed=testbed, seed=seed)
    return fairness_run.run(spec, replace(settings, timeout_s=max(settings.timeout_s,
                                                                  part.timeout_s)))


def reproduce(exp: Experiment, settings: camp.Settings, *, quick: bool, testbed: str,
              reps: int | None = None, seed: int | None = None,
              real: RealSites | None = None) -> Reproduction:
    """Run every part as its own campaign (same seed), then analyze the stored loads; with
    ``real``, the parts that can run on real sites, on those sites."""
    began = time.monotonic()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    parts = real_parts(exp, quick) if real else (exp.quick if quick else exp.full)
    rep = Reproduction(exp, quick, urls=real.urls if real else ())
    for part in parts:
        name = f"{exp.name}{'-quick' if quick else ''}-{stamp}-{part.suffix}"
        rep.campaigns[part.suffix] = name
        if exp.kind == "fairness":
            fair = _run_fairness(part, name, settings, testbed=testbed, reps=reps, seed=seed)
            rep.outcomes.append(fair)
            if fair.interrupted:
                rep.interrupted = True
                break
            continue
        policy = tuple(to_stored([make_rule(d, arm) for d, arm in part.policy]))
        spec = camp.CampaignSpec(name=name, pages=part.pages, arms=camp.parse_arms(part.arms),
                                 conditions=part.conditions, reps=reps or part.reps, seed=seed,
                                 server_cc=part.server_cc, testbed=testbed, policy=policy,
                                 bbr_hosts=part.bbr_hosts)
        if real is not None:  # the sites' own servers: their CC is theirs, not the part's
            spec = replace(spec, pages=(), urls=real.urls, server_cc=None, quiet_ms=None,
                           wan=real.wan, uplink=real.uplink, resolvers=real.resolvers,
                           ca=real.ca)
        part_settings = replace(settings, timeout_s=max(settings.timeout_s, part.timeout_s))
        outcome = camp.run(spec, part_settings)
        rep.outcomes.append(outcome)
        if outcome.interrupted:
            rep.interrupted = True
            break
    with closing(open_ro(settings.db)) as conn:
        for suffix, name in rep.campaigns.items():
            if exp.kind == "fairness":
                rep.navigations[suffix] = fstore.fairness_rows(conn, name)
                rep.rows[suffix] = summary_rows(rep.navigations[suffix])
            else:
                rep.navigations[suffix] = labstore.campaign_navigations(conn, name)
                rep.rows[suffix] = report_rows(rep.navigations[suffix])
    if not rep.interrupted:
        rep.findings = exp.analyze(rep.navigations, seed)
    rep.seconds = time.monotonic() - began
    return rep
