"""The pure and local parts of push notifications: the classifier, the grace delay, the store."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from roost.services.notify.classify import DONE, ERROR, NEEDS_INPUT, classify
from roost.services.notify.delay import Delays
from roost.services.notify.notifier import request_of
from roost.services.notify.store import Store, Subscription
from roost.truth.roster.attention import DIALOG_CLOSED
from roost.truth.roster.records import ACTIVE, IDLE, NEEDS_ATTENTION, UNKNOWN, Record
from tests.fakes.clock import SteppedClock


@pytest.mark.parametrize(
    ("before", "after", "what"),
    [
        (ACTIVE, NEEDS_ATTENTION, NEEDS_INPUT),
        (ACTIVE, IDLE, DONE),
        (NEEDS_ATTENTION, IDLE, DONE),
        (IDLE, ACTIVE, None),
        (NEEDS_ATTENTION, ACTIVE, None),
        (IDLE, NEEDS_ATTENTION, None),
        (UNKNOWN, IDLE, None),
        (UNKNOWN, NEEDS_ATTENTION, None),
        (None, IDLE, None),
        (None, NEEDS_ATTENTION, None),
        (ACTIVE, ACTIVE, None),
        (IDLE, IDLE, None),
    ],
)
def test_only_background_transitions_count(before: str | None, after: str, what: str | None) -> None:
    assert classify(before, after) == what


def test_a_dialog_that_left_the_screen_is_not_news() -> None:
    """Somebody at the terminal declined it: "done" would tell them what they just did."""
    assert classify(NEEDS_ATTENTION, IDLE, DIALOG_CLOSED) is None
    assert classify(NEEDS_ATTENTION, IDLE, "done") == DONE


def test_a_turn_that_failed_is_told_as_an_error_in_the_words_every_face_uses() -> None:
    assert classify(ACTIVE, IDLE, "StopFailure", "error") == ERROR == "error"
    assert classify(ACTIVE, IDLE, "Stop", "done") == DONE == "done"
    assert classify(ACTIVE, NEEDS_ATTENTION, "permission", "blocked") == NEEDS_INPUT == "needs input"
    assert classify(IDLE, IDLE, "idle", "error") is None


def test_a_done_found_failed_after_is_told_as_an_error() -> None:
    """A screen rule overruled the hook's done (``overrules``): the turn failed after all, and
    that "error" replaces the "done" still waiting out its grace."""
    assert classify(IDLE, IDLE, "error", "error", was="done") == ERROR
    assert classify(IDLE, IDLE, "error", "error", was="error") is None
    assert classify(IDLE, IDLE, "error", "error", was="idle") is None, "seen, then nothing new"
    assert classify(IDLE, IDLE, "done", "done", was="error") is None


def test_a_delay_fires_once_after_its_grace() -> None:
    clock = SteppedClock()
    fired: list[str] = []
    delays = Delays(1.0, clock)
    delays.schedule("a", lambda: fired.append("a"))
    assert delays.pending("a")
    clock.advance(0.9)
    assert fired == [] and delays.pending("a")
    clock.advance(0.1)
    assert fired == ["a"] and not delays.pending("a")
    clock.advance(10)
    assert fired == ["a"]


def test_a_cancelled_delay_never_fires_and_a_newer_one_replaces_the_old() -> None:
    clock = SteppedClock()
    fired: list[str] = []
    delays = Delays(1.0, clock)
    delays.schedule("a", lambda: fired.append("a"))
    assert delays.cancel("a") is True
    assert delays.cancel("a") is False
    delays.schedule("b", lambda: fired.append("b1"))
    clock.advance(0.5)
    delays.schedule("b", lambda: fired.append("b2"))  # a newer transition: a grace of its own
    clock.advance(0.9)
    assert fired == []
    clock.advance(0.1)
    assert fired == ["b2"]
    delays.schedule("c", lambda: fired.append("c"))
    delays.close()
    delays.schedule("d", lambda: fired.append("d"))
    clock.advance(10)
    assert fired == ["b2", "d"] and clock.pending() == 0


def test_the_store_keeps_one_row_per_endpoint_across_reopening(tmp_path: Path) -> None:
    path = tmp_path / "state" / "roost" / "push.sqlite3"
    store = Store(path)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    store.add(Subscription("https://push.example/1", "key1", "auth1"))
    store.add(Subscription("https://push.example/2", "key2", "auth2"))
    store.add(Subscription("https://push.example/1", "key1b", "auth1b"))
    again = Store(path)
    assert again.all() == [
        Subscription("https://push.example/1", "key1b", "auth1b"),
        Subscription("https://push.example/2", "key2", "auth2"),
    ]
    assert again.remove("https://push.example/1") is True
    assert again.remove("https://push.example/1") is False
    assert [s.endpoint for s in store.all()] == ["https://push.example/2"]


def _waiting(pending: dict | None, activity: str = NEEDS_ATTENTION) -> Record:
    return Record("n", "id", "n:1:1", 1, 1, 0.0, activity=activity, pending=pending)


def test_a_needs_input_push_names_the_request_and_the_answers_rosterd_can_give() -> None:
    options = [
        {"id": "a", "kind": "allow_once"},
        {"id": "b", "kind": "allow_always"},
        {"id": "r", "kind": "reject_once"},
    ]
    gated = {
        "id": "r1",
        "tool": "Bash",
        "summary": "Bash:  npm\ntest " + "x" * 200,
        "options": options,
        "answerable": True,
    }
    request = request_of(_waiting(gated))
    assert request is not None
    assert (request["id"], request["answers"]) == ("r1", ["allow", "allow_always", "reject"])
    assert request["asks"].startswith("Bash: npm test x") and len(request["asks"]) == 120  # one line
    in_terminal = request_of(
        _waiting({"id": "r2", "summary": "Bash: ls", "options": [], "answerable": False})
    )
    assert in_terminal == {"id": "r2", "asks": "Bash: ls", "answers": []}
    rejects = {"id": "r3", "options": [{"kind": "allow_once"}, {"kind": "reject_always"}], "answerable": True}
    assert request_of(_waiting(rejects))["answers"] == ["allow", "reject"]  # as the runner takes reject
    assert request_of(_waiting(None)) is None
    assert request_of(_waiting(gated, activity=IDLE)) is None
