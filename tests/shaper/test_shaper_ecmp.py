"""The ECMP flow hash is written twice, in C (counters.c ``sh_ecmp_path``) and in Python
(protolens.shaper.ecmp): both are held to the same vectors, native-host/shaper/testdata/
ecmp_vectors.json, which test_inputs.c reads too (its run is test_shaper_model.py)."""

from __future__ import annotations

import json
from pathlib import Path

from protolens.shaper.build import source_dir
from protolens.shaper.ecmp import ecmp_path

VECTORS = Path(__file__).resolve().parents[2] / "native-host/shaper/testdata/ecmp_vectors.json"


def test_python_hash_matches_the_shared_vectors() -> None:
    vectors = json.loads(VECTORS.read_text())["vectors"]
    assert len(vectors) >= 16
    assert {v["path"] for v in vectors} == {0, 1}
    for v in vectors:
        got = ecmp_path(v["cli_ip"], v["cli_port"], v["srv_ip"], v["srv_port"], v["proto"])
        assert got == v["path"], v


def test_the_vectors_ship_with_the_packaged_sources() -> None:
    assert (source_dir() / "testdata" / "ecmp_vectors.json").read_text() == VECTORS.read_text()
