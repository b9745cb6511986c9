"""Which lab tags a bundle may carry in clear. Pure.

A tag is free text a volunteer chose (``--campaign alice/private/path``), so it leaves the machine
in clear only when it is one of ProtoLens's own names, which identify nobody:

- ``page``: a page of the built-in corpus (``pages/catalog.py``) or a default custom-page name
  (``custom-<objects>x<size>[-h<hosts>]``);
- ``arm``: the arm grammar (``h1``, ``h2``, ``h3``, ``h2-parallel:N``, ``proxy-h1|h2|h3``,
  ``policy``, ``no-h3``, ``default``);
- ``condition``: a built-in shaping profile (``protolens/shaper/catalogue.py``);
- ``server_cc``: a congestion control ``--server-cc`` offers;
- ``campaign``: the name ``protolens lab reproduce`` gives a built-in experiment's campaign
  (``<experiment>[-quick]-<YYYYmmdd>-<HHMMSS>-<part>``), or a name the volunteer lists with
  ``export --keep-campaign``.

Any other value becomes ``anon-<16 hex>``, an HMAC under the bundle's salt: the same value gives
the same token within a bundle (loads of one campaign still group), nothing across bundles.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from protolens.arms import is_known
from protolens.record.enums import SERVER_CCS

_CUSTOM_PAGE = re.compile(r"^custom-[0-9]{1,4}x[0-9]{1,12}[kmb](-h[0-9]{1,2})?$")


@lru_cache(maxsize=1)
def _pages() -> frozenset[str]:
    from protolens.names import PAGE_NAMES
    return frozenset(PAGE_NAMES)


@lru_cache(maxsize=1)
def _conditions() -> frozenset[str]:
    from protolens.shaper.catalogue import builtin_names
    return frozenset(builtin_names())


@lru_cache(maxsize=1)
def _campaign() -> re.Pattern[str]:
    from protolens.names import EXPERIMENT_NAMES
    names = "|".join(re.escape(name) for name in EXPERIMENT_NAMES)
    return re.compile(rf"^({names})(-quick)?-[0-9]{{8}}-[0-9]{{6}}-[a-z0-9-]{{1,32}}$")


def builtin(key: str, value: str) -> bool:
    """``value`` is one of ProtoLens's own names for tag ``key``."""
    if key == "page":
        return value in _pages() or bool(_CUSTOM_PAGE.match(value))
    if key == "arm":
        return is_known(value)
    if key == "condition":
        return value in _conditions()
    if key == "server_cc":
        return value in SERVER_CCS
    if key == "campaign":
        return bool(_campaign().match(value))
    return False


def exported(key: str, value: object, keep: frozenset[str],
             pseudonym: Callable[[str, str], str]) -> object:
    """Tag ``key`` as a bundle carries it: a non-text value (``repetition``) as is, ProtoLens's
    own names and campaigns in ``keep`` in clear, anything else ``pseudonym(key, value)``."""
    if not isinstance(value, str):
        return value
    if builtin(key, value) or (key == "campaign" and value in keep):
        return value
    return pseudonym(key, value)
