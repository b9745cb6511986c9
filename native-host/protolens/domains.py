"""Registrable domains (eTLD+1) by the Public Suffix List that the ``publicsuffixlist`` package
bundles (pure, given that list): policy rules refuse a public suffix and tell a registrable
domain from an exact host with it, and export keeps in clear only origins whose registrable
domain is allowed. One list for both, parsed on first use."""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from publicsuffixlist import PublicSuffixList


@lru_cache(maxsize=65536)
def registrable(host: str) -> str | None:
    """eTLD+1 of a host (``en.wikipedia.org`` -> ``wikipedia.org``); None for a public suffix,
    an IP address or an empty host."""
    if not host:
        return None
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    found = _suffix_list().privatesuffix(host)
    return str(found) if found else None


@lru_cache(maxsize=1)
def _suffix_list() -> PublicSuffixList:
    return PublicSuffixList()
