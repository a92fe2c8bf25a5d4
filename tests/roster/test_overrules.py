"""A screen rule's ``overrules``: a hook's done over a turn the screen shows failed ends, once.

The readings are the screen engine's own, of Gemini CLI's recorded screens with its packaged
manifest (whose "api-error" rule overrules its hook's done): a failed turn's screen, a good
turn's, and the next turn's once a prompt followed the error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roost.truth.detect import screenrules as engine
from roost.truth.detect.regions import Screen
from roost.truth.roster import Roster
from roost.truth.roster.overrules import judge
from tests.roster.helpers import Clock, claim, current, explained, key

GEMINI = Path(__file__).parents[1] / "fixtures" / "screens" / "gemini"


@pytest.fixture(autouse=True)
def no_user_manifests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The packaged manifests only: a developer's own overrides must not change these tests."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def reading(name: str) -> engine.Detection:
    """What the screen engine reads on Gemini CLI's recorded screen ``name``."""
    text = (GEMINI / f"{name}.txt").read_bytes().decode("utf-8", errors="replace")
    found = engine.detect(Screen.parse(text), "gemini")
    assert found is not None, name
    return found


def turn(hub: Roster, clock: Clock, end: str = "done") -> None:
    """A turn as Gemini CLI's hooks tell it: BeforeAgent's prompt, then AfterAgent's done."""
    hub.apply(claim(clock, "hook", activity="working", event="prompt"))
    clock.advance(1)
    hub.apply(claim(clock, "hook", activity=end, event="AfterAgent"))
    clock.advance(0.5)


def read(hub: Roster, clock: Clock, detection: engine.Detection) -> tuple[str | None, object]:
    """What the daemon's screen reader does with one settled reading: claims it, then
    overrules what its rule ends. Returns the evidence (None: nothing ended) and the outcome."""
    hub.apply(engine.claim(detection, clock.now, session_key=key()))
    record = current(hub)
    evidence = judge(record, hub.holder(key()), detection.state, detection.overrules)
    if evidence is None:
        return None, None
    found = engine.claim(detection, clock.now, session_key=key())
    return evidence, hub.overrule(found, evidence, detection.overrules)


@pytest.mark.parametrize("size", ["", "-80x24"])
def test_a_failed_turn_that_its_hook_ends_done_reads_error(hub: Roster, clock: Clock, size: str) -> None:
    turn(hub, clock)
    assert (current(hub).state, current(hub).activity) == ("done", "idle")
    error = reading(f"error-api{size}")
    assert (error.rule, error.state, error.overrules) == ("api-error", "error", frozenset({"done"}))
    evidence, outcome = read(hub, clock, error)
    assert evidence == "hook said done, and the screen shows error, which its rule says ends done"
    assert outcome.accepted, outcome.reasons
    assert outcome.changes, "the record changed"
    record = current(hub)
    assert (record.activity, record.state) == ("idle", "error")
    assert record.error_reason is not None and "the fake model API refuses prompts" in record.error_reason
    view = explained(hub)
    assert view["fields"]["activity"]["source"] == "screen"
    [entry] = view["overruled"]
    assert (entry["source"], entry["ended"]["activity"], entry["by"]["source"]) == ("hook", "done", "screen")
    assert entry["evidence"] == evidence


def test_it_holds_once_the_same_reading_again_ends_nothing(hub: Roster, clock: Clock) -> None:
    turn(hub, clock)
    read(hub, clock, reading("error-api"))
    clock.advance(1)
    assert read(hub, clock, reading("error-api")) == (None, None)
    record = current(hub)
    assert (record.state, explained(hub)["fields"]["activity"]["source"]) == ("error", "screen")
    assert len(explained(hub)["overruled"]) == 1


def test_a_late_copy_of_the_overruled_word_does_not_bring_it_back(hub: Roster, clock: Clock) -> None:
    """The scan read the hook's done badge before the screen rewrote it, or the hook's own post
    came late: the same word again, with nothing between, is the turn already overruled."""
    turn(hub, clock)
    read(hub, clock, reading("error-api"))
    clock.advance(0.5)
    outcome = hub.apply(claim(clock, "hook", activity="done", event="done", fields={"harness": "gemini"}))
    assert outcome.accepted, "its other fields still count"
    assert outcome.reasons == ("activity: hook said done again, which the screen overruled",)
    assert current(hub).state == "error"
    assert explained(hub)["rejected"][-1]["reason"] == outcome.reasons[0]
    hub.apply(claim(clock, "hook", activity="working", event="prompt"))
    hub.apply(claim(clock, "hook", activity="done", event="AfterAgent"))
    assert (current(hub).state, explained(hub)["fields"]["activity"]["source"]) == ("done", "hook")


def test_a_good_turn_s_done_stays_done(hub: Roster, clock: Clock) -> None:
    turn(hub, clock)
    for name in ("idle-after-reply", "idle-after-command", "idle-declined"):
        found = reading(name)
        assert found.overrules == frozenset(), name
        assert read(hub, clock, found) == (None, None)
    assert (current(hub).state, explained(hub)["overruled"]) == ("done", [])


def test_the_next_turn_after_a_failed_one_is_the_hook_s_again(hub: Roster, clock: Clock) -> None:
    """The error line stays above the next prompt: the rule's ``unless_after`` makes it history."""
    turn(hub, clock)
    read(hub, clock, reading("error-api"))
    hub.apply(claim(clock, "hook", activity="working", event="prompt"))
    assert (current(hub).state, explained(hub)["fields"]["activity"]["source"]) == ("working", "hook")
    later = reading("working-retry")
    assert "API Error" in (GEMINI / "working-retry.txt").read_text()
    assert (later.rule, later.overrules) != ("api-error", frozenset({"done"}))
    clock.advance(1)
    hub.apply(claim(clock, "hook", activity="done", event="AfterAgent"))
    assert read(hub, clock, later) == (None, None)
    assert current(hub).state == "done"


def test_only_the_listed_states_of_a_higher_source_are_ended(hub: Roster, clock: Clock) -> None:
    error = reading("error-api")
    hub.apply(claim(clock, "hook", activity="working", event="prompt"))
    assert read(hub, clock, error) == (None, None), "a turn still working is not the rule's to end"
    assert current(hub).state == "working"
    hub.apply(claim(clock, "hook", activity="idle", event="seen"))
    assert read(hub, clock, error) == (None, None), "idle is not in the rule's overrules"
    assert current(hub).state == "idle"


def test_a_screen_s_own_word_is_not_overruled(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "screen", activity="done"))
    record = current(hub)
    assert judge(record, hub.holder(key()), "error", {"done"}) is None
    found = claim(clock, "screen", process=None, session_key=key(), activity="error")
    outcome = hub.overrule(found, "evidence", frozenset({"done"}))
    assert not outcome.accepted
    assert outcome.reasons == ("no source above screen holds done",)
    assert current(hub) == record


def test_a_higher_source_that_says_another_state_is_not_reached_past(hub: Roster, clock: Clock) -> None:
    """The integration says working over the hook's done: the screen cannot end the done."""
    turn(hub, clock)
    hub.apply(claim(clock, "integration", activity="working"))
    found = claim(clock, "screen", process=None, session_key=key(), activity="error")
    outcome = hub.overrule(found, "evidence", frozenset({"done"}))
    assert not outcome.accepted
    assert current(hub).activity == "active"
