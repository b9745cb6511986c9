"""Spark (pyspark, local mode, a real JVM) and DuckDB over the same multi-contributor dataset:
the same per-contributor cells (counts, medians, values), hence the same medians, counts and
verdicts from ``compare --dataset``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from protolens.store import dataset, spark
from scripts.devkit.collector import cli
from tests.collector.dataset_builder import make_dataset

pytestmark = pytest.mark.skipif(shutil.which("java") is None,
                                reason="no Java runtime (scripts/setup.sh installs one)")


def test_spark_and_duckdb_agree(tmp_path: Path) -> None:
    data = make_dataset(tmp_path, contributors=5, per_cell=4)
    duck = dataset.cells(data, "experiment", "plt", False, "experiment")
    sprk = spark.cells(data, "experiment", "plt", False, "experiment")
    assert len(duck) == 5 * 2 * 2 * 2 == len(sprk)
    for d, s in zip(duck, sprk, strict=True):
        assert (d["contributor"], d["grp"], d["cond"], d["arm"], d["n"]) == \
            (s["contributor"], s["grp"], s["cond"], s["arm"], s["n"])
        assert d["median_ms"] == s["median_ms"] and d["vals"] == s["vals"]
    outs = [json.loads(cli("compare", "--dataset", str(data), "--source", "experiment",
                           "--engine", engine, "--json").stdout) for engine in ("duckdb", "spark")]
    assert outs[0] == outs[1]
    assert [r["verdict"].startswith("h3 faster") for r in outs[0]] == \
        [r["condition"] == "3g" for r in outs[0]]
    bad = cli("compare", "--source", "experiment", "--engine", "spark", check=False)
    assert bad.returncode == 2 and "--dataset" in bad.stderr
