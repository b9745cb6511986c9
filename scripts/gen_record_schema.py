#!/usr/bin/env python3
"""Write schema/navigation-record.schema.json from the Python record model and column table
(native-host/protolens/record/json_schema.py). ``--check``: exit 1 if the committed file is stale
(tests/record/test_record_json_schema.py runs the same comparison in CI).

Usage: .venv/bin/python scripts/gen_record_schema.py [--check]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from protolens.record.json_schema import record_schema

OUT = Path(__file__).resolve().parent.parent / "schema" / "navigation-record.schema.json"


def text() -> str:
    return json.dumps(record_schema(), indent=2) + "\n"


def main(argv: list[str]) -> int:
    if argv[1:] == ["--check"]:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text():
            print(f"{OUT}: stale; run .venv/bin/python scripts/gen_record_schema.py",
                  file=sys.stderr)
            return 1
        return 0
    if argv[1:]:
        print("usage: gen_record_schema.py [--check]", file=sys.stderr)
        return 2
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(text(), encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
