"""One Markdown report of several reproductions: a reviewer's artifact (pure; figures are
written by the caller and named here by their file names).

Per experiment: the paper and its finding, a table of every claim with the measured ratio, its
95% bootstrap interval, n and the verdict, the context lines, the campaigns' per-cell medians, and
the PLT figure. Written by ``protolens lab reproduce --all``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from protolens.lab.reproduce import Reproduction


def _cell(value: Any) -> str:
    text = "" if value is None else (f"{value:.0f}" if isinstance(value, float) else str(value))
    return text.replace("|", "\\|")


def _ratio(low: float | None, point: float | None, high: float | None) -> str:
    if point is None:
        return "n/a"
    if low is None or high is None:
        return f"x{point:.2f}"
    return f"x{point:.2f} [{low:.2f}, {high:.2f}]"


def _num(value: Any, digits: int) -> str:
    return "" if value is None else f"{float(value):.{digits}f}"


def _share(s: Mapping[str, Any]) -> str:
    if s.get("share_mean") is None:
        return "n/a"
    ci = ("" if s.get("share_ci_low") is None else
          f" [{s['share_ci_low']:.2f}, {s['share_ci_high']:.2f}]")
    return f"{s['share_mean']:.2f}{ci}"


def render(reps: Sequence[Reproduction], *, title: str, created: str, machine: str,
           figures: Mapping[str, str] | None = None) -> str:
    """The report; ``figures`` maps an experiment name to its PLT figure's file name."""
    figures = figures or {}
    verdicts = [c.verdict for r in reps for c in r.checks]
    agree = sum(v == "agrees" for v in verdicts)
    disagree = sum(v == "disagrees" for v in verdicts)
    out = [f"# {title}", "", f"Created {created} on {machine}.", "",
           f"{len(reps)} experiments, {len(verdicts)} claims: {agree} agree, {disagree} "
           f"disagree, {len(verdicts) - agree - disagree} inconclusive or without data. "
           "Verdicts come from 95% bootstrap intervals of ratios of medians, never from point "
           "estimates; nothing was tuned.", "",
           "| experiment | variant | claims | agree | disagree | other | time |",
           "|---|---|---|---|---|---|---|"]
    for r in reps:
        vs = [c.verdict for c in r.checks]
        a, d = sum(v == "agrees" for v in vs), sum(v == "disagrees" for v in vs)
        out.append(f"| {r.experiment.name} | {'quick' if r.quick else 'full'} | {len(vs)} | {a} "
                   f"| {d} | {len(vs) - a - d} | {r.seconds / 60:.1f} min |")
    for r in reps:
        exp = r.experiment
        out += ["", f"## {exp.name}", "", f"Paper: {exp.paper}", "", f"> {exp.finding}", "",
                "Campaigns: " + ", ".join(f"`{c}`" for c in r.campaigns.values()), ""]
        if r.urls:
            out += [f"On real sites, not the testbed's replicas ({', '.join(r.urls)}): real "
                    "sites change over time, so a rerun measures the sites of today.", ""]
        if r.interrupted:
            out += ["**Interrupted**: no verdicts.", ""]
        if r.checks:
            out += ["| claim | measured ratio [95% CI] | n | paper | verdict |",
                    "|---|---|---|---|---|"]
            for c in r.checks:
                q = c.ratio
                out.append(f"| {_cell(c.claim)} | {_cell(q.label)}: "
                           f"{_ratio(q.low, q.point, q.high)} | {_cell(q.n_text())} | "
                           f"{_cell(c.expect.describe())} | **{c.verdict}** |")
            out.append("")
        context = [f for f in r.findings if isinstance(f, str)]
        if context:
            out += ["```", *context, "```", ""]
        if exp.name in figures:
            out += [f"![{exp.name} PLT]({figures[exp.name]})", ""]
        for suffix, rows in r.rows.items():
            if exp.kind == "fairness":
                out += [f"Per pair and side, campaign `{r.campaigns[suffix]}`:", "",
                        "| pair | side | arm | n | mean share [95% CI] | Mbit/s | Jain | PLT ms "
                        "| connections | started behind, max ms |",
                        "|---|---|---|---|---|---|---|---|---|---|"]
                out += [f"| {_cell(s['pair'])} | {s['side']} | {_cell(s['arm'])} | {s['n']} | "
                        f"{_share(s)} | {_num(s['mbps_mean'], 2)} | {_num(s['jain_mean'], 3)} "
                        f"| {_cell(s['plt_median_ms'])} | {_cell(s['connections_median'])} "
                        f"| {_num(s.get('start_ms_max'), 1)} |"
                        for s in rows]
                out.append("")
                continue
            out += [f"Per cell, campaign `{r.campaigns[suffix]}` (PLT ms):", "",
                    "| page | condition | arm | n | median | p25 | p75 |",
                    "|---|---|---|---|---|---|---|"]
            out += [f"| {_cell(row['page'])} | {_cell(row['condition'])} | {_cell(row['arm'])} "
                    f"| {row['n']} | {_cell(row.get('plt_median_ms'))} | "
                    f"{_cell(row.get('plt_p25_ms'))} | {_cell(row.get('plt_p75_ms'))} |"
                    for row in rows]
            out.append("")
    return "\n".join(out).rstrip() + "\n"
