"""Built-in link profiles (TOML data files), read by protolens.shaping.profile."""
