"""Who wins: every pair of sources in both orders, filling nulls, and the integration lease."""

from __future__ import annotations

import itertools

import pytest

from roost.truth.roster import Roster, precedence
from roost.truth.roster.precedence import SOURCES
from tests.roster.helpers import Clock, claim, current, events, explained

PAIRS = [(high, low) for high, low in itertools.combinations(SOURCES, 2)]


def test_the_order_is_the_specified_one() -> None:
    assert SOURCES == ("launcher", "acp", "integration", "hook", "files", "screen", "scan")
    assert all(precedence.outranks(high, low) and not precedence.outranks(low, high) for high, low in PAIRS)
    assert not precedence.outranks("hook", "hook")


@pytest.mark.parametrize(("high", "low"), PAIRS)
def test_a_lower_source_never_overwrites_a_higher_one(high: str, low: str, hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, high, activity="working", fields={"name": "from-high"}))
    outcome = hub.apply(claim(clock, low, activity="idle", fields={"name": "from-low"}))
    record = current(hub)
    assert (record.activity, record.name) == ("active", "from-high")
    assert not outcome.accepted
    assert f"activity: {high} set it, which outranks {low}" in outcome.reasons
    assert f"name: {high} set it, which outranks {low}" in outcome.reasons
    assert outcome.changes == ()


@pytest.mark.parametrize(("high", "low"), PAIRS)
def test_a_higher_source_overwrites_a_lower_one(high: str, low: str, hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, low, activity="idle", fields={"name": "from-low"}))
    outcome = hub.apply(claim(clock, high, activity="working", fields={"name": "from-high"}))
    record = current(hub)
    assert (record.activity, record.name) == ("active", "from-high")
    assert outcome.accepted and outcome.reasons == ()
    assert events(outcome) == ["renamed", "activity"]


@pytest.mark.parametrize(("high", "low"), PAIRS)
def test_a_lower_source_fills_a_null(high: str, low: str, hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, high, activity="working"))
    outcome = hub.apply(claim(clock, low, activity="idle", fields={"cwd": "/src"}))
    record = current(hub)
    assert (record.activity, record.cwd) == ("active", "/src")
    assert outcome.accepted, "partly accepted: the cwd filled a null"
    assert outcome.reasons == (f"activity: {high} set it, which outranks {low}",)
    assert explained(hub)["fields"]["cwd"]["source"] == low
    assert explained(hub)["fields"]["activity"]["source"] == high


def test_a_source_overwrites_its_own_value(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "screen", activity="working"))
    hub.apply(claim(clock, "screen", activity="idle"))
    assert current(hub).activity == "idle"


def test_a_higher_source_withdrawing_its_value_lets_the_lower_one_show(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "launcher", fields={"name": "api"}))
    hub.apply(claim(clock, "hook", fields={"name": "claude in api"}))
    outcome = hub.apply(claim(clock, "launcher", fields={"name": None}))
    assert current(hub).name == "claude in api"
    assert events(outcome) == ["renamed"]


def test_activity_travels_as_one_group_from_one_source(hub: Roster, clock: Clock) -> None:
    hub.apply(
        claim(clock, "hook", activity="blocked", event="permission", fields={"pending": {"tool": "Bash"}})
    )
    hub.apply(claim(clock, "screen", activity="working", event="spinner"))
    record = current(hub)
    assert (record.activity, record.activity_event) == ("needs_attention", "permission")
    assert record.pending is not None and record.pending["tool"] == "Bash"
    hub.apply(claim(clock, "hook", activity="working", event="permission_answered"))
    record = current(hub)
    assert (record.activity, record.activity_event, record.pending) == ("active", "permission_answered", None)


class TestIntegrationLease:
    """An integration report beats the screen until it has been silent for 30 seconds."""

    def start(self, hub: Roster, clock: Clock) -> None:
        hub.apply(claim(clock, "integration", activity="blocked", event="waiting", seq=1))
        clock.advance(1)
        outcome = hub.apply(claim(clock, "screen", activity="idle", event="prompt"))
        assert not outcome.accepted

    def test_the_screen_takes_over_when_the_lease_expires(self, hub: Roster, clock: Clock) -> None:
        self.start(hub, clock)
        clock.advance(28.999)
        assert hub.tick() == ()
        assert current(hub).activity == "needs_attention"
        clock.advance(0.001)
        changed = hub.tick()
        assert events(changed) == ["attention_cleared"]
        record = current(hub)
        assert (record.activity, record.activity_event) == ("idle", "prompt")
        assert explained(hub)["fields"]["activity"]["source"] == "screen"

    def test_a_claim_after_expiry_sees_the_expiry_first(self, hub: Roster, clock: Clock) -> None:
        self.start(hub, clock)
        clock.advance(40)
        outcome = hub.apply(claim(clock, "screen", activity="working", event="spinner"))
        assert outcome.accepted
        assert events(outcome) == ["attention_cleared", "activity"]
        assert current(hub).activity == "active"

    def test_a_reporter_that_speaks_again_wins_again(self, hub: Roster, clock: Clock) -> None:
        self.start(hub, clock)
        clock.advance(60)
        hub.tick()
        outcome = hub.apply(claim(clock, "integration", activity="working", event="resumed", seq=2))
        assert outcome.accepted and events(outcome) == ["activity"]
        assert explained(hub)["fields"]["activity"]["source"] == "integration"

    def test_every_report_renews_the_lease(self, hub: Roster, clock: Clock) -> None:
        self.start(hub, clock)
        for seq in range(2, 6):
            clock.advance(20)
            hub.apply(claim(clock, "integration", activity="blocked", event="waiting", seq=seq))
        clock.advance(29)
        assert hub.tick() == ()
        assert current(hub).activity == "needs_attention"

    def test_with_nothing_to_fall_back_on_activity_is_unknown(self, hub: Roster, clock: Clock) -> None:
        hub.apply(claim(clock, "integration", activity="working"))
        clock.advance(30)
        assert events(hub.tick()) == ["activity"]
        assert current(hub).activity == "unknown"

    def test_the_deadline_is_when_the_lease_runs_out(self, hub: Roster, clock: Clock) -> None:
        assert hub.deadline() is None
        self.start(hub, clock)
        assert hub.deadline() == clock.now - 1 + 30
        clock.advance(30)
        hub.tick()
        assert hub.deadline() is None, "an expired lease is no longer a deadline"


def test_hooks_hold_no_lease(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="blocked", event="permission"))
    hub.apply(claim(clock, "screen", activity="idle"))
    clock.advance(3600)
    assert hub.tick() == ()
    assert current(hub).activity == "needs_attention"
    assert hub.deadline() is None
