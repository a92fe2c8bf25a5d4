"""The daemon fixtures the ledger's daemon-tier tests use (see :mod:`tests.runner.conftest`),
and the home an interactive session's agent keeps its transcript under."""

from pathlib import Path

import pytest

from tests.daemon.fixture import running
from tests.runner.conftest import daemon, headless

__all__ = ["daemon", "headless", "running"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own, where the ledger looks for Claude Code's transcripts (under
    ``~/.claude``: no ``CLAUDE_CONFIG_DIR`` says otherwise)."""
    made = tmp_path / "home"
    monkeypatch.setenv("HOME", str(made))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return made
