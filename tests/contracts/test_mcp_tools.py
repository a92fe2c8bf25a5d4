"""The MCP tools table: the doc's rows are the server's tools, in order, with each tool's
input fields; a list row's fields are the ones the code picks from a record."""

from __future__ import annotations

from roost.faces.mcp.tools import BRIEF, TOOLS
from tests.contracts.tables import names, table

DOCUMENTED = table("MCP tools")


def test_the_table_is_the_tools_and_their_inputs() -> None:
    assert [row["tool"] for row in DOCUMENTED] == list(TOOLS)
    for row in DOCUMENTED:
        assert names(row["inputs"]) == list(TOOLS[row["tool"]].model.model_fields), row["tool"]


def test_a_found_session_has_the_fields_the_table_names() -> None:
    found = next(row for row in DOCUMENTED if row["tool"] == "session.find")
    assert names(found["answer"]) == list(BRIEF)
