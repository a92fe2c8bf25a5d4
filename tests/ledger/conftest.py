"""The daemon fixtures the ledger's daemon-tier tests use: see :mod:`tests.runner.conftest`."""

from tests.daemon.fixture import running
from tests.runner.conftest import daemon, headless

__all__ = ["daemon", "headless", "running"]
