"""Daemon fixtures for these tests (see :mod:`tests.daemon.fixture`), a client of the running
daemon's unix socket, and a real process for claims to name."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import httpx
import pytest

from tests.api.helpers import sleeper
from tests.daemon.fixture import Daemon, daemon, running

__all__ = ["daemon", "running"]


@pytest.fixture
def api(running: Daemon) -> Iterator[httpx.Client]:
    with running.unix() as client:
        yield client


@pytest.fixture
def proc() -> Iterator[subprocess.Popen[bytes]]:
    with sleeper() as process:
        yield process
