"""The vocabularies table: one state's word in each face, as the code defines them."""

from __future__ import annotations

from roost.base import statusrow
from roost.faces.api import rows
from roost.pane.state import words
from roost.truth.roster import records
from tests.contracts.tables import table

ROWS = table("One state, three vocabularies")


def test_the_table_lists_every_internal_state_once() -> None:
    assert [row["internal"] for row in ROWS] == list(words.STATES)


def test_each_state_has_its_badge_web_word_and_activity() -> None:
    for row in ROWS:
        state = row["internal"]
        activity = words.ACTIVITY_OF_STATE[state]
        assert (row["pane badge"], row["rosterd activity"]) == (words.BADGES[state], activity), state
        assert row["web app / roost api"] == words.WEB_OF_ACTIVITY[activity], state


def test_a_person_reads_one_word_for_each_state_the_table_gives() -> None:
    assert {row["internal"]: row["a person reads"] for row in ROWS} == words.HUMAN
    assert len(set(words.HUMAN.values())) == len(words.STATES)


def test_a_record_says_its_state_in_the_internal_words() -> None:
    for row in ROWS:
        activity = row["rosterd activity"]
        assert words.state_of(row["internal"]) == row["internal"]
        assert words.state_of(activity) in {r["internal"] for r in ROWS if r["rosterd activity"] == activity}
    assert words.state_of(records.UNKNOWN) is None
    assert records.Record("n", "n1", "n1:1:1", 1, 1, 0.0).state is None


def test_the_other_modules_take_their_words_from_the_definition() -> None:
    assert records.ACTIVITY_OF_STATE is words.ACTIVITY_OF_STATE
    assert rows.STATE_OF_ACTIVITY is words.WEB_OF_ACTIVITY
    assert set(records.ACTIVITIES) == {*words.ACTIVITY_OF_STATE.values(), words.UNKNOWN}
    assert set(statusrow.STATES) == set(words.WEB_OF_ACTIVITY.values())
