"""Replaying a DevTools log through the extension's recorder core (``protolens replay``).

The host never parses CDP (docs/ARCHITECTURE.md): the recorder core is TypeScript, built into a
node script (``dist/node/replay.cjs``); ``node.py`` runs it and validates the records it prints.
"""
