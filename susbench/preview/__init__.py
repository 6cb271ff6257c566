"""Previews: every injection in place on the local web, and where generic injections land on real pages."""
