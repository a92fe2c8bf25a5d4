"""The "Who may speak as a source" table: a row for every source, in precedence order, and the
ones it says ``POST /claim`` refuses are the ones the route refuses (the daemon's tests in
tests/api/test_routes.py and tests/runner/test_headless.py show it on both listeners)."""

from __future__ import annotations

from roost.faces.api.claims import NOT_POSTED
from roost.truth.roster.precedence import HOOK, SOURCES
from tests.contracts.tables import table

ROWS = table("Who may speak as a source")


def test_every_source_has_a_row_in_precedence_order() -> None:
    assert [row["source"] for row in ROWS] == list(SOURCES)


def test_the_refused_rows_are_the_routes_refusals_and_they_are_the_sources_above_hook() -> None:
    refused = [row["source"] for row in ROWS if row["over POST /claim"] == "refused"]
    assert refused == list(NOT_POSTED)
    assert refused == list(SOURCES[: SOURCES.index(HOOK)])
    accepted = {row["over POST /claim"] for row in ROWS if row["source"] not in refused}
    assert accepted == {"accepted", "accepted (the default)"}
