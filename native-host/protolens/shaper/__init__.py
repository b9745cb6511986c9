"""The packet shaper, in one place: link profiles (``records``, ``profile``, the built-in
``catalogue``), their schedules and traces expanded into the helper's config (``schedule``,
``config``), all pure; the explicit build step of the C helper in native-host/shaper/ (``build``)
and the adapter that runs and talks to it (``control``)."""

from protolens.shaper.catalogue import builtin_names, load_profile
from protolens.shaper.profile import ProfileError
from protolens.shaper.records import Profile

__all__ = ["Profile", "ProfileError", "builtin_names", "load_profile"]
