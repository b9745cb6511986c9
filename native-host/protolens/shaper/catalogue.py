"""The catalogue of built-in link profiles (the TOML files in ``profiles/``), the lookup of a
profile by name or by path, and the trace files a profile or the command line names. Reads
files, nothing else; parsing is ``profile.py``'s and ``trace.py``'s."""

from __future__ import annotations

from dataclasses import replace
from importlib import resources
from pathlib import Path

from protolens.shaper.profile import ProfileError, TraceReader, parse_profile, read_trace_file
from protolens.shaper.records import Profile


def profiles_dir() -> Path:
    return Path(str(resources.files("protolens.shaper.profiles")))


def builtin_names() -> list[str]:
    return sorted(p.stem for p in profiles_dir().glob("*.toml"))


def load_profile(name_or_path: str) -> Profile:
    """A built-in profile by name, or a user profile from a ``.toml`` path."""
    path = Path(name_or_path)
    if name_or_path.endswith(".toml") or "/" in name_or_path:
        if not path.is_file():
            raise ProfileError(f"profile file not found: {name_or_path}")
    else:
        path = profiles_dir() / f"{name_or_path}.toml"
        if not path.is_file():
            known = ", ".join(builtin_names())
            raise ProfileError(f"unknown profile '{name_or_path}' (known: {known};"
                               " or a .toml path)")
    return parse_profile(path.read_text(encoding="utf-8"), str(path), default_name=path.stem,
                         read_trace=_reader(path.parent))


def with_traces(profile: Profile, down: str | None = None, up: str | None = None) -> Profile:
    """``profile`` with its rate replaced by Mahimahi trace files (paths from the caller's
    directory), keeping its delay, loss and buffer: ``testbed shape --trace-down/--trace-up``."""
    if down is None and up is None:
        return profile
    read = _reader(Path.cwd())
    link = profile.link
    link = replace(link, trace_down=read_trace_file(down, read) if down else link.trace_down,
                   trace_up=read_trace_file(up, read) if up else link.trace_up)
    return replace(profile, link=link)


def _reader(base: Path) -> TraceReader:
    """Trace names are relative to ``base`` (a profile's own directory)."""

    def read(name: str) -> tuple[str, str]:
        path = (base / name).resolve()
        return str(path), path.read_text(encoding="utf-8")

    return read
