"""The sweep (adapter): what crashed or expired writers left in ``DIR/tmp``, and dataset files
no catalog row names. Every ``serve`` process runs it at start and then every lease period.

A folder ``DIR/tmp/<id>`` belongs to the writer whose lease row is ``<id>``
(``store/collector_leases.py``); the sweep first deletes the leases that ran out, in their own
transaction (and, before it, ``writer.py`` those of its machine's ended processes), and then
treats every folder whose writer has no lease left as abandoned. Such a
writer can no longer commit (its commit checks the lease row in the same transaction), so the
sweep moves that writer's committed files into the dataset (the commit happened, the rename did
not) and deletes the rest. A live writer's folder is never touched, whatever its name says.

The dataset is listed *before* the catalog is read: a file in the dataset was renamed there
after its commit, so a file listed then and named by no catalog row read afterwards was never
acknowledged (or was deleted on request).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from protolens.collector.dataset import dataset_files, fsync_dir
from protolens.collector.layout import TMP, dataset_dir
from protolens.store import Connection
from protolens.store.collector import catalog_paths
from protolens.store.collector_leases import expire_writers

STAGED = "dataset"
"""A writer's staged files: ``DIR/tmp/<writer>/dataset/<path in the dataset>``."""


@dataclass(frozen=True)
class Swept:
    removed: tuple[str, ...]
    """Dataset files no catalog row names, removed."""
    rolled_forward: tuple[str, ...]
    """Committed files an abandoned writer had not moved yet, moved into the dataset."""
    abandoned: tuple[str, ...]
    """Writer folders removed."""


def _roll_forward(data: Path, folder: Path, catalogued: set[str]) -> list[str]:
    staged = folder / STAGED
    moved: list[str] = []
    if not staged.is_dir():
        return moved
    found = [Path(root) / name for root, _, names in os.walk(staged)  # os.walk ignores a folder
             for name in names if name.endswith(".parquet")]  # another sweep removes meanwhile
    for path in found:
        rel = str(path.relative_to(staged))
        target = dataset_dir(data) / rel
        if rel in catalogued and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.replace(path, target)
            except FileNotFoundError:  # its writer, or another sweep, moved it first
                continue
            fsync_dir(target.parent)
            moved.append(rel)
    return moved


def abandon(data: Path, folder: Path, catalogued: set[str]) -> list[str]:
    """Take over a folder whose writer's lease is gone: roll its committed files forward, delete
    the folder; the files moved."""
    moved = _roll_forward(data, folder, catalogued)
    shutil.rmtree(folder, ignore_errors=True)
    return moved


def sweep(data: Path, conn: Connection, now_ms: float) -> Swept:
    tmp = data / TMP
    entries = sorted(tmp.iterdir()) if tmp.is_dir() else []
    listed = dataset_files(data)
    live = expire_writers(conn, now_ms)
    catalogued = catalog_paths(conn)
    moved: list[str] = []
    abandoned: list[str] = []
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            if entry.name in live:
                continue
            moved += abandon(data, entry, catalogued)
            abandoned.append(entry.name)
        else:  # a loose file: no writer stages there
            entry.unlink(missing_ok=True)
    removed = [rel for rel in listed if rel not in catalogued]
    for rel in removed:
        (dataset_dir(data) / rel).unlink(missing_ok=True)
    return Swept(tuple(removed), tuple(moved), tuple(abandoned))
