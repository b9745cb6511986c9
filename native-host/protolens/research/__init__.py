"""Research workflows (adapters on the floor of ``share/``): what ``compare`` reads (the store,
bundles through DuckDB, a collector's dataset through DuckDB or Spark), handed to the pure
statistics of ``analysis/``. The CLI parses, calls one function here, and prints."""
