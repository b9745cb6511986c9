"""A campaign from the command line to the store: validate, plan, pick the network, run with a
progress bar, stop cleanly on Ctrl-C (adapter around ``plan`` and ``runner``)."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from protolens import __version__
from protolens.arms import Arm, ArmError, known_arms, parse_lab_arm
from protolens.lab.errors import CampaignError as CampaignError
from protolens.lab.network import DirectNetwork, LabNetwork
from protolens.lab.plan import PlannedLoad, missing, plan
from protolens.lab.progress import PlainProgress
from protolens.lab.real_sites import DIRECT, check_real_conditions, real_targets
from protolens.lab.runner import LAB_QUIET_MS, RunOptions, Target, run_campaign
from protolens.lab.runner import Progress as Counts
from protolens.store import OperationalError, open_ro, open_rw
from protolens.store import lab as labstore
from protolens.store import paths as pathstore
from protolens.store.cc import campaign_navigation
from protolens.testbed.run import TestbedError


def parse_arms(texts: Sequence[str]) -> tuple[Arm, ...]:
    """A campaign's arms from the command line or its stored spec; one line naming every bad
    one."""
    arms, bad = [], []
    for text in texts:
        try:
            arms.append(parse_lab_arm(text))
        except ArmError:
            bad.append(text)
    if bad or not texts:
        raise _unknown_arms(bad)
    return tuple(arms)


def _unknown_arms(bad: Sequence[str]) -> CampaignError:
    return CampaignError(f"unknown arm {', '.join(bad) or '(none)'}: "
                         f"expected some of {known_arms()} (h2-parallel:N with N 1-8)")


LEGACY_QUIET_MS = 2000
"""The recorder's own quiet after load (src/cdp/navigation.ts), which every lab load had before
campaigns stored ``quiet_ms``: a resumed old campaign keeps it."""


@dataclass(frozen=True)
class CampaignSpec:
    """Everything that defines a campaign; stored with it so ``--resume`` replays the plan."""

    name: str
    pages: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    arms: tuple[Arm, ...] = (Arm("h1"), Arm("h2"), Arm("h3"))
    conditions: tuple[str, ...] = ("wifi",)
    reps: int = 3
    seed: int = 0
    warm: bool = False
    server_cc: str | None = "cubic"
    testbed: str = "pl"
    policy: tuple[dict[str, Any], ...] = ()
    """Per-domain rules for the ``policy`` arm (``--policy FILE``), as ``Rule.as_dict``."""
    bbr_hosts: tuple[str, ...] = ()
    """Testbed hosts served over BBR whatever ``server_cc`` is (``--bbr-host``)."""
    quiet_ms: int | None = None
    """The network quiet after load that ends each record (``--quiet-ms``). Left out, it is
    ``runner.LAB_QUIET_MS`` for testbed pages and None for real sites (the recorder's own 2 s,
    as in an everyday browser)."""
    wan: str = "plw"
    """Real sites under a profile: the wan network's name (``testbed/wan.py``)."""
    uplink: str | None = None
    """The interface the wan network NATs out of (default: the default route's)."""
    resolvers: tuple[str, ...] = ()
    """Name servers of the wan network's namespace (default: the host's)."""
    ca: str | None = None
    """A CA (PEM file) trusted besides the system's for real sites (``--ca``)."""

    @property
    def path(self) -> str:
        """``testbed`` (corpus pages), ``direct`` (real sites, unshaped: condition ``none``) or
        ``wan`` (real sites through the shaper)."""
        if not self.urls:
            return "testbed"
        return "direct" if tuple(self.conditions) == DIRECT else "wan"

    def __post_init__(self) -> None:
        if self.quiet_ms is None and not self.urls:
            object.__setattr__(self, "quiet_ms", LAB_QUIET_MS)

    def stored(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("name")
        data.pop("seed")
        data["arms"] = [str(a) for a in self.arms]
        return data

    @classmethod
    def from_stored(cls, name: str, seed: int, data: dict[str, Any]) -> CampaignSpec:
        return cls(name=name, seed=seed, pages=tuple(data.get("pages", ())),
                   urls=tuple(data.get("urls", ())), arms=parse_arms(data["arms"]),
                   conditions=tuple(data["conditions"]), reps=int(data["reps"]),
                   warm=bool(data.get("warm")), server_cc=data.get("server_cc"),
                   testbed=str(data.get("testbed", "pl")),
                   policy=tuple(data.get("policy", ())),
                   bbr_hosts=tuple(data.get("bbr_hosts", ())),
                   wan=str(data.get("wan", "plw")), uplink=data.get("uplink"),
                   resolvers=tuple(data.get("resolvers", ())), ca=data.get("ca"),
                   # stored before lab runs chose a quiet: they ran with the recorder's 2 s
                   quiet_ms=data.get("quiet_ms", LEGACY_QUIET_MS))


@dataclass(frozen=True)
class Settings:
    db: Path
    chromium: str
    extension: Path
    timeout_s: float = 60.0
    retries: int = 1
    scratch: Path | None = None
    visual: bool = True
    """Capture paint progress for the visual metrics (``--no-visual`` turns it off)."""
    save_log: bool = False
    """Keep each load's raw DevTools events beside its record (``--save-log``)."""
    progress_to_stderr: bool = False
    """Progress on stderr: stdout carries a document (``lab reproduce --json``)."""
    overlap: bool | None = None
    """Start each next browser during the page's quiet (``lab/runner.py``); None: on for
    testbed pages, off for real sites (whose pages may still load after their load event)."""


@dataclass
class Outcome:
    campaign: str
    planned: int
    ran: int
    counts: Counts = field(default_factory=Counts)
    interrupted: bool = False

    @property
    def failed(self) -> int:
        return self.counts.failed

    def summary(self) -> str:
        c = self.counts
        head = (f"campaign {self.campaign}: {self.ran} of {self.planned} loads run, "
                f"{c.failed} failed after retries, {c.retried} retried, {c.flagged} flagged")
        lines = [head]
        lines += [f"  failed: {f}" for f in c.failures[-5:]]
        if self.interrupted:
            lines.append(f"interrupted: resume with  protolens lab run --resume {self.campaign}")
        else:
            lines.append(f"report:  protolens report --campaign {self.campaign}")
        return "\n".join(lines)


def validate(spec: CampaignSpec, settings: Settings) -> None:
    """Refuse, with one line, anything that would fail later; start nothing."""
    if bool(spec.pages) == bool(spec.urls):
        raise CampaignError("give either --pages (testbed) or real sites (--urls FILE, or URLs "
                            "as arguments)")
    if not spec.arms:
        raise _unknown_arms(())
    if any(a.name == "policy" for a in spec.arms) and not spec.policy:
        raise CampaignError("arm 'policy' needs --policy FILE")
    if spec.urls and spec.bbr_hosts:
        raise CampaignError("--bbr-host needs the testbed (--pages)")
    if not spec.urls and (spec.uplink or spec.resolvers or spec.ca):
        raise CampaignError("--uplink, --resolver and --ca apply to real sites (--urls)")
    if spec.urls:
        check_real_conditions(spec.conditions)
        if spec.ca and not Path(spec.ca).is_file():
            raise CampaignError(f"--ca {spec.ca}: no such file")
    else:
        from protolens.pages import catalog
        from protolens.shaper import ProfileError, load_profile
        known = {p.name for p in catalog()} | _custom_pages()
        unknown = [p for p in spec.pages if p not in known]
        if unknown:
            raise CampaignError(f"unknown page {', '.join(unknown)} "
                                "(see: protolens testbed pages)")
        for condition in spec.conditions:
            try:
                load_profile(condition)
            except ProfileError as exc:
                raise CampaignError(str(exc)) from None
    if not Path(settings.chromium).is_file():
        raise CampaignError(f"no browser at {settings.chromium} (apt-get install chromium, "
                            "or --chromium PATH)")
    if not (settings.extension / "manifest.json").is_file():
        raise CampaignError(f"the extension is not built at {settings.extension} "
                            "(run scripts/setup.sh, or set PROTOLENS_EXTENSION)")


def _custom_pages() -> set[str]:
    import os

    from protolens.pages.build import custom_specs
    from protolens.paths import data_home
    return {s.name for s in custom_specs(data_home(os.environ) / "pages")}


def targets_for(spec: CampaignSpec, network: LabNetwork) -> dict[str, Target]:
    if spec.urls:
        return real_targets(spec.urls)
    from protolens.lab.testbed_network import TestbedNetwork
    assert isinstance(network, TestbedNetwork)
    return network.targets(spec.pages)


def run(spec: CampaignSpec, settings: Settings, resume: bool = False) -> Outcome:
    """Validate, store the campaign, run what is missing; Ctrl-C stops after the current load."""
    validate(spec, settings)
    stored_seed, done = _stored_state(settings.db, spec.name)
    seed = spec.seed if stored_seed is None else stored_seed
    if not resume and seed != spec.seed:
        raise CampaignError(f"campaign {spec.name!r} already exists: pick another "
                            f"--campaign, or --resume {spec.name}")
    pages = spec.pages or spec.urls
    loads = plan(spec.name, pages=pages, arms=spec.arms, conditions=spec.conditions,
                 reps=spec.reps, seed=seed, warm=spec.warm)
    todo = missing(loads, done)
    outcome = Outcome(campaign=spec.name, planned=len(loads), ran=0)
    if not todo:
        return outcome
    try:
        network = _network(spec)
    except TestbedError as exc:
        raise CampaignError(str(exc)) from None
    scratch = settings.scratch or Path(tempfile.mkdtemp(prefix="protolens-lab-"))
    opts = RunOptions(chromium=settings.chromium, extension_dir=settings.extension,
                      db=settings.db, scratch=scratch, timeout_s=settings.timeout_s,
                      retries=settings.retries, policy=spec.policy, quiet_ms=spec.quiet_ms,
                      visual=settings.visual, save_log=settings.save_log,
                      overlap=(spec.path == "testbed" if settings.overlap is None
                               else settings.overlap))
    try:
        # stored once the network is ready: a campaign refused before it starts leaves nothing
        with closing(open_rw(settings.db, time.time() * 1000)) as conn:
            labstore.ensure_campaign(conn, spec.name, seed=seed, spec=spec.stored(),
                                     version=__version__, now_ms=time.time() * 1000)
            pathstore.record_run(conn, spec.name, time.time() * 1000,
                                 _network_info(network, spec.conditions))
        outcome.counts = _run_with_bar(todo, targets_for(spec, network), network, opts, outcome,
                                       sys.stderr if settings.progress_to_stderr else sys.stdout)
    except KeyboardInterrupt:
        outcome.interrupted = True
    except TestbedError as exc:  # e.g. the shaper died mid-campaign: what ran is stored
        raise CampaignError(f"{exc} (after {outcome.ran} loads; fix it, then "
                            f"protolens lab run --resume {spec.name})") from None
    finally:
        close = getattr(network, "close", None)
        if close:
            close()
    return outcome


def load_page(url: str, settings: Settings, name: str) -> str | None:
    """Load ``url`` once in the lab browser over the user's own network, as campaign ``name``
    (h2, no shaping: ``lab run --urls``); the id of its navigation, or None if nothing was
    recorded."""
    spec = CampaignSpec(name=name, urls=(url,), arms=(Arm("h2"),), conditions=("none",),
                        reps=1, seed=0)
    run(spec, settings)
    with closing(open_ro(settings.db)) as conn:
        return campaign_navigation(conn, spec.name)


def stored_spec(db: Path, name: str) -> CampaignSpec:
    """The spec campaign ``name`` was stored with (``--resume``); ``CampaignError`` if there is
    none or it cannot be read back, the store's own errors pass through."""
    with closing(open_ro(db)) as conn:
        stored = labstore.campaign_spec(conn, name)
    if stored is None:
        raise CampaignError(f"no campaign named {name!r} in {db} (see: protolens lab campaigns)")
    try:
        return CampaignSpec.from_stored(name, *stored)
    except CampaignError as exc:
        raise CampaignError(f"campaign {name!r}: {exc}") from None


def _stored_state(db: Path, name: str) -> tuple[int | None, list[tuple[str, str, str, int]]]:
    """The stored seed (None if the campaign is new) and the cells already done; read-only."""
    if not db.exists():
        return None, []
    try:
        with closing(open_ro(db)) as conn:
            stored = labstore.campaign_spec(conn, name)
            return (None, []) if stored is None else (stored[0], labstore.done_cells(conn, name))
    except OperationalError:  # a store from before the lab tables: nothing stored yet
        return None, []


def _cell(load: PlannedLoad) -> tuple[str, str, str]:
    return (load.page, str(load.arm), load.condition)


def _network_info(network: LabNetwork, conditions: Sequence[str]) -> dict[str, Any]:
    info = getattr(network, "info", None)
    return info(conditions) if info is not None else {"path": network.name}


def _network(spec: CampaignSpec) -> LabNetwork:
    if spec.path == "direct":
        return DirectNetwork()
    if spec.path == "wan":
        from protolens.lab.wan_network import WanLabNetwork
        return WanLabNetwork.prepare(spec.wan, uplink=spec.uplink, resolvers=spec.resolvers,
                                     ca=spec.ca)
    from protolens.lab.testbed_network import TestbedNetwork
    return TestbedNetwork.prepare(spec.testbed, server_cc=spec.server_cc or "cubic",
                                  pages=spec.pages, bbr_hosts=spec.bbr_hosts)


def _run_with_bar(todo: Sequence[PlannedLoad], targets: dict[str, Target], network: LabNetwork,
                  opts: RunOptions, outcome: Outcome, out: TextIO) -> Counts:
    if not out.isatty():  # a file or CI log: a redrawn bar shows nothing until the end
        plain = PlainProgress.of(outcome.campaign, (_cell(p) for p in todo), time.monotonic())

        def line(counts: Counts, load: PlannedLoad) -> None:
            advanced = counts.done > outcome.ran
            outcome.ran, outcome.counts = counts.done, counts
            text = plain.tick(counts.done, counts.failed, _cell(load), advanced,
                              time.monotonic())
            if text:
                print(text, file=out, flush=True)

        return run_campaign(todo, targets, network, opts, on_progress=line)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("failed {task.fields[failed]}"), TimeRemainingColumn())
    with Progress(*columns, transient=False, console=Console(file=out)) as bar:
        task = bar.add_task(outcome.campaign, total=len(todo), failed=0)

        def tick(counts: Counts, load: PlannedLoad) -> None:
            outcome.ran = counts.done
            outcome.counts = counts
            bar.update(task, completed=counts.done, failed=counts.failed,
                       description=f"{outcome.campaign} {load.page}/{load.arm}/{load.condition}")

        return run_campaign(todo, targets, network, opts, on_progress=tick)
