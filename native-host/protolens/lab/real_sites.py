"""Real sites in a campaign (pure): the URLs given (a file or arguments), the conditions that
can apply to them, and the load targets. Real sites run either over the user's own network,
unshaped (condition ``none``), or through the shaper on the wan path (``lab/wan_network.py``)
under profiles that can apply to a path we do not own (``lab/path_rtt.py`` ``wan_refusal``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from protolens.lab.errors import CampaignError
from protolens.lab.runner import Target

DIRECT = ("none",)
"""Real sites over the user's own network, unshaped."""


def read_urls(path: Path) -> list[str]:
    """Real-site URLs, one per line; ``#`` comments and blank lines ignored."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CampaignError(f"{path}: {exc.strerror}") from None
    urls = [check_url(ln.strip(), str(path)) for ln in lines
            if ln.strip() and not ln.lstrip().startswith("#")]
    if not urls:
        raise CampaignError(f"{path}: no URLs in it")
    return urls


def check_url(url: str, where: str) -> str:
    """``url`` if it is an http(s) URL with a host, else a one-line error naming ``where``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CampaignError(f"{where}: not an http(s) URL: {url!r}")
    return url


def check_real_conditions(conditions: Sequence[str]) -> None:
    """Real sites take either ``none`` alone (the user's own network) or shaper profiles (the
    wan path), each one that can apply to real sites."""
    if "none" in conditions:
        if tuple(conditions) != DIRECT:
            raise CampaignError("condition none (your own network, unshaped) cannot be mixed "
                                "with shaper profiles; 'clean' is the wan path unshaped")
        return
    for condition in conditions:
        refusal = condition_refusal(condition)
        if refusal:
            raise CampaignError(refusal)


def condition_refusal(condition: str) -> str | None:
    """Why shaper profile ``condition`` cannot apply to real sites (unknown, or
    ``path_rtt.wan_refusal``), in one line; None if it can."""
    from protolens.lab.path_rtt import wan_refusal
    from protolens.shaper import ProfileError, load_profile
    try:
        return wan_refusal(load_profile(condition))
    except ProfileError as exc:
        return str(exc)


def real_targets(urls: Sequence[str]) -> dict[str, Target]:
    """Each URL's load target: the URL and the one origin it starts on."""
    out = {}
    for url in urls:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        out[url] = Target(url=url, origins=(f"{parts.hostname}:{port}",))
    return out
