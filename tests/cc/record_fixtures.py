"""Record queue-timeline fixtures for the classifier's unit tests from real probes on the testbed
(root; run under the heavy lock):

    flock /tmp/protolens-heavy.lock .venv/bin/python -m tests.cc.record_fixtures

One file per probe, tests/cc/fixtures/<cc>-<size>k-<mtu>.json: the probe's row (evidence, label
at recording time, the server's true CC) and its queue timeline. The grid is CoNEXT'20 Table 1
(40-320 KB at 500 and 1,500-byte MTU) plus Igor's 100-byte packets for 20-80 KB objects."""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

from protolens.cc.igor import CCS, Cell, grid
from protolens.cc.probe import ProbeResult
from protolens.cc.reproduce import result_row, run_grid

OUT = Path(__file__).parent / "fixtures"


def cells() -> list[Cell]:
    return [*grid(), *(Cell(cc, s, 100) for cc in CCS for s in (20_000, 40_000, 60_000, 80_000))]


def main() -> int:
    OUT.mkdir(exist_ok=True)
    when = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")

    def save(cell: Cell, res: ProbeResult | None, err: str | None) -> None:
        if res is None:
            print(f"{cell}: {err}", file=sys.stderr)
            return
        name = f"{cell.cc}-{cell.size // 1000}k-{cell.packet_bytes}.json"
        (OUT / name).write_text(json.dumps({"recorded": when, "row": result_row(cell, res),
                                            "timeline": res.timeline.to_json()}) + "\n")
        print(name, res.verdict.label, flush=True)

    run_grid(cells(), testbed="ccf", on_result=save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
