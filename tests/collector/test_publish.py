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
from tests.collector.dataset_builder import make_dataset


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
