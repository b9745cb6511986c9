"""Entry point: ``python -m protolens.host`` (what the native-messaging manifest's wrapper runs)."""

import sys

from protolens.host.stdio import main

sys.exit(main())
