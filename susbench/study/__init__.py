"""`susbench study`: whole sessions of human participants on the frozen sites, stored beside the
agents' episodes in the same DuckDB file."""
