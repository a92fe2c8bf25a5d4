"""The rows of ``rosterd setup`` and ``doctor``, as docs/contracts.md tables them, are the
checklist's kinds: the same names in the same order, listed by setup, picked by default and
optional as the table says."""

from __future__ import annotations

from roost.faces.cli.rosterd.checklist import KINDS
from tests.contracts.tables import table

YES = {"yes": True, "no": False}


def test_the_table_is_the_checklist() -> None:
    rows = table("`rosterd setup` and `doctor` rows")
    assert [row["row"] for row in rows] == [kind.label.replace("{harness}", "HARNESS") for kind in KINDS]
    for row, kind in zip(rows, KINDS, strict=True):
        assert YES[row["setup"]] == kind.setup, row["row"]
        assert YES[row["picked"]] == (kind.setup and kind.default and kind.fix is not None), row["row"]
        assert YES[row["optional"]] == kind.optional, row["row"]
