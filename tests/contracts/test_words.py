"""The vocabularies table: one state's word in each face, as the code defines them."""

from __future__ import annotations

from roost import agentrow
from roost.api import rows
from roost.roster import records
from roost.state import words
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


def test_the_other_modules_take_their_words_from_the_definition() -> None:
    assert records.ACTIVITY_OF_STATE is words.ACTIVITY_OF_STATE
    assert rows.STATE_OF_ACTIVITY is words.WEB_OF_ACTIVITY
    assert set(records.ACTIVITIES) == {*words.ACTIVITY_OF_STATE.values(), words.UNKNOWN}
    assert set(agentrow.STATES) == set(words.WEB_OF_ACTIVITY.values())
