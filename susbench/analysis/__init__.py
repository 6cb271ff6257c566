"""Analysis of stored results: statistics, the paper's figures, the HTML report, compare and drift.

Everything here reads a results database read-only (`susbench.results.store.Store`) or snapshots; nothing
writes results. Rates are computed per run configuration and never pooled across configurations
unless asked to.
"""
