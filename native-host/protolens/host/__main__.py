"""Entry point: ``python -m protolens.host`` (what the native-messaging manifest's wrapper runs).
The composition root: it hands the stdio adapter the contribution schedule
(``collector/schedule.py``), which sits above ``host/`` in the import floors
(docs/ARCHITECTURE.md)."""

import sys

from protolens.collector.schedule import from_env
from protolens.host.stdio import main

sys.exit(main(contribute=from_env))
