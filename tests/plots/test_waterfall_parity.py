"""The extension's waterfall page (src/waterfall/series.ts, run with tsx) draws the same rows as
``protolens plot waterfall`` (plots/waterfall_series.py): keys, labels, each row's requests and
the milestones, for every CDP fixture record and the coalesced/proxied example."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from protolens.plots.waterfall_series import waterfall_series
from protolens.record import parse_record
from tests.record.coalesced_record import coalesced_record

ROOT = Path(__file__).resolve().parents[2]
TSX = ROOT / "node_modules" / ".bin" / "tsx"


def _python_rows(raw: dict[str, Any]) -> dict[str, Any]:
    wf = waterfall_series(parse_record(raw))
    return {"id": raw["id"], "milestones": [[n, t] for n, t in wf.milestones],
            "rows": [{"key": r.key, "label": r.label, "bars": [b.request_id for b in r.bars],
                      "setups": [list(b.setup) if b.setup is not None else None
                                 for b in r.bars]}
                     for r in wf.rows]}


def _ts_rows(path: Path) -> list[dict[str, Any]]:
    assert TSX.exists() and shutil.which("node"), "npm ci (scripts/setup.sh) installs tsx"
    done = subprocess.run([str(TSX), "scripts/waterfall-series.ts", str(path)], cwd=ROOT,
                          text=True, capture_output=True, timeout=120, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_extension_and_host_draw_the_same_rows(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = []
    for f in sorted((ROOT / "tests" / "fixtures" / "cdp").glob("*.expected.json")):
        data = json.loads(f.read_text())
        records.extend(data if isinstance(data, list) else [data])
    records += [coalesced_record(), coalesced_record(upstream=True)]
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    ts = _ts_rows(path)
    assert len(ts) == len(records)
    for raw, got in zip(records, ts, strict=True):
        assert got == _python_rows(raw), raw["id"]
    assert any("(coalesced)" in r["label"] for got in ts for r in got["rows"])
    # every connection a fixture saw being opened has its set-up drawn, ending before its
    # opener's first byte
    setups = [s for got in ts for r in got["rows"] for s in r["setups"] if s is not None]
    assert len(setups) >= 10 and all(a <= b for a, b in setups)


@pytest.mark.parametrize("upstream", [False, True])
def test_rows_differ_when_the_record_does(tmp_path: Path, upstream: bool) -> None:
    raw = coalesced_record(upstream)
    other = json.loads(json.dumps(raw))
    other["requests"][2]["connection_id"] = 8  # b.test's image moves to the h2 connection
    path = tmp_path / "r.json"
    path.write_text(json.dumps(other))
    (got,) = _ts_rows(path)
    assert got != _python_rows(raw) and got == _python_rows(other)
