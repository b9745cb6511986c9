"""``python -m protolens.proxy CONFIG.json``: run the lab proxy (started by ``control.start``,
usually inside the testbed's client namespace). Prints ``{"port": N}`` once listening."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import sys
from pathlib import Path

from protolens.certs import ensure_ca
from protolens.policy.file import from_stored
from protolens.proxy.server import Config, serve


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m protolens.proxy CONFIG.json", file=sys.stderr)
        return 2
    raw = json.loads(Path(argv[0]).read_text())
    cfg = Config(token=raw["token"], hosts=dict(raw["hosts"]),
                 ca=ensure_ca(Path(raw["ca_dir"]), datetime.datetime.now(datetime.UTC)),
                 upstream_ca=raw.get("upstream_ca"),
                 rules=from_stored(raw["rules"]) if raw.get("rules") else [],
                 check_process=bool(raw.get("check_process", True)),
                 resolve=bool(raw.get("resolve", False)),
                 workdir=Path(raw["workdir"]) if raw.get("workdir") else None)

    def ready(port: int) -> None:
        print(json.dumps({"port": port}), flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(cfg, int(raw.get("port", 0)), Path(raw["control"]), ready,
                          host=raw.get("listen", "127.0.0.1")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
