"""Packet-level shaping: profiles (pure), their translation into the shaper's config (pure), and
the adapter that runs and talks to the compiled NFQUEUE helper in native-host/shaper/."""

from protolens.shaping.profile import Profile, ProfileError, builtin_names, load_profile

__all__ = ["Profile", "ProfileError", "builtin_names", "load_profile"]
