"""What an upload looks like on the wire, shared by the volunteer's client (core install) and the
collector's server (the ``collector`` extra) without the client importing the server."""

CONTENT_TYPE = "application/x-tar"
"""A bundle is uploaded as its uncompressed tar (share/bundle.py)."""
