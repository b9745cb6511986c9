"""``protolens policy add|list|remove|test``: per-domain protocol policies (docs/POLICY.md)."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlsplit

import click

from protolens.cli.db import connect_ro, db_option, db_path
from protolens.cli.errors import UserError
from protolens.cli.output import emit, output_options
from protolens.policy.mechanism import enforcement
from protolens.policy.rules import PolicyError, check_set, make_rule, match, parse_domain
from protolens.store import Connection, DatabaseError, StoreError, open_rw
from protolens.store import policy as store

COLUMNS = ("domain", "kind", "arm", "latency_ms", "throughput_kbps")


@click.group("policy")
def policy_group() -> None:
    """Per-domain protocol policies: which arm applies to which host, and how.

    Example: protolens policy add example.com h2-parallel:2
    """


def _rw(db: Path | None) -> Connection:
    try:
        return open_rw(db_path(db), time.time() * 1000)
    except StoreError as exc:
        raise UserError(str(exc)) from None


@policy_group.command("add")
@click.argument("domain")
@click.argument("arm")
@click.option("--latency-ms", type=float, help="Extra latency for this domain (CDP rule).")
@click.option("--throughput-kbps", type=float, help="Throughput cap for this domain, kbit/s.")
@click.option("--replace", is_flag=True, help="Replace an existing rule for the same DOMAIN.")
@db_option
def add_cmd(domain: str, arm: str, latency_ms: float | None, throughput_kbps: float | None,
            replace: bool, db: Path | None) -> None:
    """Add a rule. DOMAIN: a host (www.example.com), *.example.com, or a registrable domain
    (example.com: itself and every subdomain). ARM: h1, h2, h2-parallel:N (N 1-8), h3, no-h3,
    default.

    Example: protolens policy add '*.example.com' h1 --latency-ms 50
    """
    try:
        rule = make_rule(domain, arm, latency_ms, throughput_kbps)
    except PolicyError as exc:
        raise UserError(str(exc)) from None
    conn = _rw(db)
    try:
        store.add_rule(conn, rule, replace=replace, now_ms=time.time() * 1000)
    except PolicyError as exc:
        raise UserError(str(exc)) from None
    finally:
        conn.close()
    click.echo(f"{rule.domain} ({rule.kind}) -> {rule.arm}")


@policy_group.command("list")
@db_option
@output_options
def list_cmd(db: Path | None, fmt: str) -> None:
    """List the rules, most specific first.

    Example: protolens policy list --json
    """
    if not db_path(db).is_file():
        emit([], fmt, title="policies", columns=COLUMNS)
        return
    conn = connect_ro(db)
    try:
        rows = [r.as_dict() for r in store.rules(conn)] if store.has_table(conn) else []
    finally:
        conn.close()
    emit(rows, fmt, title="policies", columns=COLUMNS)


@policy_group.command("remove")
@click.argument("domain")
@db_option
def remove_cmd(domain: str, db: Path | None) -> None:
    """Remove the rule for exactly DOMAIN (as listed).

    Example: protolens policy remove '*.example.com'
    """
    try:
        pattern, _ = parse_domain(domain)
    except PolicyError as exc:
        raise UserError(str(exc)) from None
    conn = _rw(db)
    try:
        if not store.remove_rule(conn, pattern):
            raise UserError(f"no rule for {pattern} (see: protolens policy list)")
    finally:
        conn.close()
    click.echo(f"removed {pattern}")


@policy_group.command("test")
@click.argument("url")
@db_option
@output_options
def test_cmd(url: str, db: Path | None, fmt: str) -> None:
    """Say which rule and mechanism would apply to URL, in a lab profile and in your browser.

    Example: protolens policy test https://www.example.com/page
    """
    host = urlsplit(url if "://" in url else f"https://{url}").hostname
    if not host:
        raise UserError(f"not a URL or host: {url!r}")
    rules = []
    if db_path(db).is_file():
        conn = connect_ro(db)
        try:
            rules = store.rules(conn) if store.has_table(conn) else []
        finally:
            conn.close()
    rule = match(rules, host)
    lab = enforcement(rule, lab=True, proxied=True)
    browser = enforcement(rule, lab=False)
    emit({"host": host, "rule": rule.domain if rule else None, "arm": lab.arm,
          "latency_ms": rule.latency_ms if rule else None,
          "throughput_kbps": rule.throughput_kbps if rule else None,
          "mechanism_lab": lab.mechanism, "mechanism_browser": browser.mechanism}, fmt,
         title="policy")


@click.command("relay")
@click.option("--port", default=8853, show_default=True, type=click.IntRange(0, 65535),
              help="Loopback port (0: any free port, printed).")
@click.option("--map", "maps", multiple=True, metavar="HOST=IP",
              help="Serve only these hosts, at these addresses (lab and tests).")
@click.option("--pac", "pac_for", metavar="DOMAINS",
              help="Print the PAC script for these comma-separated no-h3 domains (matched as "
                   "policy rules: example.com and its subdomains, www.example.com alone, "
                   "*.cdn.net) and exit.")
def relay_cmd(port: int, maps: tuple[str, ...], pac_for: str | None) -> None:
    """Run the local CONNECT relay: a plain tunnel (never intercepts) that keeps no-h3 domains
    off HTTP/3 when the extension routes them to it (docs/POLICY.md). Like the host's own relay
    it requires a credential, drawn afresh for each run and printed with the port
    ({"port": ..., "username": "protolens", "password": ...}): as Proxy-Authorization Basic, or
    as PROTOLENS_PROXY_TOKEN=password in the environment of the browser that connects. It
    relays only ports 443 and 80 of hosts a no-h3 rule names (with --map: only mapped hosts).

    Example: protolens relay --port 8853
    """
    import asyncio
    import json
    import os
    import secrets

    from protolens.host.relay import StorePolicies
    from protolens.paths import default_db
    from protolens.proxy.relay import Relay, serve
    if pac_for is not None:
        click.echo(_pac(port, pac_for), nl=False)
        return
    hosts = None
    if maps:
        hosts = {}
        for item in maps:
            host, sep, ip = item.partition("=")
            if not sep or not host or not ip:
                raise UserError(f"--map {item!r}: expected HOST=IP")
            hosts[host.lower()] = ip
    token = secrets.token_urlsafe(24)  # no open proxy for every local process
    relay = Relay(token, hosts=hosts, check_process=True,
                  allowed=StorePolicies(default_db(os.environ), os.environ).relayed)

    def ready(bound: int) -> None:
        click.echo(json.dumps({"port": bound, "username": "protolens", "password": token}))

    try:
        asyncio.run(serve(relay, port, ready=ready))
    except OSError as exc:
        raise UserError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    except KeyboardInterrupt:
        pass


def _pac(port: int, domains: str) -> str:
    """The PAC script for ``--pac``: each domain a ``no-h3`` rule, matched as stored rules are."""
    from protolens.policy.pac import pac_script
    try:
        rules = [make_rule(d.strip(), "no-h3") for d in domains.split(",") if d.strip()]
        check_set(rules)
    except PolicyError as exc:
        raise UserError(f"--pac: {exc}") from None
    return pac_script(port, rules)


@policy_group.command("suggest")
@click.option("--campaign", help="Use this lab campaign's loads (arms h1 and h2).")
@click.option("--source", type=click.Choice(["passive", "experiment"]),
              help="Use your everyday (or experiment) loads, by the main document's protocol.")
@click.option("--apply", "apply_", is_flag=True, help="Add the proposed rules (h1 per domain).")
@click.option("--seed", type=int, default=0, hidden=True,
              help="Accepted and ignored: the interval is exact, nothing is resampled.")
@db_option
@output_options
def suggest_cmd(campaign: str | None, source: str | None, apply_: bool, seed: int,
                db: Path | None, fmt: str) -> None:
    """Propose per-domain policies from the servers' CC labels (protolens cc probe) and your own
    measurements (compare's statistics): h1 where HTTP/1.1 is significantly faster, above all
    behind delay-based servers (CoNEXT'20's HTTPX). Never proposes without data.

    Example: protolens policy suggest --source passive --apply
    """
    from protolens.cc.suggest import domains_to_apply, suggest
    from protolens.store import cc as ccstore
    from protolens.store.compare import compare_rows
    if (campaign is None) == (source is None):
        raise UserError("give exactly one of --campaign NAME or --source passive|experiment")
    conn = connect_ro(db)
    try:
        rows = compare_rows(conn, campaign=campaign, source=source)
        labels = ccstore.host_labels(conn) if ccstore.has_cc_table(conn) else {}
    except DatabaseError as exc:
        raise UserError(f"{db_path(db)}: {exc}") from None
    finally:
        conn.close()
    out = suggest(rows, labels, "campaign" if campaign else "passive")
    if not out:
        raise UserError("no h1 or h2 loads to learn from: nothing to suggest")
    emit([s.row() for s in out], fmt, title="Policy suggestions",
         columns=("domain", "page", "condition", "cc_label", "n_h1", "n_h2", "median_h1_ms",
                  "median_h2_ms", "arm", "confidence", "why") if fmt == "table" else None)
    if apply_:
        rw = _rw(db)
        try:
            for domain in domains_to_apply(out):
                try:
                    store.add_rule(rw, make_rule(domain, "h1"), now_ms=time.time() * 1000)
                    click.echo(f"added: {domain} -> h1", err=fmt != "table")
                except PolicyError as exc:
                    click.echo(f"kept the existing rule: {exc}", err=fmt != "table")
        finally:
            rw.close()
