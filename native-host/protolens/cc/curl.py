"""curl in the client namespace (adapter): the argv for a sizing HEAD and a probe GET, and the
mapping of curl's exit codes to one-line errors (https://curl.se/libcurl/c/libcurl-errors.html).
``parse_result`` is pure and unit-tested on curl's own ``-w '%{json}'`` output."""

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

MAX_REDIRS = 10
MARK = "\n@@protolens-headers@@\n"
_VARS = ("http_code", "http_version", "remote_ip", "local_port", "size_download",
         "time_namelookup", "time_connect", "time_appconnect", "time_pretransfer",
         "time_starttransfer", "time_total", "num_redirects", "url_effective", "errormsg")
WRITE_OUT = "".join(f"{v}=%{{{v}}}\n" for v in _VARS)
"""One ``name=value`` line per variable: curl 7.88's ``%{json}`` costs 5 s here (measured)."""
_ERRORS = {
    3: "malformed URL",
    6: "cannot resolve the host",
    7: "cannot connect to the server (unreachable or refused)",
    28: "timed out",
    35: "TLS handshake failed",
    47: f"too many redirects (more than {MAX_REDIRS})",
    18: "the server closed the connection before the whole object arrived",
    52: "the server closed the connection without a reply",
    56: "the connection broke while receiving (reset by the server?)",
    60: "the server's certificate is not trusted",
    92: "the HTTP/2 stream was closed early by the server",
}


class ProbeError(RuntimeError):
    """A probe that cannot give a label; the message is one line."""


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str
    port: int


def parse_target(url: str) -> Target:
    """An http(s) URL with a host, else ``ProbeError``."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ProbeError(f"not an http(s) URL: {url!r}")
    try:
        port = parts.port
    except ValueError:
        raise ProbeError(f"bad port in {url!r}") from None
    if not parts.hostname:
        raise ProbeError(f"no host in {url!r}")
    return Target(url, parts.scheme, parts.hostname,
                  port or (443 if parts.scheme == "https" else 80))


def base_argv(max_time_s: float, ca: str | None) -> list[str]:
    argv = ["curl", "-sS", "--connect-timeout", "5", "--max-time", f"{max_time_s:g}",
            "-A", "protolens-cc-probe"]
    return argv + (["--cacert", ca] if ca else [])


def head_argv(url: str, max_time_s: float, ca: str | None) -> list[str]:
    """Follow redirects, fetch only headers: the final URL, its size, the TCP handshake time."""
    return [*base_argv(max_time_s, ca), "-I", "-L", "--max-redirs", str(MAX_REDIRS),
            "-o", "/dev/null", "-w", WRITE_OUT + MARK + "%{header_json}", url]


def get_argv(url: str, http: str, max_time_s: float, ca: str | None) -> list[str]:
    flag = "--http2" if http == "2" else "--http1.1"
    return [*base_argv(max_time_s, ca), flag, "-o", "/dev/null", "-w", WRITE_OUT, url]


def parse_result(rc: int, stdout: str, stderr: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(curl's write-out variables, the last response's headers) or ``ProbeError`` with curl's
    reason."""
    body, _, headers = stdout.partition(MARK)
    info: dict[str, Any] = {}
    for line in body.splitlines():
        key, eq, value = line.partition("=")
        if eq and key in _VARS:
            info[key] = value
    try:
        hdrs: dict[str, Any] = json.loads(headers) if headers.strip() else {}
    except json.JSONDecodeError:
        hdrs = {}
    if rc != 0:
        text = (_ERRORS.get(rc) or info.get("errormsg")
                or (stderr.strip().splitlines() or [f"curl exit {rc}"])[-1])
        raise ProbeError(f"{text} (curl exit {rc})")
    code = int(info.get("http_code") or 0)
    if code >= 400 or code == 0:
        raise ProbeError(f"the server answered HTTP {code}")
    if 300 <= code < 400:
        raise ProbeError(f"the server answered a redirect (HTTP {code}) without a Location")
    return info, hdrs


def content_length(headers: dict[str, Any]) -> int | None:
    vals = headers.get("content-length") or []
    try:
        return int(vals[-1]) if vals else None
    except (TypeError, ValueError):
        return None
