"""The message schema: the version every message between extension and host carries in its
``schema`` field, both ways (docs/MESSAGES.md; the extension's ``MSG_SCHEMA``,
src/messages/protocol.ts). A message of another schema is refused with one line."""

MESSAGE_SCHEMA = 1
"""The message envelope schema this host speaks."""
