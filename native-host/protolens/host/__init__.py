"""The native-messaging host process (``python -m protolens.host``): the thin stdio adapter around
``protolens.messaging`` (framing, dispatch) and ``protolens.store`` (SQLite)."""
