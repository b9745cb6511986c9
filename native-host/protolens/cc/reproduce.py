"""``protolens lab reproduce conext20-igor`` (adapter): bring the testbed up once per server CC
(HyStart is a host-wide switch, set by ``testbed up``), probe every object of the grid at a fixed
MTU as in Table 1, and take the testbed down again."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from protolens.cc.curl import ProbeError
from protolens.cc.igor import Cell, grid
from protolens.cc.paths import LabPath
from protolens.cc.probe import ProbeResult, probe
from protolens.testbed import Testbed

HOST = "a.test"


def object_url(size: int) -> str:
    """The testbed's fixed file of ``size`` bytes (testbed/caddy.py STATIC_SIZES)."""
    return f"https://{HOST}/_testbed/{size // 1000}k.bin"


def run_grid(cells: Sequence[Cell] | None = None, testbed: str = "ccr", http: str = "1.1",
             on_result: Callable[[Cell, ProbeResult | None, str | None], None] | None = None,
             ) -> list[tuple[Cell, ProbeResult | None, str | None]]:
    """Every cell once: (cell, result, error). The testbed is brought up per CC and taken down."""
    cells = list(cells or grid())
    out: list[tuple[Cell, ProbeResult | None, str | None]] = []
    for cc in dict.fromkeys(c.cc for c in cells):
        Testbed.down(testbed)
        tb = Testbed.up(name=testbed, profile="clean", server_cc=cc)
        try:
            for cell in (c for c in cells if c.cc == cc):
                res: ProbeResult | None = None
                err: str | None = None
                try:
                    res = probe(LabPath(tb), object_url(cell.size), http=http,
                                packet_bytes=cell.packet_bytes or None)  # 0: Igor's rule
                except ProbeError as exc:
                    err = str(exc)
                out.append((cell, res, err))
                if on_result:
                    on_result(cell, res, err)
        finally:
            Testbed.down(testbed)
    return out


def result_row(cell: Cell, res: ProbeResult) -> dict[str, Any]:
    return {**res.row(), "size": cell.size, "server_cc": cell.cc}
