"""The catalogs: the injections (and the extension built from them), the tasks, task sets, vocabulary."""
