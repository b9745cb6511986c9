"""Native messaging between extension and host (docs/MESSAGES.md).

``framing``: pure streaming codec of 4-byte little-endian length + UTF-8 JSON frames.
``dispatch``: pure message -> reply logic, calling a store passed in.
The stdio adapter lives in ``protolens.host``.
"""
