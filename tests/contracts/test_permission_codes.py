"""The permission refusals table: the codes rosterd answers with are exactly those the table
names, and a pending request's fields are the ones its shape gives."""

from __future__ import annotations

import ast
import inspect

from roost.actions import permission
from roost.truth.roster.pending import normalized
from tests.contracts.tables import table

ROWS = table("Answering a permission")


def _codes_raised() -> list[str]:
    tree = ast.parse(inspect.getsource(permission))
    return [
        keyword.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg == "code" and isinstance(keyword.value, ast.Constant)
    ]


def test_the_table_names_every_code_the_contract_raises() -> None:
    assert sorted(row["code"] for row in ROWS) == sorted(set(_codes_raised()))


def test_the_module_documents_the_same_codes() -> None:
    documented = permission.__doc__ or ""
    for row in ROWS:
        assert f"\n{row['code']} " in documented, row["code"]


def test_a_pending_request_has_the_fields_the_section_names() -> None:
    shaped = normalized({"summary": "Bash: ls"}, None, 0.0)
    assert sorted(shaped) == sorted(["kind", "id", "tool", "summary", "options", "opened_at", "answerable"])
