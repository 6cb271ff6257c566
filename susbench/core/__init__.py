"""The base every part builds on: models, errors, loading, paths, digests, the run identity, URL
patterns, certificates, host maps."""
