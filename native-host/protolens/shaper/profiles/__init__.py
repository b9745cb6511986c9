"""Built-in link profiles (TOML data files), listed and read by protolens.shaper.catalogue."""
