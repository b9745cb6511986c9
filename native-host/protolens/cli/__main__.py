"""``python -m protolens.cli``: the same as the ``protolens`` command."""

from protolens.cli import main

main()
