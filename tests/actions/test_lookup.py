"""Finding a session by what a caller typed (``roost.actions.sessions``): a live session wins a
name over ended ones, and a name only refuses as ambiguous when it leaves a choice to guess.

A crashed headless session resumes under a new key with the same name, and its ended record
lingers beside the continuation; both carry the name, and the one a person means is the live
one. Pure roster objects: no tmux, no processes.
"""

from __future__ import annotations

import pytest

from roost.actions.sessions import resolve
from roost.base.errors import Conflict, TargetGone
from roost.truth.roster import ProcessId, Roster
from roost.truth.roster.precedence import LAUNCHER
from tests.roster.helpers import Clock, claim, key, roster

FIRST, SECOND, THIRD = ProcessId(4242, 1000), ProcessId(4343, 1100), ProcessId(4444, 1200)


def named(hub: Roster, clock: Clock, process: ProcessId, name: str) -> str:
    """A session of ``process`` that its launcher named ``name``; its key."""
    outcome = hub.apply(claim(clock, LAUNCHER, process, fields={"name": name, "lane": "headless"}))
    assert outcome.accepted, outcome.reasons
    return key(process)


def end(hub: Roster, clock: Clock, process: ProcessId) -> None:
    assert hub.apply(claim(clock, "acp", process, ended="crash")).accepted


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def hub(clock: Clock) -> Roster:
    return roster(clock)


def test_a_live_session_wins_its_name_over_the_ended_one_it_continues(hub: Roster, clock: Clock) -> None:
    crashed = named(hub, clock, FIRST, "hl: one")
    end(hub, clock, FIRST)
    continued = named(hub, clock, SECOND, "hl: one")
    assert resolve(hub, "hl: one") == continued
    assert resolve(hub, crashed) == crashed  # the ended record is still there by its key


def test_two_live_sessions_with_one_name_are_ambiguous_whatever_ended(hub: Roster, clock: Clock) -> None:
    named(hub, clock, FIRST, "twin")
    end(hub, clock, FIRST)
    both = [named(hub, clock, SECOND, "twin"), named(hub, clock, THIRD, "twin")]
    with pytest.raises(Conflict) as refused:
        resolve(hub, "twin")
    assert refused.value.extra["candidates"] == both


def test_with_no_live_session_an_ended_one_is_found_by_name_if_it_is_the_only_one(
    hub: Roster, clock: Clock
) -> None:
    only = named(hub, clock, FIRST, "gone")
    end(hub, clock, FIRST)
    assert resolve(hub, "gone") == only
    named(hub, clock, SECOND, "gone")
    end(hub, clock, SECOND)
    with pytest.raises(Conflict) as refused:
        resolve(hub, "gone")
    assert refused.value.extra["candidates"] == [only, key(SECOND)]
    with pytest.raises(TargetGone):
        resolve(hub, "nobody")
