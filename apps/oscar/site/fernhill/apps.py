from django.apps import AppConfig


class FernhillConfig(AppConfig):
    """The shop's own commands (seed, digest); it holds no models."""

    name = "fernhill"
