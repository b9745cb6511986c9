"""Launching lab Chromium: fresh profiles, per-arm flags, the extension, the host in lab mode.

``flags`` is pure (arm -> command line); ``profile`` writes a profile directory; ``launch`` is the
adapter that runs one load and waits for its record in the store.
"""
