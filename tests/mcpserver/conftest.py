"""A real daemon with headless sessions over the fake ACP adapter (tests/runner/conftest.py),
and MCP clients of it: the SDK's own, over each way a caller reaches the server."""

from __future__ import annotations

from tests.daemon.fixture import daemon
from tests.runner.conftest import headless

__all__ = ["daemon", "headless"]
