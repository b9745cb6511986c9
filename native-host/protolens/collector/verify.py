"""``collector verify`` (adapter): every dataset file against the catalog (present, SHA-256,
rows), every stored tag against the manifest it covers, and no navigation id stored by two
bundles; also the refusals and flags the catalog recorded, named for the researcher."""

from __future__ import annotations

import hashlib
import io
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pyarrow.parquet as pq  # type: ignore[import-untyped]

from protolens.collector.dataset import dataset_files
from protolens.collector.layout import TMP, dataset_dir
from protolens.collector.sweep import STAGED
from protolens.collector.tags import verifies
from protolens.store.collector import CatalogBundle


def _staged(data: Path, rel: str) -> bool:
    """Committed and being moved into place by its writer (or a sweep) right now."""
    tmp = data / TMP
    return tmp.is_dir() and any((d / STAGED / rel).is_file() for d in tmp.iterdir())


def _file_problems(data: Path, b: CatalogBundle) -> list[str]:
    problems = []
    for f in b.files:
        path = dataset_dir(data) / f.path
        if not path.is_file():
            if not _staged(data, f.path):
                problems.append(f"{f.path}: missing (bundle {b.checksum})")
            continue
        body = path.read_bytes()
        if hashlib.sha256(body).hexdigest() != f.sha256:
            problems.append(f"{f.path}: content differs from the catalog's SHA-256")
            continue
        rows = pq.ParquetFile(io.BytesIO(body)).metadata.num_rows
        if rows != f.rows:
            problems.append(f"{f.path}: {rows} rows, the catalog says {f.rows}")
    return problems


def _tag_problem(b: CatalogBundle, keys: Mapping[str, str | None]) -> str | None:
    if b.tag is None or b.manifest is None:
        return None
    manifest = b.manifest.encode()
    if hashlib.sha256(manifest).hexdigest() != b.checksum:
        return f"bundle {b.checksum}: its stored manifest does not match its checksum"
    key = keys.get(b.contributor)
    if key is None or not verifies(bytes.fromhex(key), manifest, b.tag):
        return f"bundle {b.checksum}: its tag does not verify under {b.contributor}'s key"
    return None


def _duplicate_ids(data: Path) -> list[str]:
    """Navigation ids in more than one bundle's file (stored before ids were kept once)."""
    where: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for rel in dataset_files(data):
        if not rel.startswith("table=navigations/"):
            continue
        t = pq.read_table(dataset_dir(data) / rel, columns=["id", "contributor", "bundle"])
        for i, c, b in zip(*(t.column(n).to_pylist() for n in ("id", "contributor", "bundle")),
                           strict=True):
            where[i].add((c, b))
    return [f"navigation {i}: stored {len(s)} times (by {', '.join(sorted({c for c, _ in s}))})"
            for i, s in sorted(where.items()) if len(s) > 1]


def verify(data: Path, bundles: Iterable[CatalogBundle], keys: Mapping[str, str | None],
           listed: list[str]) -> tuple[list[str], int]:
    """(problems, untagged bundles). ``listed``: the dataset's files, listed *before* the catalog
    was read (a file renamed into the dataset after that was committed after it too). Problems:
    a catalogued file missing, changed or with other row counts; a file no catalog row names; a
    tag that does not verify; a navigation id in two bundles. Empty when all is well."""
    problems: list[str] = []
    named: set[str] = set()
    untagged = 0
    for b in bundles:
        named.update(f.path for f in b.files)
        problems += _file_problems(data, b)
        untagged += b.tag is None
        if (p := _tag_problem(b, keys)) is not None:
            problems.append(p)
    problems += [f"{rel}: not in the catalog" for rel in listed if rel not in named]
    problems += _duplicate_ids(data)
    return problems, untagged
