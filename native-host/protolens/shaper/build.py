"""The explicit build step of the compiled shaper helper, and where the running program finds it.

The C sources live in native-host/shaper/ and ship in the package as ``csrc`` (a link in the
source tree, copied files in a wheel). ``scripts/setup.sh`` builds them in the source tree;
``protolens testbed build`` builds them into the user's data directory. ``find_binary`` only
looks: the running program never compiles, and a helper older than its
sources is refused, so a measurement never runs on code it was not built from.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path

from protolens.paths import data_home

BINARY = "protolens-shaper"
HEADER = Path("/usr/include/libnetfilter_queue/libnetfilter_queue.h")
_TOOLS = (("make", "make"), ("gcc", "gcc"), ("pkg-config", "pkg-config"))


class ShaperError(RuntimeError):
    """The shaper is missing, not running, or refused a command (one-line message)."""


def source_dir() -> Path:
    return Path(str(resources.files("protolens.shaper"))) / "csrc"


def user_build_dir(env: Mapping[str, str]) -> Path:
    return data_home(env) / "shaper"


def missing_build_deps(which: Callable[[str], str | None] = shutil.which,
                       header: Path = HEADER) -> list[str]:
    """The Debian packages the build still needs (empty when it can run)."""
    missing = [pkg for tool, pkg in _TOOLS if which(tool) is None]
    if not header.exists():
        missing.append("libnetfilter-queue-dev")
    return missing


def _deps_note(missing: list[str]) -> str:
    return f"; its build needs: apt install {' '.join(missing)}" if missing else ""


def _stale(binary: Path, src: Path) -> bool:
    built = binary.stat().st_mtime
    return any(p.stat().st_mtime > built for p in src.glob("*.[ch]")
               if not p.name.startswith("test_"))


def find_binary(env: Mapping[str, str] | None = None) -> Path:
    """``$PROTOLENS_SHAPER``, else the source tree's build, else the user build; never builds."""
    env = dict(os.environ) if env is None else env
    if env.get("PROTOLENS_SHAPER"):
        path = Path(env["PROTOLENS_SHAPER"])
        if not path.is_file():
            raise ShaperError(f"PROTOLENS_SHAPER={path}: no such file")
        return path
    src = source_dir().resolve()
    tree, user = src / "build" / BINARY, user_build_dir(env) / BINARY
    for binary, how in ((tree, "scripts/setup.sh"), (user, "protolens testbed build")):
        if binary.is_file():
            if _stale(binary, src):
                raise ShaperError(f"the shaper helper {binary} is older than its sources: "
                                  f"run {how}")
            return binary
    raise ShaperError("the shaper helper is not built: run protolens testbed build (or "
                      f"scripts/setup.sh in a source checkout){_deps_note(missing_build_deps())}")


def build(env: Mapping[str, str] | None = None) -> Path:
    """Compile the packaged sources into the user's data directory; return the binary."""
    env = dict(os.environ) if env is None else env
    missing = missing_build_deps()
    if missing:
        raise ShaperError(f"cannot build the shaper helper: apt install {' '.join(missing)}")
    src, out = source_dir(), user_build_dir(env)
    if not (src / "Makefile").is_file():
        raise ShaperError(f"the shaper's C sources are missing from the package ({src})")
    out.mkdir(parents=True, exist_ok=True)
    target = out / BINARY
    p = subprocess.run(["make", "-s", "-C", str(src), f"BUILD={out}", str(target)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        last = (p.stderr.strip() or p.stdout.strip() or "make failed").splitlines()[-1]
        raise ShaperError(f"cannot build the shaper helper: {last}")
    return target
