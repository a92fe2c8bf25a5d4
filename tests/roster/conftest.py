"""Fixtures for the roster's unit tests: pure objects, no tmux, no processes, no real time."""

from __future__ import annotations

import pytest

from roost.truth.roster import Roster
from tests.roster.helpers import Clock, roster


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def hub(clock: Clock) -> Roster:
    return roster(clock)
