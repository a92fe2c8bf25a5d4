"""Daemon fixtures for these tests: see :mod:`tests.daemon.fixture`."""

from tests.daemon.fixture import daemon, running

__all__ = ["daemon", "running"]
