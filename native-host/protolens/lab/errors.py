"""The lab's one user-facing error (pure): raised by every campaign check, printed as one line."""


class CampaignError(Exception):
    """A campaign that cannot start; the message is one line for the user."""
