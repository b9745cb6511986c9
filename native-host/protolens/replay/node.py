"""Adapter: runs the recorder core's node script (``dist/node/replay.cjs``, src/replay/cli.ts) on
one DevTools log and returns its records, validated as any record the extension sends
(record/validate.py). Node and the script are found through ``paths.py``."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any

from protolens.paths import node_binary, replay_script
from protolens.record import NavigationRecord, RecordError, parse_record

TIMEOUT_S = 300
"""A replay of the largest public log here (2 MB of events) takes well under a second."""


class ReplayError(Exception):
    """The replay could not run: a one-line reason."""


class LogRejected(ReplayError):
    """The recorder core's script refused the log (not a log, empty, a broken gzip)."""


def replay(log: bytes, options: Mapping[str, Any] | None, env: Mapping[str, str]
           ) -> list[tuple[dict[str, Any], NavigationRecord]]:
    """The records the recorder core makes of ``log`` (its bytes, gzipped or not): each as the
    JSON object it printed and as the validated record."""
    node = node_binary(env, shutil.which("node"))
    if node is None:
        raise ReplayError("node not found: replaying a log runs the recorder core in Node.js 20 "
                          "or later (put node on PATH or set PROTOLENS_NODE)")
    script = replay_script(env)
    if not script.is_file():
        raise ReplayError(f"{script} is missing: build it with `npm run build` in the ProtoLens "
                          "checkout (or set PROTOLENS_REPLAY_JS)")
    cmd = [node, str(script), "--options", json.dumps(dict(options or {})), "-"]
    try:
        done = subprocess.run(cmd, input=log, capture_output=True, timeout=TIMEOUT_S, check=False)
    except OSError as exc:
        raise ReplayError(f"{node}: cannot run ({exc.strerror or exc})") from None
    except subprocess.TimeoutExpired:
        raise ReplayError(f"the replay took longer than {TIMEOUT_S} s") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines() or ["(no message)"]
        first = lines[0] if lines[0].startswith("error: ") else lines[-1]
        reason = first.removeprefix("error: ").removeprefix("-: ")
        raise (LogRejected if done.returncode == 2 else ReplayError)(reason)
    try:
        printed = json.loads(done.stdout)
    except ValueError:
        raise ReplayError("the replay script printed no JSON") from None
    if not isinstance(printed, list):
        raise ReplayError("the replay script printed no list of records")
    out: list[tuple[dict[str, Any], NavigationRecord]] = []
    for i, raw in enumerate(printed):
        try:
            out.append((raw, parse_record(raw)))
        except RecordError as exc:
            raise ReplayError(f"record {i + 1} of the replay is not valid: {exc}") from None
    return out
