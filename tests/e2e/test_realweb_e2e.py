"""End to end: pages that behave as real sites do (scripts/devkit/realweb.py), every one against
its ground truth, under h1, h2 and h3.

One lab browser per arm loads every page in one tab (scripts/devkit/drive.py, realweb_plan.py;
the loads are conftest.py's, shared with test_realweb_pages_e2e.py, which checks each page's own
behaviour); the records the host stored are checked here against caddy's access log (each
request: URL, method, protocol, status, client port = connection) and against Chromium's NetLog
(bytes per connection on the wire, scripts/devkit/netlog.py), and each page's record has its
milestones. Cost: one browser start per arm; the three arms side by side (each with a site, a
store and a browser of its own), 45-50 s for the three (95 s one after another in a CI run,
2026-11-28, with fewer pages).

h3 forces QUIC on every host but d.test, which is left to Alt-Svc, which stock Chromium
does not follow on the testbed (docs: its certificate is trusted by SPKI pin, which QUIC honours
only for forced origins: NetLog shows the QUIC handshake to d.test failing), so the Alt-Svc page
checks what the record can be held to: every request's protocol against caddy.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from scripts.devkit.netlog import Conn
from scripts.devkit.realweb_truth import (
    connection_bytes,
    hit_key,
    key,
    on_network,
    request_diff,
    served_pairs,
    unseen_hits,
)
from tests.e2e.conftest import ARMS, MAIN, ORDINARY, Arm

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("arm", ARMS)
def test_the_host_refused_no_record(arms: dict[str, Arm], arm: str) -> None:
    """Every record the recorder made was one the host stores: a record it refuses is lost with
    its requests. Until 2026-11-29 a soft navigation delivered late had a negative first image
    and was refused (``milestones.first_image_ms: expected number in [0, 86400000], got
    -10.734``, 1 of 17 runs by hand); the pages' checks saw it only as requests not recorded."""
    assert arms[arm].refused == []


@pytest.mark.parametrize("name", ORDINARY)
@pytest.mark.parametrize("arm", ARMS)
def test_requests_recorded_are_the_requests_caddy_served(arms: dict[str, Arm], arm: str,
                                                         name: str) -> None:
    missing, extra = request_diff(arms[arm].pages[name])
    assert not missing and not extra, f"not recorded: {dict(missing)}; not served: {dict(extra)}"


@pytest.mark.parametrize("arm", ARMS)
def test_protocol_and_status_of_each_request_are_caddys(arms: dict[str, Arm], arm: str) -> None:
    """Each request's protocol and HTTP status against caddy's line for it: a revalidated
    document's status included (/reval/'s second load: the wire's 304, where Chromium reports
    the cached 200 it shows)."""
    wrong = [(name, r["url"], r["family"], h.family, r["status"], h.status)
             for name, page in arms[arm].pages.items() for r, h in served_pairs(page)
             if r["family"] != h.family or r["status"] != h.status]
    assert not wrong
    # every page's requests are checked above; this says the pairing found them: 91 network
    # requests per arm with a caddy hit (measured, all three arms)
    assert sum(len(served_pairs(p)) for p in arms[arm].pages.values()) >= 85, \
        {name: len(served_pairs(p)) for name, p in arms[arm].pages.items()}


@pytest.mark.parametrize("arm", ARMS)
def test_connections_are_caddys_client_ports(arms: dict[str, Arm], arm: str) -> None:
    """One recorded connection id <-> one connection of caddy's (its client port, with the server
    port and transport: Linux gave a plain-HTTP and an HTTPS connection the same client port once),
    in every page (ids live per browser)."""
    ports: dict[int, set[Conn]] = defaultdict(set)
    ids: dict[Conn, set[int]] = defaultdict(set)
    for page in arms[arm].pages.values():
        for r, h in served_pairs(page):
            if r["connection_id"] is not None:
                ports[r["connection_id"]].add(h.conn)
                ids[h.conn].add(r["connection_id"])
    assert ports
    assert {c: p for c, p in ports.items() if len(p) != 1} == {}
    assert {p: c for p, c in ids.items() if len(c) != 1} == {}
    for name, page in arms[arm].pages.items():
        unseen = {id(h) for h in unseen_hits(page)}
        served = {h.conn for h in page.hits if id(h) not in unseen}
        # a response the browser cut short (stop) is in the backend's log only: caddy logs no
        # client port for it, so its connection is checked by the id's other requests above
        aborted = {hit_key(h) for h in page.aborted}
        recorded = {next(iter(ports[r["connection_id"]])) for r in page.requests()
                    if on_network(r) and r["connection_id"] in ports
                    and key(r["url"], r["method"] or "GET") not in aborted}
        assert recorded == served, (name, sorted(recorded), sorted(served),
                                    [(h.uri, h.conn) for h in page.hits])


@pytest.mark.parametrize("arm", ARMS)
def test_bytes_per_connection_agree_with_the_wire(arms: dict[str, Arm], arm: str) -> None:
    """Summed over the arm's records, each connection's recorded bytes against the NetLog's
    response bytes on it (devkit/netlog.py ``request_in``: TLS plaintext less HTTP/2's control
    frames, or HTTP/3's request streams): equal to the byte. Measured so on every connection of
    the three arms (3 runs by hand), once the frame documents read from their Navigation Timing
    and CORS preflights were counted as the wire has them; against ``app_in`` (control frames
    and streams included) HTTP/2 was 55 bytes more a connection, HTTP/3 3 to 443.

    Two kinds of connection carry bytes no record can hold exactly, and are held within 500
    bytes (and 0.5%), never more than the wire: those that carried a beacon sent as a page was
    left (``left``: no record holds it), and those that carried a response the browser cut short
    (stop): what it recorded of it is what came before the cut, and more may have been in
    flight. Connections that carried a WebSocket or an EventSource are left out: they keep
    receiving after every record has ended, and so are those that carried requests a record
    declared unseen (the service worker's own fetches, on f.test)."""
    tally = connection_bytes(arms[arm].pages.values())
    exact = 0
    for conn, got in tally.recorded.items():
        if conn in tally.left_out:
            continue
        wire, carried = arms[arm].wire[conn], tally.carried[conn]
        # the whole story in the message (a tuple is cut short in pytest's report: CI's 68 bytes
        # could not be placed from it): the connection, both counts and every request it carried
        story = (f"{conn}: {wire.request_in} on the wire, {got} recorded "
                 f"({'inexact' if conn in tally.inexact else 'exact'}); {wire}; carried: {carried}")
        if conn in tally.inexact:
            assert 0 <= wire.request_in - got <= 0.005 * got + 500, story
        else:
            assert wire.request_in == got, story
            exact += 1
    assert exact >= 3


def test_a_workers_script_is_its_head_and_body_on_the_wire(arms: dict[str, Arm]) -> None:
    """The dedicated worker's script of /workers/ over HTTP/1.1: its recorded bytes are the head the
    NetLog read for it (its header lines) and the body caddy wrote. Chromium 156 ends the script
    with its head's count alone (src/cdp/late.ts workerScriptBytes), so its connection was 68
    bytes (the body) over its records whenever the check above held that connection exactly (3 CI
    runs of about 20, 2026-11-28/29: the script shares a connection with other requests, which
    otherwise excused it). Checked here whatever connection it took."""
    arm = arms["h1"]
    page = arm.pages["workers"]
    recorded = [r for r in page.requests() if r["url"].endswith("/workers/worker.js")]
    served = [h for h in page.hits if h.uri == "/workers/worker.js"]
    heads = [sizes for url, sizes in arm.heads.items() if url.endswith("/workers/worker.js")]
    assert len(recorded) == 1 and len(served) == 1 and len(heads) == 1 and len(heads[0]) == 1, \
        (recorded, served, heads)
    assert served[0].size > 0 and recorded[0]["protocol"] == "http/1.1"
    assert recorded[0]["encoded_bytes"] == heads[0][0] + served[0].size, (recorded, served, heads)


@pytest.mark.parametrize("name", sorted(MAIN))
@pytest.mark.parametrize("arm", ARMS)
def test_milestones_present(arms: dict[str, Arm], arm: str, name: str) -> None:
    nav = arms[arm].pages[name].nav(MAIN[name])
    assert nav["load_ms"] is not None and nav["dcl_ms"] is not None, nav["url"]
    assert nav["ttfb_ms"] is not None and nav["fcp_ms"] is not None, nav["url"]
    assert nav["ttfb_ms"] <= nav["dcl_ms"] <= nav["load_ms"]


# --- each behaviour's own truth ------------------------------------------------------------
