"""A pane's badge read back against the roster: claimed only when it says something new."""

from __future__ import annotations

from roost.truth.detect import badges
from roost.truth.roster import Claim, ProcessId, Roster

ROOT = ProcessId(4242, 1000)
ASKS = "Bash: npm test"


def waiting(asks: str = ASKS) -> Roster:
    """A roster whose one session waits on a dialog its hook reported, as ``rosterd-hook`` posts it."""
    roster = Roster("test", "n0", lambda: 1_700_000_000.0, status_epoch=1)
    fields = {"harness": "claude", "pending": {"summary": asks, "tool": "Bash"}}
    roster.apply(
        Claim(
            "hook",
            1_700_000_000.0,
            process=ROOT,
            activity="blocked",
            event="PermissionRequest",
            fields=fields,
        )
    )
    return roster


def badge(word: str = "blocked", reason: str | None = ASKS) -> badges.Badge:
    return badges.Badge(word, 1_700_000_000.0, reason, (("harness", "claude"),))


def test_the_badge_of_a_dialog_the_hook_reported_is_shown_already() -> None:
    """The hook that posted the dialog's claim wrote the badge too: the record's request has an
    id and an opening time the badge never had, and asks the same, so reading the badge back
    claims nothing (a second claim about one dialog)."""
    roster = waiting()
    record = roster.record(roster.find(ROOT) or "")
    assert record is not None and record.pending is not None and record.pending["id"]
    assert badges.shows(badge(), record)


def test_a_badge_that_asks_something_else_or_says_another_word_is_new() -> None:
    roster = waiting()
    record = roster.record(roster.find(ROOT) or "")
    assert not badges.shows(badge(reason="Bash: rm -rf build"), record)
    assert not badges.shows(badge(reason=None), record)
    assert not badges.shows(badge("working", None), record)
    assert not badges.shows(badge(), None)


def test_a_badge_that_moved_from_done_to_idle_is_new_though_the_activity_is_idle_either_way() -> None:
    """A person looked at a finished pane (its badge went ✅ to 💤): the record's state must
    follow, or rosterd's faces would keep saying done while ``roost status`` says idle."""
    roster = Roster("test", "n0", lambda: 1_700_000_000.0, status_epoch=1)
    fields = {"harness": "claude"}
    roster.apply(Claim("hook", 1_700_000_000.0, process=ROOT, activity="done", event="Stop", fields=fields))
    record = roster.record(roster.find(ROOT) or "")
    assert record is not None and (record.activity, record.state) == ("idle", "done")
    assert badges.shows(badge("done", None), record)
    assert not badges.shows(badge("idle", None), record)
