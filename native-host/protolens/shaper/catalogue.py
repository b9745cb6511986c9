"""The catalogue of built-in link profiles (the TOML files in ``profiles/``) and the lookup of a
profile by name or by path. Reads files, nothing else; parsing is ``profile.py``'s."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from protolens.shaper.profile import ProfileError, parse_profile
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
    return parse_profile(path.read_text(encoding="utf-8"), str(path), default_name=path.stem)
