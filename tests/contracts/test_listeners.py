"""The listeners table: the unix socket is the one a daemon cannot start without; the others
are the ones ``roost.daemon.listen`` lets be off (and the swarm's, which the mesh places)."""

from __future__ import annotations

from roost.daemon import listen
from tests.contracts.tables import table

ROWS = table("Listeners a daemon starts without")


def test_the_table_names_the_optional_listeners() -> None:
    assert {row["name"] for row in ROWS if row["essential"] == "no"} == {*listen.OPTIONAL, "swarm"}
    assert [row["name"] for row in ROWS if row["essential"] == "yes"] == ["unix"]
