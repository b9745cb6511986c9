"""Where an authenticated relay client may CONNECT to (docs/POLICY.md), and the relay's
connection limits. Pure: the relay (``proxy/relay.py``) resolves names and asks here.

The relay exists to carry a browser's HTTPS to the sites a ``no-h3`` policy names (docs/POLICY.md),
so a target must be:

- a port in ``ALLOWED_PORTS`` (HTTPS, and HTTP since a no-h3 page may load plain-HTTP parts);
- a host name, never an address in any spelling: ``127.0.0.1``, ``[::1]``, and the forms
  ``inet_aton(3)`` reads (``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``);
- a name the policy allows (``allowed(host)``);
- resolved to addresses that are none of loopback, unspecified, link-local, multicast or
  reserved (IPv4-mapped IPv6 unwrapped first), and not the relay itself: a name under an allowed
  domain can still resolve to 127.0.0.1 (DNS rebinding). The relay connects to the checked
  address, never resolving twice.

In the lab and tests the operator maps names to addresses (``PROTOLENS_RELAY_HOSTS``,
``protolens relay --map``): then only mapped names are served, at their mapped address, on any
port but the relay's own, since the lab's servers listen on loopback at ports of their choosing.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

ALLOWED_PORTS = (443, 80)

_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")


@dataclass(frozen=True)
class Limits:
    """A relay's bounds (measured: 1,100 idle connections used up the host's 1,024 file
    descriptors, and then the host could not open its store)."""

    handshake_s: float = 10.0
    """Time a new connection has to send its whole CONNECT request (authenticated or not)."""
    idle_s: float = 300.0
    """A tunnel that moved no byte either way for this long is closed."""
    max_connections: int = 256
    """Connections served at once; past it, new ones are closed at once."""
    fd_reserve: int = 64
    """File descriptors always left free for the host (its store, the log, stdio)."""


def connection_cap(limits: Limits, nofile: int) -> int:
    """Connections served at once under the descriptor limit ``nofile``: each tunnel holds two
    descriptors (client and upstream), and ``fd_reserve`` stay free."""
    return max(1, min(limits.max_connections, (nofile - limits.fd_reserve) // 2))


def is_numeric_host(host: str) -> bool:
    """True for any spelling of an address, including those ``inet_aton`` accepts."""
    try:
        ipaddress.ip_address(host.strip("[]").split("%")[0])
        return True
    except ValueError:
        pass
    try:
        socket.inet_aton(host)
        return True
    except OSError:
        return False


def is_host_name(host: str) -> bool:
    """A DNS name (letters, digits, ``-``, ``_`` in dot-separated labels), not an address."""
    if not host or len(host) > 253 or is_numeric_host(host):
        return False
    return all(_LABEL.match(label) for label in host.split("."))


def refuse_address(ip: str, relay: tuple[str, int] | None = None, port: int | None = None
                   ) -> str | None:
    """Why the relay must not connect to ``ip`` (one line), or None."""
    try:
        addr = ipaddress.ip_address(ip.split("%")[0])
    except ValueError:
        return f"{ip} is not an address"
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if relay is not None and port == relay[1] and (addr.is_loopback or addr.is_unspecified
                                                   or str(addr) == relay[0]):
        return "the relay itself"
    for bad, name in ((addr.is_loopback, "loopback"), (addr.is_unspecified, "unspecified"),
                      (addr.is_link_local, "link-local"), (addr.is_multicast, "multicast"),
                      (addr.is_reserved, "reserved")):
        if bad:
            return f"{addr} is a {name} address"
    return None


@dataclass(frozen=True)
class Target:
    """A CONNECT target the relay may serve, and the addresses it may connect to for it."""

    host: str
    port: int
    mapped: str | None
    """The lab mapping's address for ``host`` (then no name resolution), else None."""


def check_target(host: str, port: int, *, hosts: Mapping[str, str] | None,
                 allowed: Callable[[str], bool], relay: tuple[str, int] | None = None
                 ) -> Target | str:
    """The ``Target`` for ``CONNECT host:port``, or the reason (one line) it is refused."""
    if hosts is not None:
        address = hosts.get(host)
        if address is None:
            return f"{host} is not served by this relay"
        if relay is not None and port == relay[1] and refuse_address(address, relay, port):
            return "the relay itself"
        return Target(host, port, address)
    if port not in ALLOWED_PORTS:
        return f"port {port}: only {' and '.join(map(str, ALLOWED_PORTS))} are relayed"
    if not is_host_name(host):
        return f"{host}: only host names are relayed, not addresses"
    if not allowed(host):
        return f"{host}: no policy routes this host through the relay"
    return Target(host, port, None)


def usable_addresses(addresses: Sequence[str], relay: tuple[str, int] | None, port: int
                     ) -> list[str] | str:
    """The resolved ``addresses`` the relay may connect to, or why none (one line)."""
    ok = [a for a in addresses if refuse_address(a, relay, port) is None]
    if ok:
        return ok
    if not addresses:
        return "the name did not resolve"
    return str(refuse_address(addresses[0], relay, port))
