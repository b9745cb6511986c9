"""The everyday harness's default hold (scripts/devkit/everyday.py DEFAULT_HOLD_S) is the
extension's own (src/policy/settings.ts): the real-web everyday module's `held` way and the hold
bench run with it as the user's default, so a change of the extension's default must reach them."""

from __future__ import annotations

import re
from pathlib import Path

from scripts.devkit.everyday import DEFAULT_HOLD_S

SETTINGS = Path(__file__).resolve().parents[2] / "src/policy/settings.ts"


def test_the_harness_hold_is_the_extensions_default() -> None:
    found = re.search(r"^export const DEFAULT_HOLD_S = (\d+);$", SETTINGS.read_text(), re.M)
    assert found, f"{SETTINGS} exports no DEFAULT_HOLD_S = <whole seconds>"
    assert int(found.group(1)) == DEFAULT_HOLD_S
