"""SusBench Replay: record consumer sites, replay them frozen, and measure dark-pattern susceptibility."""

__version__ = "0.1.0"
