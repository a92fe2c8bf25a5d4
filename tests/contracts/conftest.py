"""Daemon fixtures for the contracts a rosterd verb shows only with a daemon running."""

from tests.daemon.fixture import daemon, running

__all__ = ["daemon", "running"]
