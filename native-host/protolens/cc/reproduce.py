"""``protolens lab reproduce conext20-igor`` (adapter): bring the testbed up once per server CC
(HyStart is a host-wide switch, set by ``testbed up``), probe every object of the grid at a fixed
MTU as in Table 1, store each probe, take the testbed down again, and put the cells beside the
paper's (``igor.py``, pure)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens.cc import igor
from protolens.cc.curl import ProbeError
from protolens.cc.igor import Cell, grid
from protolens.cc.paths import LabPath
from protolens.cc.probe import ProbeResult, probe
from protolens.cc.survey import store_probe
from protolens.testbed import Testbed

HOST = "a.test"
NAME = "conext20-igor"
PAPER = "CoNEXT'20 (shared/seeds/002) Sec. 4.1, Table 1"


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


@dataclass(frozen=True)
class IgorReproduction:
    """``lab reproduce conext20-igor``'s outcome: Table 1's cells beside the paper's, the
    confusion matrix of labels against the true CC, the summary lines and the cells that
    failed."""

    quick: bool
    rows: list[dict[str, Any]]
    confusion: dict[str, dict[str, int]]
    lines: list[str]
    errors: list[str]

    def as_json(self) -> dict[str, Any]:
        return {"experiment": NAME, "paper": PAPER, "paper_finding": igor.FINDING,
                "quick": self.quick, "rows": self.rows, "confusion": self.confusion,
                "measured": self.lines, "errors": self.errors}


def reproduce_igor(quick: bool, testbed: str, db: Path,
                   progress: Callable[[str, str | None, str | None], None] | None = None
                   ) -> IgorReproduction:
    """Run the grid (``quick``: 160 and 320 KB at 500-byte MTU only), storing each probe in
    ``db`` as it comes; ``progress(cell, label or None, error or None)`` after each cell."""
    cells = igor.grid(sizes=(160_000, 320_000), packets=(500,)) if quick else igor.grid()
    errors: list[str] = []

    def stored(cell: Cell, res: ProbeResult | None, msg: str | None) -> None:
        what = f"{cell.cc} {cell.size // 1000} KB at {cell.packet_bytes} B"
        if res is None:
            errors.append(f"{what}: {msg}")
        else:
            store_probe(db, res, "lab")
        if progress:
            progress(what, res.verdict.label if res else None, msg)

    results = run_grid(cells, testbed=testbed, on_result=stored)
    rows = igor.table_rows(result_row(c, r) for c, r, _ in results if r is not None)
    return IgorReproduction(quick, rows, igor.confusion(rows), igor.summary_lines(rows), errors)
