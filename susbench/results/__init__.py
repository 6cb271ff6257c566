"""Results: the DuckDB store, the bundles exported from it, and the traces beside it."""
