"""The base every part builds on: models, errors, loading, paths, digests, URL patterns, certificates,
host maps."""
