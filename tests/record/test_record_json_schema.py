"""The committed JSON Schema of the NavigationRecord (schema/navigation-record.schema.json): fresh
(generated from the Python model and column table), and every golden record of the TypeScript
recorder valid under it and under the Python validator (tests/extension/record-schema.test.ts
checks the same goldens with ajv)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from protolens.record import RecordError, columns, parse_record
from protolens.record.json_schema import record_schema

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA = ROOT / "schema" / "navigation-record.schema.json"
GOLDENS = sorted((ROOT / "tests" / "fixtures" / "cdp").glob("*.expected.json"))


def _validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_the_committed_schema_is_fresh() -> None:
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == record_schema(), \
        "stale: run .venv/bin/python scripts/gen_record_schema.py"
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_record_schema.py"),
                            "--check"], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


@pytest.mark.parametrize("golden", GOLDENS, ids=[g.name for g in GOLDENS])
def test_every_golden_record_is_valid_in_both(golden: Path) -> None:
    validator = _validator()
    records = json.loads(golden.read_text(encoding="utf-8"))
    assert records
    for raw in records:
        errors = [e.message for e in validator.iter_errors(raw)]
        assert errors == [], (golden.name, errors[:3])
        assert parse_record(raw).id == raw["id"]


BROKEN: list[tuple[str, Any]] = [
    ("requests.0.status", 700), ("requests.0.remote_port", 0),
    ("page.url_detail", "everything"), ("page.started_at_ms", 1e308),
    ("connections.0.share", 1.5), ("hosts.0.families", ["h4"]), ("schema", 2),
    ("id", "not-a-uuid"), ("page.redirects", ["x"] * 21), ("requests.0.method", "M" * 65),
]


@pytest.mark.parametrize("path,value", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_golden_fails_in_both(path: str, value: Any) -> None:
    raw = copy.deepcopy(json.loads(GOLDENS[0].read_text(encoding="utf-8"))[0])
    target: Any = raw
    parts = path.split(".")
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target[part]
    target[parts[-1]] = value
    assert list(_validator().iter_errors(raw)), path
    with pytest.raises(RecordError):
        parse_record(raw)


def test_every_record_field_of_the_column_table_is_in_the_schema() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    defs = {"": schema, **{k: v for k, v in schema["$defs"].items()}}
    where = {"": "", "page": "Page", "page.browser": "Browser", "page.network": "NetworkInfo",
             "milestones": "Milestones", "requests": "Request", "connections": "Connection",
             "hosts": "HostSummary", "policies": "AppliedPolicy"}
    for cols in columns.TABLES.values():
        for c in cols:
            if c.field:
                prefix = c.field.rpartition(".")[0]
                assert c.key in defs[where[prefix]]["properties"], c.field
