"""``collector publish --min-contributors K``: cells per registrable domain, arm and network
type, only with at least K contributors; the median's order-statistic interval."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from protolens.collector.publish import domain_map
from protolens.store.dataset import compare_rows
from scripts.devkit.collector import cli
from tests.collector.dataset_builder import INCOMPLETE_CELL, make_dataset


def test_domain_map_keeps_only_hosts_in_clear() -> None:
    assert domain_map(["https://en.wikipedia.org", "https://anon-0123456789abcdef",
                       "https://a.test:8443", "https://co.uk"]) == {
        "https://en.wikipedia.org": "wikipedia.org", "https://a.test:8443": "a.test"}


def test_publish_k_and_interval(tmp_path: Path) -> None:
    data = make_dataset(tmp_path, contributors=4, per_cell=5)
    out = tmp_path / "open.csv"
    res = json.loads(cli("collector", "publish", "--data", str(data), "--min-contributors", "4",
                         "--out", str(out), "--json").stdout)
    assert res["cells"] == 8 and res["domains"] == 2
    rows = list(csv.DictReader(out.open()))
    assert {(r["domain"], r["arm"], r["network"]) for r in rows} == {
        (d, a, n) for d in ("a.test", "b.test") for a in ("h2", "h3") for n in ("3g", "4g")}
    cell = next(r for r in rows if (r["domain"], r["arm"], r["network"]) == ("a.test", "h3", "3g"))
    values = np.sort([r["plt_ms"] for r in compare_rows(data, source="experiment")
                      if r["origin"] == "https://a.test" and r["arm"] == "h3"
                      and r["network"] == "3g"])
    n = len(values)
    assert int(cell["n"]) == n == 20 and int(cell["contributors"]) == 4
    assert float(cell["median_plt_ms"]) == float(np.median(values))
    lo = max(1, math.floor(n / 2 - 0.98 * math.sqrt(n)))
    hi = min(n, math.ceil(1 + n / 2 + 0.98 * math.sqrt(n)))
    assert (float(cell["ci_low_ms"]), float(cell["ci_high_ms"])) == (values[lo - 1],
                                                                     values[hi - 1])
    assert float(cell["ci_low_ms"]) <= float(cell["median_plt_ms"]) <= float(cell["ci_high_ms"])

    pq_out = tmp_path / "open.parquet"
    cli("collector", "publish", "--data", str(data), "--min-contributors", "5", "--out",
        str(pq_out))
    assert pq.read_table(pq_out).num_rows == 0  # only 4 contributors: nothing published
    cli("collector", "delete", "--contributor", "vol-0", "--data", str(data))
    cli("collector", "publish", "--data", str(data), "--min-contributors", "3", "--out",
        str(pq_out))
    t = pq.read_table(pq_out).to_pylist()
    assert len(t) == 8 and {r["contributors"] for r in t} == {3} and {r["n"] for r in t} == {15}
    bad = cli("collector", "publish", "--data", str(data), "--min-contributors", "3", "--out",
              str(tmp_path / "x.txt"), check=False)
    assert bad.returncode == 2 and not (tmp_path / "x.txt").exists()


def test_publish_leaves_incomplete_loads_out(tmp_path: Path) -> None:
    """Each contributor's 2 loads that waited on a dialog (records incomplete, 3 s slower) are in
    no published cell: the one rule (record/comparable.py), as ``compare`` has it."""
    data = make_dataset(tmp_path, contributors=4, per_cell=5, incomplete=2)
    out = tmp_path / "open.csv"
    cli("collector", "publish", "--data", str(data), "--min-contributors", "4", "--out", str(out))
    domain, net, arm = INCOMPLETE_CELL
    cell = next(r for r in csv.DictReader(out.open())
                if (r["domain"], r["arm"], r["network"]) == (domain, arm, net))
    assert int(cell["n"]) == 20, cell  # 4 x 5, not 4 x 7
    assert float(cell["ci_high_ms"]) < max(r["plt_ms"] for r in compare_rows(
        data, source="experiment") if r["incomplete"])


def test_publish_cells_pass_the_verdict_rule() -> None:
    from protolens.collector.publish import PublishError, judged

    def cell(n: int, contributors: int, low: float, high: float) -> dict[str, object]:
        return {"domain": "a.test", "arm": "h2", "network": "4g", "n": n,
                "contributors": contributors, "median_plt_ms": 900.0, "ci_low_ms": low,
                "ci_high_ms": high}

    ok, few, one = judged([cell(20, 4, 850.0, 990.0), cell(5, 3, 700.0, 1100.0),
                           cell(12, 1, 850.0, 990.0)])
    assert (ok["ci_low_ms"], ok["ci_high_ms"], ok["note"]) == (850.0, 990.0, "")
    assert few["ci_low_ms"] is None and few["note"] == \
        "too few loads to decide (needs n ≥ 6 in the cell)"
    assert one["ci_low_ms"] is None and one["note"] == "all 12 loads come from one contributor"
    try:
        judged([cell(36, 2, 335.0, 335.0)])
    except PublishError as exc:
        assert "zero-width interval" in str(exc) and "nothing published" in str(exc)
    else:
        raise AssertionError("a zero-width interval was published")


def test_publish_refuses_copies_and_writes_nothing(tmp_path: Path) -> None:
    from tests.collector.test_dataset_compare import _copy_under

    data = make_dataset(tmp_path, contributors=1, per_cell=6)
    _copy_under(data, "vol-0", "vol-copy")  # one volunteer's loads under a second token
    out = tmp_path / "open.csv"
    cli("collector", "publish", "--data", str(data), "--min-contributors", "1", "--out",
        str(out))
    rows = list(csv.DictReader(out.open()))
    assert rows and all(r["contributors"] == "1" and r["n"] == "6" for r in rows)
    assert all(r["ci_low_ms"] == "" and "one contributor" in r["note"] for r in rows)
