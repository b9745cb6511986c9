"""What a bundle must be, without pyarrow (pure): its tables, their columns as plain (name, type)
pairs, the error every reader raises, and the value checks shared by the pyarrow reader
(``share/bundle.py``) and the core install's own (``share/bundle_lite.py``)."""

from __future__ import annotations

import ipaddress

from protolens.record import columns

BUNDLE_SCHEMA = columns.BUNDLE_SCHEMA
TABLES = columns.BUNDLE_TABLES
"""Every table of a bundle, in insertion order (navigations first)."""


def lite_schema(name: str, version: int = BUNDLE_SCHEMA) -> list[tuple[str, str]]:
    """Table ``name``'s columns as (name, arrow type name) pairs, without pyarrow."""
    return [(c.name, c.arrow) for c in columns.bundled(name, version)]


class BundleError(Exception):
    """A bundle that cannot be imported: unreadable, corrupt, tampered with, or out of range."""


HOST_COLUMNS = {"navigations": ("origin", "url"), "requests": ("host", "url"),
                 "connections": ("host",), "hosts": ("host",)}


def ip_literal(value: str) -> bool:
    """``203.0.113.7``, ``[2001:db8::1]:443`` or ``https://10.0.0.1:8443`` names an IP."""
    host = value.split("://", 1)[-1].split("/", 1)[0]
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def out_of_range(c: columns.Column, low: float, high: float) -> str | None:
    """What is wrong with a column whose values run from ``low`` to ``high``, or None."""
    if c.min is not None and low < c.min:
        return f"negative value {low}" if c.min == 0 else f"value {low} below {_num(c.min)}"
    if c.max is not None and high > c.max:
        return f"value {high} above {_num(c.max)}"
    return None


def _num(x: float) -> str:
    return "2^53" if x == columns.MAX_COUNT else f"{x:.15g}"
